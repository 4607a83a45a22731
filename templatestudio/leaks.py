"""Finding tool calls that no reader consumed, whatever format they are written in.

The course's ``looks_like_tool_call`` looks for a quoted ``"name"`` and a
quoted ``"arguments"``. Gemma 4 quotes nothing, Llama 3 writes
``"parameters"``, Qwen3-Coder writes XML, Mistral announces calls with a
special token: a call in any of those shapes passes that check and reaches
the user as text. Here the openers of every registered format
(``templatestudio.formats``, or of the formats a ``guard`` names) are
watched by the same machine the readers run (``templatestudio.engine``),
so "is there a call in this text?" gets the answer the readers would
give: a marker counts when a call of its format really opens there and is
read (or could not be read), not when the literal merely appears in prose.

``find_call_markers`` surveys a text; ``assert_no_unparsed_markers`` raises
``UnparsedToolCall`` for the first marker that no consumed span covers.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate

from templatestudio.engine import Machine
from templatestudio.events import Marker
from templatestudio.wire.base import Format


def find_call_markers(text: str, *, guard: tuple[Format, ...] | None = None) -> list[Marker]:
    """Every place in text where a call in one of the guard's formats opens, in order.

    guard: the formats surveyed (a tuple of ``Format``), by default every registered one.
    """
    machine = Machine(None, record=True, guard=guard)
    machine.feed(text)
    machine.close()
    return machine.markers


def unconsumed_markers(text: str, spans: Iterable, *, guard: tuple[Format, ...] | None = None) -> list[Marker]:
    """The markers in text (of the guard's formats, see ``find_call_markers``) that start outside every span.

    spans are objects with ``start`` and ``end`` (``CallSpan``) or
    ``(start, end)`` pairs, in text's offsets.
    """
    ranges = sorted(span if isinstance(span, tuple) else (span.start, span.end) for span in spans)
    starts = [start for start, _ in ranges]
    # reach[i]: the furthest end among the first i + 1 spans, so one bisect
    # per marker says whether any span covers it.
    reach = list(accumulate((end for _, end in ranges), max))
    leftover = []
    for marker in find_call_markers(text, guard=guard):
        covering = bisect_right(starts, marker.offset) - 1
        if covering < 0 or reach[covering] <= marker.offset:
            leftover.append(marker)
    return leftover


def assert_no_unparsed_markers(text: str, spans: Iterable, reader: str = "the parser", *,
                               guard: tuple[Format, ...] | None = None) -> None:
    """Raise UnparsedToolCall for the first call marker no span consumed; reader names who read text."""
    leftover = unconsumed_markers(text, spans, guard=guard)
    if leftover:
        raise leftover[0].left_unread(reader)


__all__ = ["Marker", "assert_no_unparsed_markers", "find_call_markers", "unconsumed_markers"]
