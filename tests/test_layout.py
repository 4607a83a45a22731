"""The layout rule: whitespace touching a reasoning block or a call is the template's, the rest is the model's.

The oracle (``tests/layout_oracle.py``) works on the whole, merged list of
events at once; ``Layout`` works on events as they settle. They must agree
for every sequence and every way of cutting its deltas into pieces.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio import FORMATS, ToolCallStream, get_format, read_events
from templatestudio.layout import Layout

from layout_oracle import laid_out as laid_out_whole

SPACE = " \t\n\r"
CALL = ToolCallEvent(ParsedToolCall("f", {"a": 1}))


def oracle(events):
    return laid_out_whole(events)


def laid_out(events, cuts, *, blocks: bool = True):
    layout = Layout(SPACE, blocks=blocks)
    out = []
    for event, cut in zip(events, cuts):
        if type(event) is ToolCallEvent:
            out += layout.feed([event])
            continue
        pieces = [event.text[i:j] for i, j in zip([0, *cut], [*cut, len(event.text)]) if i < j]
        for piece in pieces:
            out += layout.feed([type(event)(piece)])
    out += layout.close()
    return merge_deltas(out)


texts = st.text(alphabet=st.sampled_from(list("ab \n\t")), min_size=1, max_size=12)
events = st.lists(
    st.one_of(texts.map(TextDelta), texts.map(ReasoningDelta), st.just(CALL)), min_size=0, max_size=8)


@st.composite
def cut_events(draw):
    chosen = draw(events)
    cuts = []
    for event in chosen:
        size = len(event.text) if type(event) is not ToolCallEvent else 0
        cuts.append(sorted(set(draw(st.lists(st.integers(1, max(1, size - 1)), max_size=3)))) if size > 1 else [])
    return chosen, cuts


@settings(max_examples=400)
@given(cut_events())
def test_events_as_they_settle_give_the_whole_lists_layout(case):
    chosen, cuts = case
    assert laid_out(chosen, cuts) == oracle(chosen)


@settings(max_examples=200)
@given(events)
def test_only_whitespace_is_ever_taken_out(chosen):
    kept = "".join(getattr(e, "text", "") for e in laid_out(chosen, [[] for _ in chosen]))
    written = "".join(getattr(e, "text", "") for e in chosen)
    squeeze = str.maketrans("", "", SPACE)
    assert kept.translate(squeeze) == written.translate(squeeze)


def test_a_reply_with_no_block_and_no_call_comes_back_exactly():
    assert laid_out([TextDelta("  \nhello \n")], [[]]) == [TextDelta("  \nhello \n")]


def test_qwen3s_layout_around_think_and_a_call_is_not_content():
    got = laid_out([ReasoningDelta("\nweighing it\n"), TextDelta("\n\nLet me look.\n"), CALL, TextDelta("\n")],
                   [[1], [2], [], []])
    assert got == [ReasoningDelta("weighing it"), TextDelta("Let me look."), CALL]


def test_an_empty_spacing_keeps_every_character():
    layout = Layout("")
    out = layout.feed([ReasoningDelta("\nx\n"), TextDelta("\n"), CALL]) + layout.close()
    assert out == [ReasoningDelta("\nx\n"), TextDelta("\n"), CALL]


@pytest.mark.parametrize("name", [n for n in sorted(FORMATS) if get_format(n).reasoning])
def test_blocks_that_only_layout_separates_read_the_same_whole_and_streamed(name):
    """Taking out the whitespace between two blocks leaves two reasoning deltas side by side: merged both ways."""
    fmt = get_format(name)
    opener, closer = fmt.reasoning
    text = f"{opener}a{closer}\n{opener}b{closer}\n\nHi there"
    stream = ToolCallStream(fmt)
    streamed = [event for char in text for event in stream.feed(char)] + stream.close()
    assert read_events(text, fmt) == merge_deltas(streamed)
    assert all(type(a) is not type(b) for a, b in zip(read_events(text, fmt), read_events(text, fmt)[1:]))


@settings(max_examples=300)
@given(cut_events())
def test_with_blocks_left_alone_only_the_whitespace_touching_a_call_goes(case):
    """The vLLM plugin's reading (reasoning_layout=False): reasoning and the text beside it stay as written."""
    chosen, cuts = case
    assert laid_out(chosen, cuts, blocks=False) == laid_out_whole(chosen, blocks=False)


REASONING_FORMATS = [n for n in sorted(FORMATS) if get_format(n).reasoning and get_format(n).spacing]
spaces = st.text(alphabet=st.sampled_from(list(" \n\t")), max_size=3)


@settings(max_examples=300)
@given(st.sampled_from(REASONING_FORMATS), st.lists(st.tuples(spaces, st.sampled_from(["", "a", " \n"])), min_size=1,
       max_size=3), spaces, st.booleans(), st.lists(st.integers(1, 9), min_size=1, max_size=6))
def test_a_block_that_holds_nothing_is_a_block_whole_and_streamed(name, blocks, before_text, closed, sizes):
    """Whitespace beside a reasoning block is layout whether or not the block holds reasoning.

    The oracle is the rule itself: the reasoning is the blocks' text without
    their ends' whitespace, the content the prose as the model wrote it.
    """
    fmt = get_format(name)
    opener, closer = fmt.reasoning
    text = "".join(space + opener + inner + closer for space, inner in blocks)
    if closed:
        text += before_text + "Hi there"
    else:
        text += before_text + opener  # cut just after a block opened
    whole = read_events(text, fmt)
    stream, streamed, at = ToolCallStream(fmt), [], 0
    while at < len(text):
        size = sizes[at % len(sizes)]
        streamed += stream.feed(text[at : at + size])
        at += size
    assert merge_deltas(streamed + stream.close()) == whole
    reasoning = "".join(e.text for e in whole if type(e) is ReasoningDelta)
    content = "".join(e.text for e in whole if type(e) is TextDelta)
    assert reasoning == "".join(inner.strip(SPACE) for _, inner in blocks)
    assert content == ("Hi there" if closed else "")
