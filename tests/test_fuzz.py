"""Fuzzing every reader of model output: parsers, find_call_markers, parse_tool_calls, the stream.

Inputs: random text drawn from every format's markers and the characters
that matter to them, every truncation of every sample call, samples with
markers inserted or duplicated at random places, unbalanced braces,
10,000-deep nesting and 1 MB texts.

What every reader must do with any of it:

- raise nothing but the documented errors: ``UnparsedToolCall`` or another
  ``ValueError`` subclass, with a message (``RecursionError``,
  ``IndexError``, ``KeyError`` and the like are bugs);
- never return a call that is not in the text: a span lies inside the
  text, starts at one of its format's markers (or at the start of the reply
  for the formats that must open it), and holds the call's name; a marker
  sits where its text is; a streamed call's name occurs in the input, and
  every text delta is a piece of the input with no call marker in it;
- never hang: each test arms ``faulthandler.dump_traceback_later``, which
  kills the run with every thread's traceback if a test stalls, so a hang
  fails CI with the place it hung instead of eating the time budget.
"""

from __future__ import annotations

import faulthandler
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samples import FORMAT_SAMPLES
from templatestudio.formats import FORMATS, CallSpan
from templatestudio.leaks import MARKER_RULES, find_call_markers
from templatestudio.stream import TextDelta, ToolCallEvent, ToolCallStream, merge_deltas
from templatestudio.tools import ParsedToolCall, UnparsedToolCall, parse_tool_calls

HANG_SECONDS = 120  # per test; far above any test's normal run time

SAMPLES = [(name, text) for name, texts in FORMAT_SAMPLES.items() for text in texts]
LITERALS = sorted({rule.literal for rule in MARKER_RULES})
PIECES = LITERALS + [
    "<tool_call>\n", "</tool_call>", "<tool_call|>", '<|"|>', "call:f", "[ARGS]", "[CALL_ID]",
    "<function=f>", "</function>", "<parameter=a>", "</parameter>", "```", "<think>", "</think>",
    "<|channel>thought\n", "<channel|>", "<|tool_call_end|>", '{"name": "f", "arguments": ',
    '{"name": "f", "parameters": ', '"', "\\", "{", "}", "[", "]", "(", ")", ",", ":", ";", "=",
    "\n", " ", "f(a=1)", "null", "None", "true", "1.5e3", "\x00", "é", "🙂",
]


@pytest.fixture(autouse=True)
def hang_guard():
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# --- what a correct answer looks like -------------------------------------------------


def documented(error: BaseException) -> bool:
    return isinstance(error, ValueError) and bool(str(error))


def check_spans(fmt: str, text: str, spans: list[CallSpan]) -> None:
    markers = FORMATS[fmt].markers
    for span in spans:
        assert 0 <= span.start < span.end <= len(text), (fmt, span)
        if FORMATS[fmt].start_only:
            assert not text[: span.start].strip() or text[: span.start].rstrip().endswith(";"), (fmt, span)
        else:
            assert text.startswith(markers, span.start), (fmt, span, text[span.start : span.start + 20])
        assert span.call.name and span.call.name in text[span.start : span.end], (fmt, span)
        assert isinstance(span.call.arguments, dict)
    starts = [span.start for span in spans]
    assert starts == sorted(starts)


def check_parser(fmt: str, text: str) -> None:
    spans = FORMATS[fmt].parser.scan(text)  # a parser never raises
    check_spans(fmt, text, spans)
    assert FORMATS[fmt].parser.parse(text) == [span.call for span in spans]


def check_markers(text: str) -> None:
    for at_start in (True, False):
        markers = find_call_markers(text, at_reply_start=at_start)
        for marker in markers:
            assert text.startswith(marker.text, marker.offset), marker
            assert marker.formats and set(marker.formats) <= set(FORMATS)
        assert [m.offset for m in markers] == sorted(m.offset for m in markers)


def check_stream(fmt: str, text: str, pieces: list[str]) -> None:
    assert "".join(pieces) == text
    stream = ToolCallStream(fmt)
    events = []
    try:
        for piece in pieces:
            events.extend(stream.feed(piece))
        events.extend(stream.close())
    except Exception as error:  # noqa: BLE001 - the assertion says which errors are allowed
        assert documented(error), f"{type(error).__name__}: {error}"
        return
    for event in merge_deltas(events):
        if isinstance(event, ToolCallEvent):
            assert event.call.name in text, event
        elif isinstance(event, TextDelta):
            assert event.text in text, event
            assert complete_markers(event.text) == [], event


_RULES = {rule.literal: rule for rule in MARKER_RULES if not rule.start_only}


def complete_markers(text: str) -> list:
    """Markers in text that open a whole call opening, not just a literal at the very end.

    A delta may end with a bare opener when the next event is the call it
    opens, so the cut-short form of a marker is not counted here.
    """
    return [
        marker
        for marker in find_call_markers(text, at_reply_start=False)
        if _RULES[marker.text].compiled.match(text, marker.offset)
    ]


class _NoTemplate:
    """The attributes parse_tool_calls reads from a tokenizer that ships no response template."""

    response_template = None
    name_or_path = "fuzz/no-response-template"


def check_parse_tool_calls(fmt: str, text: str) -> None:
    for fallback in (FORMATS[fmt], FORMATS[fmt].parser):
        try:
            calls = parse_tool_calls(_NoTemplate(), text, prefix="", fallback=fallback)
        except Exception as error:  # noqa: BLE001
            assert documented(error), f"{type(error).__name__}: {error}"
            continue
        assert all(isinstance(c, ParsedToolCall) and c.name in text for c in calls)


def check_everything(text: str, pieces: list[str] | None = None) -> None:
    check_markers(text)
    for fmt in FORMATS:
        check_parser(fmt, text)
        check_parse_tool_calls(fmt, text)
        check_stream(fmt, text, pieces or [text])


# --- generated text ---------------------------------------------------------------------

texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=5)), max_size=24).map("".join)


def chunked(text: str, data: st.DataObject) -> list[str]:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, data=st.data())
def test_random_marker_soup(text, data):
    check_everything(text, chunked(text, data))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(sample=st.sampled_from(SAMPLES), data=st.data())
def test_samples_with_a_marker_duplicated(sample, data):
    name, text = sample
    found = [m.offset for m in find_call_markers(text)] or [0]
    at = data.draw(st.sampled_from(found))
    length = data.draw(st.integers(1, 40))
    text = text[: at + length] + text[at:]
    check_everything(text, chunked(text, data))
    check_parser(name, text + text)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
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


# --- deterministic: truncations, depth, size --------------------------------------------------


@pytest.mark.parametrize(("name", "text"), SAMPLES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SAMPLES)])
def test_every_truncation_of_a_real_call(name, text):
    """Every prefix, as a model cut off by max_new_tokens would leave it."""
    for cut in range(len(text) + 1):
        prefix = text[:cut]
        check_markers(prefix)
        for fmt in FORMATS:
            check_parser(fmt, prefix)
        check_parse_tool_calls(name, prefix)
        check_stream(name, prefix, [prefix])


def test_a_truncated_call_streamed_raises_the_documented_error():
    """A reply that ends inside a call is reported as truncated, not returned as text."""
    for name, text in SAMPLES:
        marker = next(iter(find_call_markers(text)), None)
        if marker is None or FORMATS[name].start_only:
            continue
        cut = text[: len(text) - 3]
        stream = ToolCallStream(name)
        stream.feed(cut)
        with pytest.raises(UnparsedToolCall, match="."):
            stream.close()


DEPTH = 10_000
DEEP = {
    "bare [": "[" * DEPTH,
    "bare {": "{" * DEPTH,
    "balanced [": "[" * DEPTH + "]" * DEPTH,
    "hermes": '<tool_call>{"name": "f", "arguments": {"a": ' + "[" * DEPTH + "]" * DEPTH + "}}</tool_call>",
    "hermes open": '<tool_call>{"name": "f", "arguments": {"a": ' + "[" * DEPTH,
    "fenced": '```json\n{"name": "f", "arguments": {"a": ' + "{" * DEPTH,
    "llama3": '{"name": "f", "parameters": {"a": ' + "[" * DEPTH + "]" * DEPTH + "}}",
    "mistral": '[TOOL_CALLS][{"name": "f", "arguments": {"a": ' + "[" * DEPTH + "]" * DEPTH + "}}]",
    "mistral args": "[TOOL_CALLS]f[ARGS]" + "{" * DEPTH,
    "gemma4": "<|tool_call>call:f{a:" + "[" * DEPTH + "]" * DEPTH + "}<tool_call|>",
    "gemma4 objects": "<|tool_call>call:f{a:" + "{b:" * DEPTH + "1" + "}" * DEPTH + "}<tool_call|>",
    "qwen-xml": "<tool_call>\n<function=f>\n<parameter=a>\n" + "[" * DEPTH + "\n</parameter>\n</function>\n</tool_call>",
    "pythonic": "[f(a=" + "[" * DEPTH + "]" * DEPTH + ")]",
    "pythonic calls": "[" + "f(" * DEPTH + ")" * DEPTH + "]",
    "python_tag": "<|python_tag|>" + "{" * DEPTH,
}


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_ten_thousand_deep_nesting(text):
    check_everything(text, [text[i : i + 997] for i in range(0, len(text), 997)])


MEGABYTE = 1_000_000
PROSE = "Rates moved little today; the euro is flat, see {this} and [that]. "


def megabyte_texts() -> dict[str, str]:
    prose = (PROSE * (MEGABYTE // len(PROSE)))[:MEGABYTE]
    rng = random.Random(7)
    soup = "".join(rng.choice(PIECES) for _ in range(MEGABYTE // 6))[:MEGABYTE]
    return {
        "prose around a call": prose[: MEGABYTE // 2] + FORMAT_SAMPLES["hermes"][0] + prose[MEGABYTE // 2 :],
        "marker soup": soup,
        "one huge hermes call": '<tool_call>\n{"name": "f", "arguments": {"text": "'
        + "x" * MEGABYTE
        + '"}}\n</tool_call>',
        "one huge gemma4 call": '<|tool_call>call:f{text:<|"|>' + "x" * MEGABYTE + '<|"|>}<tool_call|>',
    }


@pytest.mark.parametrize("label", list(megabyte_texts()))
def test_megabyte_inputs(label):
    """Each reader finishes a 1 MB text in well under a few seconds, and correctly."""
    text = megabyte_texts()[label]
    started = time.perf_counter()
    check_everything(text, [text[i : i + 4096] for i in range(0, len(text), 4096)])
    assert time.perf_counter() - started < 60, "1 MB took more than a minute through all readers"
