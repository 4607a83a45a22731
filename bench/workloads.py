"""The benchmark's inputs, built from the format registry: nothing here names a format.

Every reply is written with the format's own ``write_call``. Calls are
joined the first way (``JOINERS``) that this package's reader and, where the
format has one, its response template both read back whole, so the peers
read the same text; a format whose response template reads none of them
(Mistral's template reads the list shape, ``write_call`` writes
``NAME[ARGS]``) is joined the first way the reader reads.

A format is *JSON-bodied* when its written call holds ``json.dumps`` of the
arguments: those are the readers the issue-16 goals compare with
``json.loads``. Arguments are strings only, so text-valued wires
(``string_arguments``) and typed ones give the same answer and no schema is
needed to compare them; the document text avoids every character a
declared limit (wire or response template) names.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from transformers.utils.chat_parsing.response_parser import parse_response

from templatestudio.calls import ParsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import ToolCallEvent
from templatestudio.formats import FORMATS, Format

PROSE = (
    "The euro closed at 162.4 yen, up 0.3 percent, and analysts called the demand steady, "
    "not speculative. Rates moved a little overnight against the dollar and the pound. "
)
PLAIN = "The euro closed higher against the yen and the dollar overnight "
# Source code as a model writes it into an argument: quotes, escapes and backslashes, which JSON escapes
# again (issue 23: a string reader that pays per quote or per backslash shows here, not on prose).
CODE = (
    'def greet(name):\n'
    '    print("Hello, \\"%s\\"!\\n" % name)  # a quoted name\n'
    '    path = "C:\\\\Users\\\\" + name\n'
    '    return {"greeting": \'hi\', "path": path}\n\n'
)
SMALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
Calls = list[tuple[str, dict]]


def _merge_lists(pieces: list[str]) -> str | None:
    """Calls that are items of one list ("[a(), b()]"): one list holding every item."""
    if all(piece.startswith("[") and piece.endswith("]") for piece in pieces):
        return "[" + ", ".join(piece[1:-1] for piece in pieces) + "]"
    return None


JOINERS = (("newline", "\n".join), ("'; '", "; ".join), ("one list", _merge_lists))


def read_ours(text: str, fmt: Format) -> Calls:
    return [(e.call.name, e.call.arguments) for e in read_events(text, fmt) if isinstance(e, ToolCallEvent)]


def read_response_template(text: str, fmt: Format) -> Calls:
    message = parse_response(text, fmt.response_template, prefix="")
    calls = message.get("tool_calls", [])
    if not all(isinstance(call, dict) and isinstance(call.get("function"), dict) for call in calls):
        raise ValueError(f"the response template gave tool_calls that are not calls: {str(calls)[:80]}")
    return [(call["function"]["name"], call["function"].get("arguments")) for call in calls]


def json_bodied(fmt: Format) -> bool:
    return json.dumps(SMALL.arguments, ensure_ascii=False) in fmt.write_call(SMALL)


def _reads_all(read, text: str | None, fmt: Format, count: int) -> bool:
    if text is None:
        return False
    try:
        return len(read(text, fmt)) == count
    except Exception:  # noqa: BLE001 - a reader that raises does not read it
        return False


@functools.cache
def joiner(fmt: Format) -> tuple[str, object]:
    """The (name, join) way calls of fmt follow each other in one reply."""
    pieces = [fmt.write_call(SMALL)] * 3
    ours = [(name, join) for name, join in JOINERS if _reads_all(read_ours, join(pieces), fmt, 3)]
    if not ours:
        raise ValueError(f"{fmt.name}: no way of joining calls that its own reader reads back")
    if fmt.response_template is not None:
        for name, join in ours:
            if _reads_all(read_response_template, join(pieces), fmt, 3):
                return name, join
    return ours[0]


def document(fmt: Format, size: int) -> str:
    """About size characters of prose that no declared limit of fmt names."""
    for unit in (PROSE, PLAIN):
        text = (unit * (size // len(unit) + 1))[:size]
        arguments = {"title": "Weekly FX", "body": text}
        if not fmt.limits_for(arguments, "wire") and not fmt.limits_for(arguments, "response template"):
            return text
    raise ValueError(f"{fmt.name}: every document text hits a declared limit")


@dataclass(frozen=True)
class Reply:
    """One workload: the text, the calls in it, and the JSON of the arguments alone (one call)."""

    format: Format
    text: str
    calls: Calls
    payload: str | None = None  # json.dumps of the single call's arguments


def one_big_call(fmt: Format, size: int, code: bool = False) -> Reply:
    """One call whose string argument carries about size characters (of prose, or with code of source code)."""
    body = (CODE * (size // len(CODE) + 1))[:size] if code else document(fmt, size)
    arguments = {"title": "Weekly FX", "body": body}
    if code and (fmt.limits_for(arguments, "wire") or fmt.limits_for(arguments, "response template")):
        raise ValueError(f"{fmt.name}: the code text hits a declared limit")
    call = ParsedToolCall("write_report", arguments)
    return Reply(fmt, fmt.write_call(call), [(call.name, arguments)], json.dumps(arguments, ensure_ascii=False))


def small_calls(fmt: Format, size: int) -> Reply:
    """As many small calls as fit in about size characters, joined as the format joins them."""
    one = fmt.write_call(SMALL)
    count = max(1, size // (len(one) + 2))
    _, join = joiner(fmt)
    return Reply(fmt, join([one] * count), [(SMALL.name, SMALL.arguments)] * count)


def held_opening(fmt: Format, size: int) -> str:
    """A call opener followed by size spaces: text the stream must hold while it cannot tell."""
    return fmt.openers[0].literal + " " * size


def prose(size: int) -> str:
    return (PROSE * (size // len(PROSE) + 1))[:size]


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def formats() -> list[Format]:
    return list(FORMATS.values())
