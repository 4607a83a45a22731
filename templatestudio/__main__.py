"""Command line: ``python -m templatestudio table``, ``... check`` and ``... corpus fetch``.

``table`` prints the course's family table (notebook 12) for the families in
``templatestudio.families``, loading each tokenizer through the Hugging Face
cache.

``check REPO_ID|DIR|FILE.jinja ...`` probes chat templates for their
tool-call format (``templatestudio.detect``), one row per template. It reads
only the chat template and tokenizer config, never the vocabulary or the
weights. With no target it checks the course's families. Templates are code
from strangers, so each probe runs in a child process killed at
``--deadline`` seconds and capped at ``--memory-limit`` MiB
(``templatestudio.sandbox``); a template stopped that way gets its row, a
line on stderr and exit status 1. Where no registered format reads the
call, the derivation runs in a sandbox of its own with the same deadline
(so one template may take up to twice ``--deadline``), and its stop is
reported the same way.

``corpus fetch [--dest DIR] [--base-url URL] [--jobs N] [--timeout SECONDS]``
downloads the template corpus from the public sources the project lists
(``templatestudio.corpus_fetch``: repository, path, commit and sha256 of each
file), verifies each file's size and sha256, and writes it where
``templatestudio.corpus`` reads it (``corpus_dir()`` by default). It ends with
one line: how many templates are in place, or which failed and why (status 1).

``vllm-plugin`` prints the path of the file to pass to vLLM's
``--tool-parser-plugin`` (``templatestudio.integrations``; README, "Serving
with vLLM").

Every bad input gets one line and a non-zero exit, never a traceback: an
option value that is not a plain decimal number in range (``inf``, ``nan``,
``1e-9`` MiB, ``1e30`` MiB) is argparse's usage error (status 2); a path
that does not exist ("no such file or directory: X", for anything that
cannot be a Hub repo id), a folder without templates, an empty, binary,
non-UTF-8 or unreadable file, a broken ``tokenizer_config.json`` and a
template Jinja cannot parse each get a line on stderr (status 1), and the
other targets are still checked. A template that parses but raises when
rendered is a row ("none: template error: ERROR — what to do"), not a failure.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from templatestudio.corpus_fetch import BASE_URL_ENV, DEFAULT_BASE_URL, DEFAULT_JOBS, DEFAULT_TIMEOUT
from templatestudio.sandbox import DEFAULT_DEADLINE, DEFAULT_MEMORY_LIMIT, MAX_DEADLINE

STOPPED = "none: stopped by the sandbox"
# The probe's error for a template Jinja cannot even parse (the same on every shape).
SYNTAX_ERROR = "TemplateSyntaxError: "
# --memory-limit is in MiB: at least one, at most 2**40 (an exbibyte, above any machine).
MIN_MEMORY_MIB, MAX_MEMORY_MIB = 1, 2**40


def family_rows():
    from templatestudio.compare import tool_support
    from templatestudio.families import TABLE_FAMILIES
    from templatestudio.rates import QUESTION, get_exchange_rate
    from templatestudio.render import load_tokenizer
    from templatestudio.tools import tool_schema

    tools = [tool_schema(get_exchange_rate)]
    return [
        tool_support(family, load_tokenizer(model_id), QUESTION, tools)
        for family, model_id in TABLE_FAMILIES.items()
    ]


def cmd_table(args: argparse.Namespace) -> int:
    from templatestudio.compare import format_table

    print(format_table(family_rows()))
    print()
    print("Next: open the course with `make lab` (JupyterLab on notebooks/),")
    print("starting at notebooks/00_setup.ipynb.")
    return 0


def check_row(
    template, *, deadline: float | None = None, memory_limit: int | None = DEFAULT_MEMORY_LIMIT
) -> dict:
    """One template's probe as the row ``check`` prints (and ``--json`` emits).

    With a deadline the probe runs sandboxed (see ``probe_template``).
    """
    from templatestudio.detect import derived_shape
    from templatestudio.probe import probe_template

    probe = probe_template(template, deadline=deadline, memory_limit=memory_limit)
    fmt, declaration, error = probe.format, None, probe.error
    stopped = probe.stopped
    if fmt is None and probe.call_survives and not probe.ambiguous and not probe.stopped:
        shape, fmt = derived_shape(template, deadline=deadline, memory_limit=memory_limit)
        declaration = shape.wire.source() if shape.wire is not None else None
        underived = shape.refused
        if shape.stopped is not None:  # the derivation's own sandbox stopped it (it gets the deadline too)
            stopped, error = True, shape.stopped
    if stopped:
        parse_with = STOPPED
    elif template.response_template is not None and error is None:
        # The model's own parser, but only for a template that renders: an error is the row's news.
        parse_with = "response template"
    elif fmt is not None and fmt.derived_from:
        parse_with = "derived format (its declaration is printed below the table)"
    elif fmt is not None:
        parse_with = f"{fmt.name} parser"
    elif probe.call_survives and not probe.ambiguous:
        parse_with = f"none: {probe.reason}; none derived: {underived}"
    else:  # an error comes with what it means and what to do (probe.reason)
        parse_with = f"none: {probe.reason}"
    return {
        "template": template.name,
        "renders_tools": probe.renders_tools,
        "call_survives": probe.call_survives,
        "format": fmt.name if fmt else None,
        "parse_with": parse_with,
        "text_values": list(probe.text_values),
        "error": error,
        "declaration": declaration,
    }


def format_check_table(rows: list[dict]) -> str:
    width = max([len("template"), *(len(row["template"]) for row in rows)])
    lines = [f"{'template':<{width}} {'tools':<6} {'call':<6} {'format':<12} parse with"]
    for row in rows:
        fmt = row["format"] or "-"
        lines.append(
            f"{row['template']:<{width}} {row['renders_tools']!s:<6} "
            f"{row['call_survives']!s:<6} {fmt:<12} {row['parse_with']}"
        )
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace) -> int:
    from templatestudio.templates import TemplateLoadError, TemplateNotFound, chat_template_loads

    targets = args.targets
    if not targets:
        from templatestudio.families import TABLE_FAMILIES

        targets = list(TABLE_FAMILIES.values())
    rows, failures = [], []
    memory_limit = int(args.memory_limit * 2**20)
    # A folder of .jinja files is loaded file by file: one file that cannot be loaded is its own
    # line on stderr, and the others still get their rows.
    for target, load in [item for target in targets for item in chat_template_loads(target)]:
        try:
            templates = load()
        except (TemplateLoadError, TemplateNotFound) as error:
            failures.append(_one_line(error))  # already names the file and says why
            continue
        except Exception as error:  # noqa: BLE001 - report every target, then fail
            kind = type(error).__name__
            failures.append(f"{target}: cannot load a chat template ({kind}: {_one_line(error)})")
            continue
        for template in templates:
            row = check_row(template, deadline=args.deadline, memory_limit=memory_limit)
            rows.append(row)
            if row["parse_with"] == STOPPED:
                # The error is "TemplateTimeout: NAME: ..."; stderr lines start with the name.
                failures.append(row["error"].split(": ", 1)[1])
            elif (row["error"] or "").startswith(SYNTAX_ERROR):
                reason = row["error"][len(SYNTAX_ERROR) :]
                failures.append(f"{template.name}: not a Jinja template (syntax error: {reason})")
    if args.json:
        print(json.dumps({"templates": rows, "failures": failures}, indent=2))
    else:
        if rows:
            print(format_check_table(rows))
        for row in rows:
            if row["declaration"]:
                print(f"\n{row['template']}: no registered format reads its calls; derived and round-tripped:")
                print(row["declaration"])
        for failure in failures:
            print(failure, file=sys.stderr)
    return 1 if failures else 0


def cmd_vllm_plugin(args: argparse.Namespace) -> int:
    from templatestudio.integrations import plugin_path

    print(plugin_path())
    return 0


def cmd_corpus_fetch(args: argparse.Namespace) -> int:
    from templatestudio.corpus import corpus_dir
    from templatestudio.corpus_fetch import fetch_corpus

    dest = args.dest if args.dest is not None else corpus_dir()
    try:
        report = fetch_corpus(dest, base_url=args.base_url, jobs=args.jobs, timeout=args.timeout)
    except (ValueError, OSError) as error:  # a bad base URL, a destination that cannot be written
        print(f"corpus: nothing fetched into {dest}: {_one_line(error)}", file=sys.stderr)
        return 1
    print(report.line(), file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 1


def _one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


# Plain decimal notation only: float() would also take "inf", "nan", "1_0" and non-ASCII digits.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number_between(low: float, high: float, unit: str, *, low_included: bool):
    """An argparse type: a decimal number in the range, else one line saying what is expected."""
    lowest = f"at least {low:,}" if low_included else f"above {low:,}"
    expected = f"must be a number of {unit} {lowest} and at most {high:,}"

    def parse(text: str) -> float:
        stripped = text.strip()
        value = float(stripped) if _DECIMAL.fullmatch(stripped) else math.nan
        in_range = (value >= low if low_included else value > low) and value <= high
        if not (math.isfinite(value) and in_range):
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}")
        return value

    parse.__name__ = unit  # what argparse names the type in its own messages
    return parse


deadline_seconds = _number_between(0, MAX_DEADLINE, "seconds", low_included=False)
memory_mib = _number_between(MIN_MEMORY_MIB, MAX_MEMORY_MIB, "MiB", low_included=True)
MAX_JOBS = 64


def job_count(text: str) -> int:
    """An argparse type: a whole number of parallel downloads from 1 to MAX_JOBS."""
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit() and 1 <= int(stripped) <= MAX_JOBS):
        raise argparse.ArgumentTypeError(f"must be a whole number of downloads from 1 to {MAX_JOBS}, got {text!r}")
    return int(stripped)


job_count.__name__ = "downloads"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m templatestudio")
    commands = parser.add_subparsers(dest="command", required=True)
    table = commands.add_parser("table", help="print the course's family table")
    table.set_defaults(run=cmd_table)
    check = commands.add_parser(
        "check", help="find the tool-call format of chat templates (Hub repo ids, folders, .jinja files)"
    )
    check.add_argument(
        "targets", nargs="*", help="Hub repo id, model folder, folder of .jinja files or .jinja file"
    )
    check.add_argument("--json", action="store_true", help="print JSON instead of a table")
    check.add_argument(
        "--deadline",
        type=deadline_seconds,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help=f"stop a template whose probe takes longer (default {DEFAULT_DEADLINE:g})",
    )
    check.add_argument(
        "--memory-limit",
        type=memory_mib,
        default=DEFAULT_MEMORY_LIMIT / 2**20,
        metavar="MIB",
        help=f"memory a template's probe may add (default {DEFAULT_MEMORY_LIMIT // 2**20})",
    )
    check.set_defaults(run=cmd_check)
    corpus = commands.add_parser("corpus", help="the template corpus the survey notebooks and tests read")
    corpus_commands = corpus.add_subparsers(dest="corpus_command", required=True)
    fetch = corpus_commands.add_parser(
        "fetch", help="download the corpus templates from their listed public sources and verify each sha256"
    )
    fetch.add_argument(
        "--dest", type=Path, default=None, metavar="DIR",
        help="where to write it (default: where templatestudio.corpus looks, see corpus_dir())",
    )
    fetch.add_argument(
        "--base-url", default=None, metavar="URL",
        help=f"serves {{repo}}/{{commit}}/{{path}} (default ${BASE_URL_ENV}, else {DEFAULT_BASE_URL})",
    )
    fetch.add_argument(
        "--jobs", type=job_count, default=DEFAULT_JOBS, metavar="N",
        help=f"downloads at once (default {DEFAULT_JOBS})",
    )
    fetch.add_argument(
        "--timeout", type=deadline_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help=f"give up on a request after this long (default {DEFAULT_TIMEOUT:g})",
    )
    fetch.set_defaults(run=cmd_corpus_fetch)
    plugin = commands.add_parser(
        "vllm-plugin", help="print the path to pass to vLLM's --tool-parser-plugin (see README)"
    )
    plugin.set_defaults(run=cmd_vllm_plugin)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
