"""A section of calls between two special tokens, each call between two more: DeepSeek's and Kimi's shape.

``read_section`` reads ``OPEN ws (CALL_OPEN call ws)* CLOSE`` where each
format reads its own call body (``read_call``) from just past CALL_OPEN
and says where the call ended. Whitespace between the tokens is allowed
(vLLM's DeepSeek V3.1 template writes stray indentation there); anything
else is refused. Every call of a section shares the section's span, so no
whitespace inside the section comes back as text.

``CallThenCloser`` is the extent of DeepSeek's calls, read one region per
call: it ends just past a call's closer, or past the section closer when
only whitespace stands between them. A reply cut between two calls of one
section is then cut between regions, and gives the calls before the cut
whole, the way a reply cut between two Hermes blocks does.

``element_spans`` reads a block of elements one after another (MiniMax's
invokes, Step 3's calls), and ``json_object_at`` decodes the arguments
object of one call.
"""

from __future__ import annotations

from collections.abc import Callable

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import CallSyntaxError, Found
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.optional_closer import ThenOptionalCloser, only_closer_after
from templatestudio.wire.jsonbody import decode_at, skip_space

CallReader = Callable[[str, int, Found | None], tuple[ParsedToolCall, str | None, int]]


def read_section(
    region: str,
    open_literal: str,
    close_literal: str,
    call_open: str,
    read_call: CallReader,
    *,
    close_optional: bool = False,
    found: Found | None = None,
) -> list[CallSpan]:
    """The calls in region, which starts with open_literal.

    read_call(region, index, found) reads one call from index (just past
    call_open) and returns (call, id or None, offset past the call's own
    closer). close_optional accepts a section whose closer is missing when
    the region (the rest of the reply) ends right after a whole call.
    """
    position = skip_space(region, len(open_literal))
    spans = []
    while region.startswith(call_open, position):
        call, call_id, position = read_call(region, position + len(call_open), found)
        spans.append(CallSpan(call, 0, len(region), call_id))
        position = skip_space(region, position)
    if region.startswith(close_literal, position) and position + len(close_literal) == len(region):
        return spans
    if close_optional and spans and position == len(region):
        return spans
    if region.startswith(close_literal, position):
        raise CallSyntaxError(f"unexpected text after {close_literal} at offset {position + len(close_literal)}")
    raise CallSyntaxError(f"expected {call_open} or {close_literal} at offset {position}")


def read_one_call(
    region: str, opener_literal: str, section_open: str, section_close: str, call_open: str, read_call: CallReader,
    found: Found | None = None,
) -> list[CallSpan]:
    """The one call in a region that ``CallThenCloser`` ended.

    The region opens with section_open (then whitespace and call_open) or
    with call_open itself (a later call of the section), and may end with
    section_close after whitespace.
    """
    position = 0
    if opener_literal == section_open:
        position = skip_space(region, len(section_open))
    if not region.startswith(call_open, position):
        raise CallSyntaxError(f"expected {call_open} at offset {position}")
    call, call_id, position = read_call(region, position + len(call_open), found)
    if not only_closer_after(region, position, section_close):
        raise CallSyntaxError(f"unexpected text after the call at offset {skip_space(region, position)}")
    return [CallSpan(call, 0, len(region), call_id)]


ElementReader = Callable[[str, int, int], tuple[ParsedToolCall, int]]


def element_spans(
    region: str, position: int, end: int, opening: str, read_element: ElementReader, *, none: str, expected: str,
) -> list[CallSpan]:
    """The calls of a block read one element after another, whitespace between, their spans covering the block.

    From position (whitespace first), each element that opens with opening
    is read by ``read_element(region, position, end)``, which returns the
    call and the offset past the element; the last must end at end (where
    the block's closer starts). Consecutive spans cover the block, tags
    included, so none of it is content. Raises ``CallSyntaxError(none)``
    when no element opens, and ``expected`` (then " at offset N") when other
    text stands before end.
    """
    spans: list[CallSpan] = []
    position = skip_space(region, position)
    while position < end and region.startswith(opening, position):
        call, after = read_element(region, position, end)
        spans.append(CallSpan(call, spans[-1].end if spans else 0, after))
        position = skip_space(region, after)
    if not spans:
        raise CallSyntaxError(none)
    if position != end:
        raise CallSyntaxError(f"{expected} at offset {position}")
    spans[-1] = CallSpan(spans[-1].call, spans[-1].start, len(region))
    return spans


def json_object_at(region: str, index: int, name: str, found: Found | None = None) -> tuple[dict, int]:
    """The JSON object starting at index (after whitespace) and the offset just past it (found: see decode_at)."""
    start = skip_space(region, index)
    if not region.startswith("{", start):
        raise CallSyntaxError(f"the arguments of {name!r} must be a JSON object, at offset {start}")
    arguments, after = decode_at(region, start, found)
    return arguments, after


def expect(region: str, index: int, literal: str, what: str) -> int:
    """index past literal, which must start at index after whitespace; else a refusal naming what."""
    start = skip_space(region, index)
    if not region.startswith(literal, start):
        raise CallSyntaxError(f"expected {literal} {what}, at offset {start}")
    return start + len(literal)


class CallThenCloser(ThenOptionalCloser):
    """Ends past call_close (found outside JSON strings), or past section_close right after it."""

    def __init__(self, skip: int, call_close: str, section_close: str) -> None:
        super().__init__(TagExtent(skip, call_close, "json"), section_close)
