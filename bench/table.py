"""The four-family table end to end: the tutorial's way against ``check``.

The tutorial's way (``python -m templatestudio table``) loads each family's
full tokenizer (vocabulary included) through ``AutoTokenizer`` and renders
with it. ``python -m templatestudio check`` reads only each repo's
tokenizer_config.json and chat_template.jinja and probes the template.
Both run from a warm Hugging Face cache, offline.

Two measurements each, best of --runs:

- end to end: the command as a user types it, in a fresh interpreter
  (imports included);
- in process: the work alone, after imports (``family_rows()`` against
  ``check_row`` over ``load_chat_templates``), caches cleared between runs.

Run from the repository root: python bench/table.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def best_of(runs: int, action) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def command(*args: str):
    def run() -> None:
        subprocess.run([sys.executable, "-m", "templatestudio", *args], env=ENV, check=True, capture_output=True)

    return run


def in_process_table() -> None:
    from templatestudio.__main__ import family_rows

    family_rows()


def in_process_check() -> None:
    from templatestudio.__main__ import check_row
    from templatestudio.families import TABLE_FAMILIES
    from templatestudio.probe import _probe
    from templatestudio.templates import load_chat_templates

    _probe.cache_clear()  # probe results are cached per template: measure the probe itself
    for target in TABLE_FAMILIES.values():
        for template in load_chat_templates(target):
            check_row(template)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    os.environ.update(ENV)

    command("table")()  # warm the cache and the OS's file cache once
    command("check")()
    table_cmd = best_of(runs, command("table"))
    check_cmd = best_of(runs, command("check"))

    in_process_table()  # imports and first-call set-up, not measured
    in_process_check()
    table_work = best_of(runs, in_process_table)
    check_work = best_of(runs, in_process_check)

    print(f"four-family table, warm cache, best of {runs}")
    print(f"{'':<26}{'table (full tokenizers)':>24}{'check (template only)':>24}{'ratio':>8}")
    print(f"{'end to end (fresh python)':<26}{table_cmd:>23.2f}s{check_cmd:>23.2f}s{table_cmd / check_cmd:>7.1f}x")
    print(f"{'in process (after imports)':<26}{table_work:>23.2f}s{check_work:>23.2f}s{table_work / check_work:>7.1f}x")


if __name__ == "__main__":
    main()
