"""A section of calls between two special tokens, each call between two more: DeepSeek's and Kimi's shape.

``read_section`` reads ``OPEN ws (CALL_OPEN call ws)* CLOSE`` where each
format reads its own call body (``read_call``) from just past CALL_OPEN
and says where the call ended. Whitespace between the tokens is allowed
(vLLM's DeepSeek V3.1 template writes stray indentation there); anything
else is refused. Every call of a section shares the section's span, so no
whitespace inside the section comes back as text.

``json_object_at`` decodes the arguments object of one call.
"""

from __future__ import annotations

from collections.abc import Callable

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.formats.base import CallSyntaxError
from templatestudio.formats.jsonbody import decode_at, skip_space

CallReader = Callable[[str, int], tuple[ParsedToolCall, str | None, int]]


def read_section(
    region: str,
    open_literal: str,
    close_literal: str,
    call_open: str,
    read_call: CallReader,
    *,
    close_optional: bool = False,
) -> list[CallSpan]:
    """The calls in region, which starts with open_literal.

    read_call(region, index) reads one call from index (just past
    call_open) and returns (call, id or None, offset past the call's own
    closer). close_optional accepts a section whose closer is missing when
    the region (the rest of the reply) ends right after a whole call.
    """
    position = skip_space(region, len(open_literal))
    spans = []
    while region.startswith(call_open, position):
        call, call_id, position = read_call(region, position + len(call_open))
        spans.append(CallSpan(call, 0, len(region), call_id))
        position = skip_space(region, position)
    if region.startswith(close_literal, position) and position + len(close_literal) == len(region):
        return spans
    if close_optional and spans and position == len(region):
        return spans
    if region.startswith(close_literal, position):
        raise CallSyntaxError(f"unexpected text after {close_literal} at offset {position + len(close_literal)}")
    raise CallSyntaxError(f"expected {call_open} or {close_literal} at offset {position}")


def json_object_at(region: str, index: int, name: str) -> tuple[dict, int]:
    """The JSON object starting at index (after whitespace) and the offset just past it."""
    start = skip_space(region, index)
    if not region.startswith("{", start):
        raise CallSyntaxError(f"the arguments of {name!r} must be a JSON object, at offset {start}")
    arguments, after = decode_at(region, start)
    return arguments, after


def expect(region: str, index: int, literal: str, what: str) -> int:
    """index past literal, which must start at index after whitespace; else a refusal naming what."""
    start = skip_space(region, index)
    if not region.startswith(literal, start):
        raise CallSyntaxError(f"expected {literal} {what}, at offset {start}")
    return start + len(literal)
