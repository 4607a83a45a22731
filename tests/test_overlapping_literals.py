"""A literal whose end is the start of the next one: the call after it is found however the text is cut.

``functools[`` ends with the ``[`` of ``[TOOL_CALLS]``; ``<|end|><|start|>assistant``
ends with the ``t`` of ``to=``. A literal found prose used to be passed over
whole (by the search's ``(*SKIP)``, the machine's prose step and
``Tables.refused_run``), so the whole text hid the call that a stream, cut
inside the shared characters, found. Generated here from every registered
literal and every sample's first call marker: each way of gluing a literal's
head onto the marker, read whole and streamed cut at every point near the
seam, gives the same events or the same error.
"""

from __future__ import annotations

import pytest

from templatestudio.engine import read_events
from templatestudio.events import merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.literal_search import inner_start
from templatestudio.stream import ToolCallStream

LITERALS = sorted({opener.literal for fmt in FORMATS.values() for opener in fmt.openers})


def outcome(run):
    try:
        return "events", merge_deltas(run())
    except Exception as error:  # noqa: BLE001 - compared by type and message
        return type(error).__name__, str(error)


def streamed(fmt, pieces: list[str]) -> list:
    stream = ToolCallStream(fmt)
    return [event for piece in pieces for event in stream.feed(piece)] + stream.close()


def glued(fmt) -> list[tuple[str, int, int]]:
    """(text, where the literal's head starts, where the marker starts) for each overlap with a sample's marker."""
    out = []
    for sample in fmt.samples:
        markers = find_call_markers(sample.text) if sample.calls else []
        if not markers:
            continue
        at = markers[0].offset
        rest = sample.text[at:]
        for literal in LITERALS:
            for shared in range(1, len(literal)):
                if rest.startswith(literal[-shared:]):
                    head = literal[:-shared]
                    out.append((sample.text[:at] + head + rest, at, at + len(head)))
    return out


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_marker_glued_to_a_literals_head_reads_the_same_however_cut(name):
    fmt = FORMATS[name]
    for text, head_at, marker_at in glued(fmt):
        whole = outcome(lambda: read_events(text, fmt))
        for cut in range(max(head_at - 2, 1), min(marker_at + 40, len(text))):
            assert outcome(lambda: streamed(fmt, [text[:cut], text[cut:]])) == whole, (text, cut)
        assert outcome(lambda: streamed(fmt, list(text))) == whole, text


def test_inner_start_is_where_another_literal_may_begin():
    assert inner_start("functools[", LITERALS) == len("functools")
    for literal in LITERALS:
        offset = inner_start(literal, LITERALS)
        assert 1 <= offset <= len(literal)
        rests = [literal[at:] for at in range(1, offset)]
        assert not any(other.startswith(rest) or rest.startswith(other) for rest in rests for other in LITERALS)
