"""An opening at a line start is a call cut short where the same text mid-line is prose (``Opener.cut_at_line``).

Functionary writes ``<function=NAME>{...}</function>`` on lines of its own,
and prose names ``<function=...>`` mid-line (vLLM's own docstrings end on
it). So a reply that ends inside the opening right after a line break is a
cut call, whole and streamed in any chunking; the same ending mid-line is
text. Generated over every opener that declares ``cut_at_line``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import TextDelta
from templatestudio.formats import FORMATS
from templatestudio.reader import read_tool_calls
from test_conformance_classes import chunks
from test_reading_properties import outcome, stream_events

LINE_CUTS = [(name, opener) for name, fmt in FORMATS.items() for opener in fmt.openers if opener.cut_at_line is not None]
# Prose words without markup or line breaks, and names as tools have them.
WORDS = st.text(st.sampled_from(list("abcdefghijklmnopqrstuvwxyz ,.:?!'")), min_size=1, max_size=40)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)


def test_functionary_declares_it():
    assert [name for name, _ in LINE_CUTS] == ["functionary-v3.1"]


@pytest.mark.parametrize(("name", "opener"), LINE_CUTS, ids=[name for name, _ in LINE_CUTS])
@settings(max_examples=150, deadline=None)
@given(prose=WORDS, tool=NAMES, at=st.integers(0, 10**6), brk=st.sampled_from(["\n", "\r\n", "\n\n", ".\n"]),
       seed=st.integers(0, 2**16))
def test_an_opening_cut_after_a_line_break_is_a_cut_call_and_mid_line_it_is_prose(name, opener, prose, tool, at,
                                                                                  brk, seed):
    fmt = FORMATS[name]
    written = fmt.wire.write_call(ParsedToolCall(tool, {"city": "Paris"}))
    start = written.index(opener.literal)
    body = written.index("{", start)
    # Cut from the literal's end up to the body's first character (past it, a cut body is a cut anywhere).
    cut = start + opener.cut_at_line + at % (body + 1 - start - opener.cut_at_line)
    head = written[:cut]
    for text, at_line in ((prose + brk + head, True), (prose.rstrip() + " " + head, False)):
        whole = outcome(lambda: read_events(text, fmt))
        assert outcome(lambda: stream_events(fmt, chunks(text, seed))) == whole, text
        if at_line:  # strict, the machine refuses a reply that ended inside a call; the reader says where
            assert whole[0] == "raises" and "never closed" in whole[2] and f"offset {len(text) - len(head)}" in whole[2]
            reply = read_tool_calls(text, fmt)
            assert not reply.calls and reply.cut is not None and reply.cut.raw == head, text
        else:
            assert whole == ("events", [TextDelta(text)]), text
