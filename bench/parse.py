"""Parser throughput: each format's strict parser against transformers' parse_response.

For every format, two reply shapes are built at about 1 KB, 64 KB and 1 MB:

- one call:   a single call whose string argument carries the bulk (a tool
              that writes a document);
- many calls: the same small call repeated (for llama3-json joined by
              ";", for pythonic as one list), as many as fit.

Each reply is read by the format's parser (``FORMATS[name].parser.parse``)
and by transformers' ``parse_response`` with the format's response template
(``prefix=""``); the two must agree on the calls, or the row says so.
Throughput is the reply's size over the best of several timed runs.

The text is written here in each format's wire shape, as the templates
write it (tests/test_roundtrip_property.py checks that shape against the
real templates); the document text avoids the characters a response
template cannot read inside a string (see that test's READER_LIMITS).

Run from the repository root: python bench/parse.py
"""

from __future__ import annotations

import json

from transformers.utils.chat_parsing.response_parser import parse_response

from templatestudio.formats import FORMATS
from timing import best_seconds  # bench/timing.py, beside this script

SIZES = {"1 KB": 1_000, "64 KB": 64_000, "1 MB": 1_000_000}
PROSE = "The euro closed at 162.4 yen, up 0.3%; analysts said \"steady\" demand, not speculation. "


def write_call(fmt: str, name: str, arguments: dict) -> str:
    """One call in fmt's wire shape; arguments hold strings and ints only."""
    if fmt == "hermes":
        return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n</tool_call>"
    if fmt == "fenced-json":
        return f"```json\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n```"
    if fmt == "llama3-json":
        return json.dumps({"name": name, "parameters": arguments}, ensure_ascii=False)
    if fmt == "mistral":
        return json.dumps([{"name": name, "arguments": arguments}], ensure_ascii=False)
    if fmt == "qwen-xml":
        body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in arguments.items())
        return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"
    if fmt == "gemma4":
        body = ",".join(
            f'{k}:<|"|>{v}<|"|>' if isinstance(v, str) else f"{k}:{v}" for k, v in sorted(arguments.items())
        )
        return f"<|tool_call>call:{name}{{{body}}}<tool_call|>"
    if fmt == "pythonic":
        return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in arguments.items()) + ")"
    raise ValueError(fmt)


def join_calls(fmt: str, calls: list[str]) -> str:
    if fmt == "mistral":  # one marker, one list
        return "[TOOL_CALLS][" + ", ".join(call[1:-1] for call in calls) + "]"
    if fmt == "llama3-json":
        return "; ".join(calls)
    if fmt == "pythonic":
        return "[" + ", ".join(calls) + "]"
    return "\n".join(calls)


def one_call(fmt: str, size: int) -> tuple[str, int]:
    # pythonic's response template closes a call at the first ")": keep them out of the text.
    prose = PROSE.replace("(", "").replace(")", "")
    document = (prose * (size // len(prose) + 1))[: max(size - 120, 10)]
    return join_calls(fmt, [write_call(fmt, "write_report", {"title": "Weekly FX", "body": document, "pages": 3})]), 1


def many_calls(fmt: str, size: int) -> tuple[str, int]:
    call = write_call(fmt, "get_exchange_rate", {"base": "EUR", "quote": "JPY", "days": 7})
    count = max(1, size // (len(call) + 2))
    return join_calls(fmt, [call] * count), count


def by_parser(fmt: str, text: str) -> list:
    return [(c.name, c.arguments) for c in FORMATS[fmt].parser.parse(text)]


def by_response_template(fmt: str, text: str) -> list:
    message = parse_response(text, FORMATS[fmt].response_template, prefix="")
    return [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls", [])]


def typed(calls: list) -> list:
    """Text-valued formats return "3" where the call said 3: compare as text."""
    return [(name, {k: str(v) for k, v in args.items()}) for name, args in calls]


def main() -> None:
    print("throughput in MB/s (higher is better); best run; 1 MB = 10^6 characters")
    header = f"{'format':<12} {'shape':<10} {'size':<6} {'calls':>6} {'parser':>9} {'parse_response':>15} {'speed-up':>9}  agree"
    print(header)
    print("-" * len(header))
    for fmt in FORMATS:
        for shape_name, shape in (("one call", one_call), ("many calls", many_calls)):
            for size_name, size in SIZES.items():
                text, count = shape(fmt, size)
                mb = len(text) / 1e6
                ours = by_parser(fmt, text)
                theirs = by_response_template(fmt, text)
                agree = "yes" if typed(ours) == typed(theirs) and len(ours) == count else (
                    f"NO ({len(ours)} vs {len(theirs)} calls of {count})"
                )
                parser_time = best_seconds(lambda: FORMATS[fmt].parser.parse(text), cap=200)
                template_time = best_seconds(lambda: by_response_template(fmt, text), cap=200)
                print(
                    f"{fmt:<12} {shape_name:<10} {size_name:<6} {count:>6} {mb / parser_time:>9.1f} "
                    f"{mb / template_time:>15.1f} {template_time / parser_time:>8.1f}x  {agree}"
                )


if __name__ == "__main__":
    main()
