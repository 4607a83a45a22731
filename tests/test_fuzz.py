"""Fuzzing every reader of model output: the engine, the production reader, the stream, the leak survey.

Inputs: random text drawn from every registered format's markers and the
characters that matter to them, samples with markers inserted or
duplicated at random places, unbalanced brackets, every truncation of
every sample, 10,000-deep nesting and 1 MB texts.

What every reader must do with any of it:

- raise nothing but the documented error, ``UnparsedToolCall`` (a
  ``ValueError``), with a message (``RecursionError``, ``IndexError``,
  ``KeyError`` and the like are bugs);
- never return a call that is not in the text: a call's name occurs in the
  input (unless an escape spells it), every text delta is a piece of the
  input, a marker sits where its text is, and the production reader
  returns exactly the engine's calls;
- never hang: each test arms ``faulthandler.dump_traceback_later``, which
  kills the run with every thread's traceback if a test stalls.
"""

from __future__ import annotations

import faulthandler
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.reader import read_tool_calls
from templatestudio.resumable_match import MATCHED
from templatestudio.stream import ToolCallStream, merge_deltas

HANG_SECONDS = 300  # per test; far above any test's normal run time

SAMPLES = [(name, sample.text) for name, fmt in FORMATS.items() for sample in fmt.samples]
LITERALS = sorted({literal for fmt in FORMATS.values() for o in fmt.openers for literal in (o.literal,)}
                  | {closer for fmt in FORMATS.values() for closer in fmt.closers}
                  | {part for fmt in FORMATS.values() for part in (fmt.reasoning or ())})
PIECES = LITERALS + [
    '{"name": "f", "arguments": ', '{"name": "f", "parameters": ', "call:f", "f(a=1)", '"', "\\", "{", "}", "[", "]",
    "(", ")", ",", ":", ";", "=", "\n", " ", "null", "None", "true", "1.5e3", "\x00", "\x1c", "é", "🙂", "ｇ", "١",
]


@pytest.fixture(autouse=True)
def hang_guard():
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# --- what a correct answer looks like -------------------------------------------------------------


def documented(error: BaseException) -> bool:
    return isinstance(error, UnparsedToolCall) and bool(str(error))


def is_subsequence(part: str, text: str) -> bool:
    characters = iter(text)
    return all(char in characters for char in part)


def check_events(text: str, events: list) -> None:
    for event in events:
        if isinstance(event, ToolCallEvent):
            assert event.call.name and (event.call.name in text or "\\" in text), event
            assert isinstance(event.call.arguments, dict)
        else:
            assert isinstance(event, (TextDelta, ReasoningDelta)), event
    # What is shown is the input's own characters, in order (framing that a
    # format drops, such as an empty LFM2 block, may join two pieces).
    shown = "".join(event.text for event in events if not isinstance(event, ToolCallEvent))
    assert is_subsequence(shown, text), shown


def check_markers(text: str) -> None:
    markers = find_call_markers(text)
    for marker in markers:
        assert text.startswith(marker.text, marker.offset), marker
        assert marker.formats and set(marker.formats) <= set(FORMATS)
    assert [m.offset for m in markers] == sorted(m.offset for m in markers)


def read_checked(read, text: str):
    try:
        events = read()
    except Exception as error:  # noqa: BLE001 - the assertion says which errors are allowed
        assert documented(error), f"{type(error).__name__}: {error}"
        return ("raises", str(error))
    check_events(text, events)
    return events


def check_reader(name: str, text: str, pieces: list[str]) -> None:
    fmt = FORMATS[name]
    whole = read_checked(lambda: read_events(text, fmt), text)

    def streamed():
        stream = ToolCallStream(fmt)
        events = [event for piece in pieces for event in stream.feed(piece)]
        return merge_deltas(events + stream.close())

    assert "".join(pieces) == text
    assert read_checked(streamed, text) == whole
    try:
        reply = read_tool_calls(text, fmt, strict=True)
    except UnparsedToolCall as error:
        assert whole == ("raises", str(error))
        if str(error).startswith("the reply ended inside a tool call"):
            # Not strict, the production reader keeps the cut call (issue 22).
            cut = read_tool_calls(text, fmt).cut
            assert cut is not None and cut.raw == text[cut.offset :], (text, cut)
        return
    assert reply.calls == [event.call for event in whole if isinstance(event, ToolCallEvent)]
    assert read_tool_calls(text, fmt) == reply


def check_everything(text: str, pieces: list[str] | None = None, readers=None) -> None:
    check_markers(text)
    for name in readers or FORMATS:
        check_reader(name, text, pieces or [text])


def owners(text: str) -> list[str]:
    """The formats whose markers text holds (at least one reader that reads, not refuses, first)."""
    found = [m.formats[0] for m in find_call_markers(text)]
    return list(dict.fromkeys(found)) or ["hermes"]


# --- generated text ---------------------------------------------------------------------------------

texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=5)), max_size=24).map("".join)


def chunked(text: str, data: st.DataObject) -> list[str]:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, data=st.data())
def test_random_marker_soup(text, data):
    check_everything(text, chunked(text, data))


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(
    sample=st.sampled_from(SAMPLES),
    insert=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(PIECES)), min_size=1, max_size=4),
    data=st.data(),
)
def test_samples_with_markers_inserted(sample, insert, data):
    _, text = sample
    for where, piece in insert:
        at = int(where * len(text))
        text = text[:at] + piece + text[at:]
    check_everything(text, chunked(text, data))


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(sample=st.sampled_from(SAMPLES), data=st.data())
def test_samples_with_a_marker_duplicated(sample, data):
    name, text = sample
    found = [m.offset for m in find_call_markers(text)] or [0]
    at = data.draw(st.sampled_from(found))
    length = data.draw(st.integers(1, 40))
    text = text[: at + length] + text[at:]
    check_everything(text, chunked(text, data))
    check_reader(name, text + text, [text, text])


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(
    sample=st.sampled_from(SAMPLES),
    opens=st.integers(0, 30),
    closes=st.integers(0, 30),
    bracket=st.sampled_from(["{}", "[]", "()"]),
    where=st.floats(0, 1),
)
def test_unbalanced_brackets(sample, opens, closes, bracket, where):
    _, text = sample
    at = int(where * len(text))
    text = text[:at] + bracket[0] * opens + bracket[1] * closes + text[at:]
    check_everything(text)


# --- deterministic: truncations, depth, size --------------------------------------------------------


@pytest.mark.parametrize(("name", "text"), SAMPLES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SAMPLES)])
def test_every_truncation_of_a_real_call(name, text):
    """Every prefix, as a model cut off by max_new_tokens would leave it, through its own reader."""
    rng = random.Random(name)
    for cut in range(len(text) + 1):
        prefix = text[:cut]
        check_markers(prefix)
        step = rng.randint(1, 9)
        pieces = [prefix[i : i + step] for i in range(0, len(prefix), step)]
        check_reader(name, prefix, pieces or [prefix])


def test_a_reply_cut_inside_its_last_call_raises_the_documented_error():
    """A reply that ends inside a call is reported as truncated, not returned as text."""
    checked = 0
    for name, text in SAMPLES:
        markers = find_call_markers(text)
        if not markers:
            continue
        start = markers[-1].offset
        opener = next(o for o in FORMATS[markers[-1].formats[0]].openers
                      if o.literal == markers[-1].text and o.automaton.scan().feed(text, start)[0] == MATCHED)
        opened = opener.automaton.scan().feed(text, start)[1]
        end = opener.extent().advance(text, start, True)
        if end - 3 < opened:
            continue  # the call is too short to cut after its opening
        # Halfway through the region a call is always cut. Three characters
        # before its end the cut may fall in a closing token that may also be
        # missing (DeepSeek's section closer): then the call reads whole, with
        # exactly the events of the uncut region and no fragment shown.
        stream = ToolCallStream(name)
        stream.feed(text[: opened + (end - opened) // 2])
        with pytest.raises(UnparsedToolCall, match="the reply ended inside a tool call"):
            stream.close()
        try:
            cut_late = read_events(text[: end - 3], FORMATS[name])
        except UnparsedToolCall as error:
            assert "the reply ended inside a tool call" in str(error)
        else:
            assert cut_late == read_events(text[:end], FORMATS[name]), (name, text[: end - 3])
        checked += 1
    assert checked >= len(FORMATS)


DEPTH = 10_000
DEEP = {
    "bare [": "[" * DEPTH,
    "bare {": "{" * DEPTH,
    "balanced [": "[" * DEPTH + "]" * DEPTH,
    "tool_call json": '<tool_call>{"name": "f", "arguments": {"a": ' + "[" * DEPTH + "]" * DEPTH + "}}</tool_call>",
    "tool_call json open": '<tool_call>{"name": "f", "arguments": {"a": ' + "[" * DEPTH,
    "fenced json open": '```json\n{"name": "f", "arguments": {"a": ' + "{" * DEPTH,
    "bare json": '{"name": "f", "parameters": {"a": ' + "[" * DEPTH + "]" * DEPTH + "}}",
    "TOOL_CALLS list": '[TOOL_CALLS][{"name": "f", "arguments": {"a": ' + "[" * DEPTH + "]" * DEPTH + "}}]",
    "TOOL_CALLS args": "[TOOL_CALLS]f[ARGS]" + "{" * DEPTH,
    "tool_call token list": "<|tool_call>call:f{a:" + "[" * DEPTH + "]" * DEPTH + "}<tool_call|>",
    "tool_call token objects": "<|tool_call>call:f{a:" + "{b:" * DEPTH + "1" + "}" * DEPTH + "}<tool_call|>",
    "function xml": "<tool_call>\n<function=f>\n<parameter=a>\n" + "[" * DEPTH + "\n</parameter>\n</function>\n</tool_call>",
    "python list": "[f(a=" + "[" * DEPTH + "]" * DEPTH + ")]",
    "python calls": "[" + "f(" * DEPTH + ")" * DEPTH + "]",
    "python_tag": "<|python_tag|>" + "{" * DEPTH,
}


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


# Every format's own call with a deep argument, from its writer (text for
# the formats whose values are text; 200 deep, past every reader's nesting limit, within the writers' recursion).
DEEP.update({
    f"{fmt.name} writer": fmt.write_call(ParsedToolCall("f", {"a": "[" * DEPTH} if fmt.string_arguments else {"a": nested(200)}))
    for fmt in FORMATS.values()
})


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_ten_thousand_deep_nesting(text):
    check_everything(text, [text[i : i + 997] for i in range(0, len(text), 997)])


MEGABYTE = 1_000_000
PROSE = "Rates moved little today; the euro is flat, see {this} and [that]. "


def megabyte_texts() -> dict[str, str]:
    prose = (PROSE * (MEGABYTE // len(PROSE)))[:MEGABYTE]
    rng = random.Random(7)
    soup = "".join(rng.choice(PIECES) for _ in range(MEGABYTE // 6))[:MEGABYTE]
    hermes = FORMATS["hermes"]
    return {
        "prose around a call": prose[: MEGABYTE // 2] + hermes.samples[0].text + prose[MEGABYTE // 2 :],
        "marker soup": soup,
        "one huge hermes call": '<tool_call>\n{"name": "f", "arguments": {"text": "' + "x" * MEGABYTE + '"}}\n</tool_call>',
        "one huge gemma4 call": '<|tool_call>call:f{text:<|"|>' + "x" * MEGABYTE + '<|"|>}<tool_call|>',
    }


@pytest.mark.parametrize("label", list(megabyte_texts()))
def test_megabyte_inputs(label):
    """The readers whose markers the text holds, and the survey, read 1 MB correctly (its wall time: tests/wallclock)."""
    text = megabyte_texts()[label]
    check_everything(text, [text[i : i + 4096] for i in range(0, len(text), 4096)], readers=owners(text[:5000]))
