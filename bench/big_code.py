"""Issue 23's rows alone: one call with a 1 MB string argument of source code, read whole and streamed.

    python bench/big_code.py

Prints the table and the goals of ``measure.code_call`` (the same rows
``bench/run.py`` prints among the others) in seconds, not the full run's minutes.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]

import measure  # noqa: E402
import run  # noqa: E402


def main() -> int:
    results = measure.Results()
    measure.code_call(results, measure.FULL)
    lines = run.code_table(results.tables, measure.FULL) + [""]
    lines += run.table(["goal", "format", "measured", "goal", "met"],
                       [[g.what, g.format, f"{g.measured:,.2f}", f"≥ {g.target:g}", "yes" if g.met() else "NO"]
                        for g in results.goals])
    print(f"load average: {run._load()}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
