"""Command line: ``python -m templatestudio table`` and ``... check``.

``table`` prints the course's family table (notebook 12) for the families in
``families.py``, loading each tokenizer through the Hugging Face cache.

``check REPO_ID|DIR|FILE.jinja ...`` probes chat templates for their
tool-call format (``templatestudio.detect``), one row per template. It reads
only the chat template and tokenizer config, never the vocabulary or the
weights. With no target it checks the course's families.
"""

from __future__ import annotations

import argparse
import json
import sys


def family_rows():
    from families import FAMILIES, GEMMA4
    from rates import QUESTION, get_exchange_rate
    from templatestudio.compare import tool_support
    from templatestudio.render import load_tokenizer
    from templatestudio.tools import tool_schema

    tools = [tool_schema(get_exchange_rate)]
    return [
        tool_support(family, load_tokenizer(model_id), QUESTION, tools)
        for family, model_id in [*FAMILIES.items(), ("gemma4", GEMMA4)]
    ]


def cmd_table(args: argparse.Namespace) -> int:
    from templatestudio.compare import format_table

    print(format_table(family_rows()))
    print()
    print("Next: open the course with `make lab` (JupyterLab on notebooks/),")
    print("starting at notebooks/01_tool_schema.ipynb.")
    return 0


def check_row(template) -> dict:
    """One template's probe as the row ``check`` prints (and ``--json`` emits)."""
    from templatestudio.detect import probe_template

    probe = probe_template(template)
    if template.response_template is not None:
        parse_with = "response template"
    elif probe.format is not None:
        parse_with = f"{probe.format.name} parser"
    elif probe.error is not None:
        parse_with = "none: the template errors"
    else:
        parse_with = f"none: {probe.reason}"
    return {
        "template": template.name,
        "renders_tools": probe.renders_tools,
        "call_survives": probe.call_survives,
        "format": probe.format.name if probe.format else None,
        "parse_with": parse_with,
        "text_values": list(probe.text_values),
        "error": probe.error,
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
    from templatestudio.detect import load_chat_templates

    targets = args.targets
    if not targets:
        from families import FAMILIES, GEMMA4

        targets = [*FAMILIES.values(), GEMMA4]
    rows, failures = [], []
    for target in targets:
        try:
            templates = load_chat_templates(target)
        except Exception as error:  # noqa: BLE001 - report every target, then fail
            failures.append(f"{target}: cannot load a chat template ({type(error).__name__}: {error})")
            continue
        rows.extend(check_row(template) for template in templates)
    if args.json:
        print(json.dumps({"templates": rows, "failures": failures}, indent=2))
    else:
        if rows:
            print(format_check_table(rows))
        for failure in failures:
            print(failure, file=sys.stderr)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
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
    check.set_defaults(run=cmd_check)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
