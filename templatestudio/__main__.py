"""Command line: ``python -m templatestudio table``.

``table`` prints the course's family table (notebook 12) for the families in
``families.py``, loading each tokenizer through the Hugging Face cache.
"""

from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m templatestudio")
    commands = parser.add_subparsers(dest="command", required=True)
    table = commands.add_parser("table", help="print the course's family table")
    table.set_defaults(run=cmd_table)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
