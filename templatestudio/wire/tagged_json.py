"""JSON-bodied calls after an opening literal: the readers and openings a declared shape derives.

``wire.shape.WireShape`` turns a declaration into calls of these; a format
module does not call them itself. Two bodies are read:

- ``read_json_call``: ``OPEN [head literals] JSON [CLOSE]``, where the JSON
  is one call object (``{"name": …, "arguments": {…}}``) or a list of them;
- ``read_named_json``: ``OPEN NAME_OPEN name NAME_CLOSE JSON-object CLOSE``
  (Functionary's ``<function=NAME>{…}</function>``).

Whitespace between the pieces is allowed in any amount. Literals declared
as refused right after the opener open a region only to refuse it with
their reason (a list where one object belongs, a code-interpreter action).

Not handled: a closer the JSON value does not reach (text between the JSON
and the closer is refused, never shown), names holding whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import chars, either, literal, run, sequence
from templatestudio.wire.base import SPACES, CallSyntaxError, Found, Pattern
from templatestudio.wire.jsonbody import call_from, calls_from, decode_at, skip_space

_WHITESPACE = re.compile(r"[ \t\r\n]")


def head_literals(head: str) -> tuple[str, ...]:
    """The literals a head (writer's text between the opener and the body) requires: its non-blank parts."""
    return tuple(head.split())


def json_opening(open_literal: str, head: tuple[str, ...], body: tuple[str, ...], refused: tuple[str, ...]) -> Pattern:
    """open, then whitespace, then the head's literals and a body start, or a refused literal."""
    steps: list[Pattern] = []
    for item in head:
        steps += [literal(item), SPACES]
    opens = sequence(*steps, either(*map(literal, body))) if steps else either(*map(literal, body))
    return sequence(literal(open_literal), SPACES, either(opens, *map(literal, refused)) if refused else opens)


def named_opening(open_literal: str, name_open: str, name_chars: str, name_close: str,
                  id_close: str | None = None) -> Pattern:
    """open NAME_OPEN name NAME_CLOSE [ID ID_CLOSE], then an object that opens with a key or closes at once, or a string.

    "{...}" in prose after such a tag does neither; a JSON string there opens a
    region only for the reader to refuse it.
    """
    head = _named_head(open_literal, name_open, name_chars, name_close)
    if id_close is not None:
        head += [run(chars(r"[^\s<>\[\]{}]"), at_least=1), literal(id_close), SPACES]
    return sequence(*head, either(sequence(literal("{"), SPACES, either(literal('"'), literal("}"))), literal('"')))


def named_body_start(open_literal: str, name_open: str, name_chars: str, name_close: str) -> Pattern:
    """open NAME_OPEN name NAME_CLOSE, then the JSON body's brace: how far a cut call's opening has come."""
    return sequence(*_named_head(open_literal, name_open, name_chars, name_close), literal("{"))


def _named_head(open_literal: str, name_open: str, name_chars: str, name_close: str) -> list[Pattern]:
    """The steps up to a named call's body: open, NAME_OPEN, the name, NAME_CLOSE, whitespace."""
    steps = [literal(open_literal)] + ([literal(name_open)] if name_open else [])
    return steps + [run(chars(name_chars), at_least=1), literal(name_close), SPACES]


def _past_head(region: str, index: int, head: tuple[str, ...], refused: tuple[tuple[str, str], ...]) -> int:
    """The offset of the body: past the head's literals, whitespace allowed; refused literals raise their reason."""
    for item, why in refused:
        if region.startswith(item, skip_space(region, index)):
            raise CallSyntaxError(why)
    for item in head:
        index = skip_space(region, index)
        if not region.startswith(item, index):
            raise CallSyntaxError(f"expected {item} at offset {index}")
        index += len(item)
    return skip_space(region, index)


def _close_at(region: str, after: int, close: str, close_optional: bool) -> None:
    """Nothing but whitespace and close (or, when optional, nothing) may follow the body at after."""
    after = skip_space(region, after)
    if close and region.startswith(close, after) and after + len(close) == len(region):
        return
    if (close_optional or not close) and after == len(region):
        return
    if not close:
        raise CallSyntaxError(f"unexpected text after the JSON value at offset {after}")
    raise CallSyntaxError(f"expected {close} after the call's JSON, at offset {after}")


def read_json_call(
    region: str,
    found: Found | None,
    *,
    open_literal: str,
    close: str,
    close_optional: bool,
    head: tuple[str, ...] = (),
    refused: tuple[tuple[str, str], ...] = (),
    listed: bool = False,
    name_key: str = "name",
    argument_keys: tuple[str, ...] = ("arguments",),
    string_arguments: bool = False,
    extras: dict[str, Callable[[object], bool]] | None = None,
    id_key: str | None = None,
) -> list[CallSpan]:
    """The call (or, listed, the calls) in region, which starts with open_literal."""
    start = _past_head(region, len(open_literal), head, refused)
    want = "[" if listed else "{"
    if not region.startswith(want, start):
        raise CallSyntaxError(f"no JSON {'list' if listed else 'object'} after {open_literal}{''.join(head)}")
    payload, after = decode_at(region, start, found)
    keys = {"name_key": name_key, "argument_keys": argument_keys, "string_arguments": string_arguments}
    if not listed:
        call, taken = call_from(payload, extras=extras, **keys)  # the call's own fault first, then the closer
        _close_at(region, after, close, close_optional)
        return [CallSpan(call, 0, len(region), taken.get(id_key) if id_key else None)]
    _close_at(region, after, close, close_optional)
    if not payload:
        raise CallSyntaxError("an empty list of calls")
    if extras:
        spans = []
        for item in payload:
            call, taken = call_from(item, extras=extras, **keys)
            spans.append(CallSpan(call, 0, len(region), taken.get(id_key) if id_key else None))
        return spans
    return [CallSpan(call, 0, len(region)) for call in calls_from(payload, **keys)]


def read_named_json(
    region: str,
    found: Found | None,
    *,
    open_literal: str,
    name_open: str,
    name_close: str,
    close: str,
    close_optional: bool,
    string_arguments: bool = False,
    id_close: str | None = None,
) -> list[CallSpan]:
    """The one call in region: open, name between name_open and name_close, a JSON object, close.

    id_close: the call's id follows name_close and ends at id_close (Mistral's
    ``NAME[CALL_ID]ID[ARGS]``); it holds no whitespace and comes back as the span's id.
    """
    name_start = len(open_literal) + len(name_open)
    name_end = region.find(name_close, name_start)  # the opening matched: the tag is whole
    if name_end == -1:
        raise CallSyntaxError(f"no {name_close} after the function name")
    name = region[name_start:name_end]
    if not name:
        raise CallSyntaxError("the function name is empty")
    if _WHITESPACE.search(name):
        raise CallSyntaxError(f"the function name {name!r} holds whitespace")
    start, call_id = skip_space(region, name_end + len(name_close)), None
    if id_close is not None:
        id_end = region.find(id_close, name_end + len(name_close))
        call_id = region[name_end + len(name_close) : id_end] if id_end != -1 else ""
        if not call_id or _WHITESPACE.search(call_id):
            raise CallSyntaxError(f"expected the call's id and {id_close} after {name_close}")
        start = skip_space(region, id_end + len(id_close))
    if region.startswith('"', start) and not string_arguments:
        raise CallSyntaxError(f"the arguments of {name!r} are a JSON string, not an object")
    arguments, after = decode_at(region, start, found)
    if not isinstance(arguments, dict):
        raise CallSyntaxError(f"the arguments of {name!r} must be a JSON object")
    after = skip_space(region, after)
    if (region.startswith(close, after) and after + len(close) == len(region)) or (
            close_optional and after == len(region)):
        return [CallSpan(ParsedToolCall(name, arguments), 0, len(region), call_id)]
    raise CallSyntaxError(f"expected {close} after the arguments of {name!r}, at offset {after}")

