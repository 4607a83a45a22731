"""Trusting a derived shape: it must read back every call the template rendered, and write each back.

``refusal_of_round_trip`` runs the derived format's own reader (the engine,
as every reader does) over each round-trip render (``derive_renders``): the
calls must come back exactly and nothing but whitespace beside them, and
the writer, given a single call as read, must write the very text the
template wrote. Where the values are text on the wire (XML-style
parameters), a value counts as read back when it is the value's JSON or
Python spelling (the template's choice, kept by the reader and written
back as read); the tool's schema types it later, as for a registered
format. A declared reasoning pair must split
a reasoning block written with it from the call after it.

Where the declaration says where a call's id is written, the ids the
template was given must be read back, and the writer writes the one read.

Not handled: values holding the shape's own boundaries where the wire
escapes nothing (no render tries them).
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.derive_renders import Renders
from templatestudio.derive_reasoning import without_reasoning
from templatestudio.engine import read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent
from templatestudio.formats import Format
from templatestudio.values import same_json_value, spellings
from templatestudio.wire.shape import WireShape

__all__ = ["refusal_of_round_trip"]


def _same_call(got: ParsedToolCall, expected: ParsedToolCall, wire: WireShape) -> bool:
    if got.name != expected.name or got.arguments.keys() != expected.arguments.keys():
        return False
    if not wire.values_are_text:
        return same_json_value(got.arguments, expected.arguments)
    # A string is written as itself; anything else as its JSON or Python spelling (the template's choice).
    return all(got.arguments[key] == value if isinstance(value, str) else got.arguments[key] in
               spellings(value, ensure_ascii=False) for key, value in expected.arguments.items())


def _read(text: str, fmt: Format) -> tuple[list[ParsedToolCall], str, str, list[str | None]]:
    """(calls, content, reasoning, ids) as the format's machine reads text."""
    events = read_events(text, fmt)
    calls = [event.call for event in events if isinstance(event, ToolCallEvent)]
    ids = [event.id for event in events if isinstance(event, ToolCallEvent)]
    content = "".join(event.text for event in events if isinstance(event, TextDelta))
    reasoning = "".join(event.text for event in events if isinstance(event, ReasoningDelta))
    return calls, content, reasoning, ids


def reply_of(text: str, wire: WireShape) -> str:
    """The reply a model writes for a rendered call turn: no leading reasoning block, cut at a stop token.

    A server ends the reply at the stop token and hands the prompt's open
    reasoning block to the reasoning split; both come from the declaration.
    """
    text = without_reasoning(text, wire.reasoning)
    for stop in wire.stop_tokens:
        at = text.rfind(stop)
        if at != -1 and not text[at + len(stop) :].strip():
            text = text[:at]
    return text


def _refusal_of_render(calls: tuple[ParsedToolCall, ...], text: str, wire: WireShape, fmt: Format,
                       ids: tuple[str, ...]) -> str | None:
    text = reply_of(text, wire)
    read = _read_back(text, fmt, f"the template's own render of {list(calls)!r}")
    if isinstance(read, str):
        return read
    got, beside, got_ids = read
    if len(got) != len(calls) or not all(_same_call(a, b, wire) for a, b in zip(got, calls)):
        return f"its reader reads {got!r} where the template wrote {list(calls)!r}"
    if beside:
        return f"its reader leaves {beside[:80]!r} beside the calls"
    written_ids = _id_slot(wire)
    if written_ids and got_ids != list(ids[: len(calls)]):
        return f"its reader reads the ids {got_ids} where the template wrote {list(ids[: len(calls)])}"
    # Written back from what was read: a text-valued wire's values are the template's own spelling.
    written = fmt.write_call(got[0], got_ids[0]) if written_ids else fmt.write_call(got[0])
    if len(calls) == 1 and written.strip() != text.strip():
        return f"its writer writes {written!r} where the template wrote {text.strip()!r}"
    return None


def _read_back(text: str, fmt: Format, written_by: str) -> tuple[list[ParsedToolCall], str, list] | str:
    """(calls, text read beside them, ids) as the derived reader reads text, or why it refuses text."""
    try:
        got, content, reasoning, got_ids = _read(text, fmt)
    except UnparsedToolCall as error:
        return f"its reader refuses {written_by}: {error}"
    return got, content.strip() or reasoning, got_ids


def _id_slot(wire: WireShape) -> bool:
    """Whether the declaration says where a call's id is written."""
    return wire.call_id is not None or getattr(wire.arguments, "id_key", None) is not None


# Names a tool may have (OpenAI's rule: letters, digits, _ and -), beyond the probe's own two: the
# derived reader must read back whatever name its writer writes, not only the names the template was shown.
TRIAL_NAMES = ("get_exchange_rate", "search-web", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz",
               "tool_0123456789", "x")


def _refusal_of_names(calls: tuple[ParsedToolCall, ...], fmt: Format) -> str | None:
    """Why the derived format cannot read back a call it writes under one of ``TRIAL_NAMES``; None when it can."""
    for name in TRIAL_NAMES:
        written = fmt.write_call(ParsedToolCall(name, calls[0].arguments))
        read = _read_back(written, fmt, f"its writer's call named {name!r}")
        if isinstance(read, str):
            return read
        got, beside, _ = read
        if [item.name for item in got] != [name] or beside:
            return (f"its reader reads {[item.name for item in got]} and text {beside[:60]!r} in its writer's "
                    f"call named {name!r} ({written[:80]!r})")
    return None


def refusal_of_round_trip(wire: WireShape, renders: Renders, fmt: Format) -> str | None:
    """Why the derived shape cannot be trusted with this template's calls; None when it round-trips.

    Besides the template's renders, the format's own writer and reader must
    agree on calls under ``TRIAL_NAMES`` (a name closed by a word such as
    ``args`` cannot hold that word's first letter, so a name with an ``a``
    would otherwise be written and then not read).
    """
    for calls, text in renders.round_trip:
        refused = _refusal_of_render(calls, text, wire, fmt, renders.ids)
        if refused is not None:
            return refused
    refused = _refusal_of_names(renders.round_trip[0][0], fmt)
    if refused is not None:
        return refused
    if wire.reasoning is not None:
        call = renders.round_trip[0][0][0]
        text = f"{wire.reasoning.open}plan the lookup{wire.reasoning.close}{fmt.write_call(call)}"
        got, content, reasoning, _ = _read(text, fmt)
        if reasoning.strip() != "plan the lookup" or len(got) != 1 or content.strip():
            return f"its reasoning pair {wire.reasoning_pair!r} does not split a reasoning block from a call"
    return None
