"""Hostile replies for the serving layer, generated over every format the case applies to (no vLLM needed).

The contracts (``integrations.served``, ``served_content``, ``served_reasoning``):
a reply without calls comes back as exactly its text; nothing is lost or
invented; a stream answers what the whole read answers, for every chunking
(whole, one character at a time, random cuts). Each class below was a
defect: a leading BOM or zero-width space lost the reasoning tags, an empty
block or a lone opener was duplicated or dropped, a block another reasoning
parser left in place got a pair of tags per delta and a closer never
written, whitespace before a refused call was lost in a stream, and the
reasoning before a refused call was dropped by the whole split.
"""

from __future__ import annotations

import logging
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.calls import UnparsedToolCall
from templatestudio.engine import Machine
from templatestudio.events import ToolCallEvent
from templatestudio.formats import FORMATS
from templatestudio.integrations import served_reasoning
from templatestudio.integrations.served import ReplyStream, read_reply
from templatestudio.integrations.served_reasoning import ReasoningSplit, split_reply

REASONING = sorted(name for name, fmt in FORMATS.items() if fmt.reasoning_pairs)
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
SPACE = st.sampled_from(["", " ", "\n", "\n\n", "\ufeff", "\u200b", "\ufeff\n", " \u200b"])
INSIDE = st.sampled_from(["", "plan", "\nplan\n", " a b ", "x = 1;", "\n"])
PROSE = st.sampled_from(["", "Hi", "ok.", "]", "x", " sunny", "\nDone"])


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def chunkings(text: str, seed: int) -> list[list[str]]:
    """Whole, one character at a time, and two random cuttings."""
    rng, out = random.Random(seed), [[text], list(text)]
    for _ in range(2):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 6)))) if len(text) > 1 else []
        out.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])])
    return out


def streamed(fmt, pieces: list[str], **options) -> tuple[str, list]:
    stream, content, calls = ReplyStream(fmt, **options), [], []
    for piece in pieces:
        got, more = stream.feed(piece)
        content.append(got)
        calls += more
    got, more = stream.close()
    return "".join(content) + got, calls + more


def answer(result) -> tuple[str, list]:
    content, calls = result
    return content, [(call.name, call.arguments) for call, _ in calls]


def whole_or_refused(text: str, fmt, **options) -> tuple[str, list]:
    """read_reply's answer; a refused reply comes back as its text (the leak policy)."""
    try:
        return answer(read_reply(text, fmt, **options))
    except UnparsedToolCall:
        return text, []


@st.composite
def openings(draw, name: str) -> str:
    """Blocks in any of the format's pairs (empty, with text, a lone opener last), space runs around them."""
    fmt = FORMATS[name]
    parts = [draw(st.sampled_from(["", "", "]", "x"]))]  # visible text first: the blocks are then text
    for _ in range(draw(st.integers(1, 3))):
        opener, closer = draw(st.sampled_from(fmt.reasoning_pairs))
        parts += [draw(SPACE), opener, draw(INSIDE), closer]
    if draw(st.booleans()):
        parts += [draw(SPACE), draw(st.sampled_from(fmt.reasoning_pairs))[0]]  # an opener the reply ends on
    else:
        parts.append(draw(SPACE) + draw(PROSE))
    return "".join(parts)


def per_reasoning_format(test):
    """test over every format with a reasoning block, drawing its data."""
    return pytest.mark.parametrize("name", REASONING)(SETTINGS(given(data=st.data())(test)))


def _no_call(text: str, fmt) -> bool:
    try:
        content, calls = read_reply(text, fmt)
    except UnparsedToolCall:
        return False
    return not calls


@per_reasoning_format
def test_a_reply_without_calls_is_its_text_whole_and_streamed(name, data):
    fmt = FORMATS[name]
    text = data.draw(openings(name))
    framing = fmt.wire.framing if fmt.wire is not None else ()
    if any(tag in text for tag in framing) or not _no_call(text, fmt):
        return  # the reader drops a format's framing, and a block's text may read as a call
    assert answer(read_reply(text, fmt)) == (text, []), text
    for pieces in chunkings(text, data.draw(st.integers(0, 999))):
        assert answer(streamed(fmt, pieces)) == (text, []), pieces


@per_reasoning_format
def test_without_a_reasoning_parser_a_stream_answers_the_whole_reply(name, data):
    fmt = FORMATS[name]
    text = data.draw(openings(name)) + data.draw(st.sampled_from(["", "\n" + fmt.samples[0].text]))
    whole = whole_or_refused(text, fmt)
    for pieces in chunkings(text, data.draw(st.integers(0, 999))):
        assert answer(streamed(fmt, pieces)) == whole, pieces


@per_reasoning_format
def test_a_block_left_in_place_keeps_its_own_tags_whatever_the_chunking(name, data):
    """reasoning_taken: each block's tags once, its closer only where the reply wrote one."""
    fmt = FORMATS[name]
    text = data.draw(openings(name))
    whole = whole_or_refused(text, fmt, reasoning_taken=True)
    content = whole[0]
    for opener, closer in fmt.reasoning_pairs:
        if closer not in opener:
            assert content.count(closer) <= text.count(closer), (text, content)
        if opener not in closer:
            assert content.count(opener) <= text.count(opener), (text, content)
    for pieces in chunkings(text, data.draw(st.integers(0, 999))):
        assert answer(streamed(fmt, pieces, reasoning_taken=True)) == whole, pieces


def refused(fmt) -> list[str]:
    """The format's near misses that the reader refuses."""
    out = []
    for miss in fmt.near_misses:
        try:
            read_reply(miss.text, fmt, reasoning_taken=True)
        except UnparsedToolCall:
            out.append(miss.text.lstrip())
    return out


REFUSING = sorted(name for name, fmt in FORMATS.items() if refused(fmt))


@pytest.mark.parametrize("name", REFUSING)
@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data())
def test_a_refused_reply_streams_back_unchanged_with_the_space_before_it(name, data):
    fmt = FORMATS[name]
    text = data.draw(st.sampled_from(["", "Hi", "ok."])) + data.draw(st.sampled_from(["", "\n", " ", "\n\n"])) \
        + data.draw(st.sampled_from(refused(fmt)))
    for taken in (True, False):
        whole = whole_or_refused(text, fmt, reasoning_taken=taken)
        if whole != (text, []):
            continue  # read after all (a leading word may make it prose)
        for pieces in chunkings(text, data.draw(st.integers(0, 999))):
            content, calls = streamed(fmt, pieces, reasoning_taken=taken)
            if not calls:
                assert content == text, (taken, pieces)


def split_streamed(fmt, pieces: list[str]) -> tuple[str, str]:
    split, reasoning = ReasoningSplit(fmt), []
    for piece in pieces:
        reasoning.append(split.feed(piece))
    more, content = split.close()
    return "".join(reasoning) + more, content


@pytest.mark.parametrize("name", sorted(set(REASONING) & set(REFUSING)))
@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data())
def test_the_reasoning_before_a_refused_call_is_kept_whole_and_streamed(name, data):
    fmt = FORMATS[name]
    opener, closer = data.draw(st.sampled_from(fmt.reasoning_pairs))
    inside = data.draw(st.sampled_from(["plan", "the plan", "a\nb"]))
    closer = data.draw(st.sampled_from([closer, ""]))  # a block never closed runs on (or ends at a call)
    text = opener + inside + closer + data.draw(st.sampled_from(["", "\n"])) + data.draw(st.sampled_from(refused(fmt)))
    reasoning, content = split_reply(text, fmt)
    assert reasoning is not None and inside.strip() in reasoning, text
    for pieces in chunkings(text, data.draw(st.integers(0, 999))):
        assert split_streamed(fmt, pieces) == (reasoning or "", content or ""), pieces


class CountingMachine(Machine):
    """The engine's machine, counting the characters it is fed (all machines of a run together)."""

    fed = 0

    def feed(self, text):
        CountingMachine.fed += len(text)
        return super().feed(text)


@pytest.mark.parametrize("name", sorted(set(REASONING) & set(REFUSING)))
def test_a_refused_reply_is_read_once_by_the_split(name, monkeypatch):
    # The split used to read a reply again after a refusal, one character per feed: linear, but a
    # whole reply of long reasoning cost a microsecond a character. Counted work, not time: the
    # characters fed to every machine the split makes, whole and streamed.
    fmt = FORMATS[name]
    monkeypatch.setattr(served_reasoning, "Machine", CountingMachine)
    opener, closer = fmt.reasoning_pairs[0]
    for miss in refused(fmt):
        text = opener + "plan " * 2000 + closer + "\n" + miss
        for pieces in ([text], [text[:5000], text[5000:]]):
            CountingMachine.fed = 0
            split_streamed(fmt, pieces)
            assert CountingMachine.fed <= len(text), (miss, CountingMachine.fed, len(text))


def test_the_reported_examples():
    hermes, mistral = FORMATS["hermes"], FORMATS["mistral"]
    assert split_reply('<think>plan</think>\n<tool_call>\n{"name": 1}\n</tool_call>', hermes)[0] == "plan"
    assert answer(streamed(hermes, list('Hi\n<tool_call>{"name": 1}</tool_call>'), reasoning_taken=True)) == \
        ('Hi\n<tool_call>{"name": 1}</tool_call>', [])
    assert answer(streamed(mistral, ["][THINK][/THINK]"])) == ("][THINK][/THINK]", [])
    assert answer(read_reply("\ufeff<think>abc</think>Hi", hermes)) == ("\ufeff<think>abc</think>Hi", [])
    assert answer(read_reply("<think>ok", hermes, reasoning_taken=True)) == ("<think>ok", [])
    assert answer(streamed(hermes, list("<think>ok</think>Hi"), reasoning_taken=True)) == ("<think>ok</think>Hi", [])
    assert answer(read_reply("<think>", hermes)) == ("<think>", [])
    # command-r7b's framing token is dropped, as the reader drops it; the empty block after it is text, once.
    assert answer(read_reply("<|START_RESPONSE|><|START_THINKING|><|END_THINKING|>", FORMATS["command-r7b"])) == \
        ("<|START_THINKING|><|END_THINKING|>", [])


@pytest.mark.parametrize("name", REFUSING)
@settings(max_examples=30, deadline=None, derandomize=True)
@given(data=st.data())
def test_the_machine_hands_over_what_settled_before_a_refusal(name, data):
    # Machine.settled_before_refusal: read without layout, the events returned before the refusal and
    # those handed over after it are the reply's characters up to the refused call, none lost or twice.
    fmt = FORMATS[name]
    lead = data.draw(st.sampled_from(["", "Hi", "ok.", "a < b"])) + data.draw(st.sampled_from(["", "\n", " "]))
    text = lead + data.draw(st.sampled_from(refused(fmt)))
    for pieces in chunkings(text, data.draw(st.integers(0, 999))):
        machine, events = Machine(fmt, strict=False, layout=False), []
        try:
            for piece in pieces:
                events += machine.feed(piece)
            events += machine.close()
        except UnparsedToolCall:
            events += machine.settled_before_refusal()
        else:
            continue  # read after all (a leading word may make the near miss prose)
        calls = [at for at, event in enumerate(events) if isinstance(event, ToolCallEvent)]
        # A near miss may hold a call read whole before the one refused: the text before it is checked.
        written = "".join(event.text for event in events[: calls[0] if calls else len(events)])
        assert text.startswith(written), (pieces, written)
        assert calls or len(written) >= len(lead.rstrip()), (pieces, written)
