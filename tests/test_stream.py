"""Streaming: no marker reaches the user, calls arrive whole, any chunking gives the same events."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samples import FORMAT_SAMPLES, GEMMA4_CALL, QWEN3_CALL
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.stream import (
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    ToolCallStream,
    merge_deltas,
    parse_events,
)
from templatestudio.tools import ParsedToolCall, UnparsedToolCall

SAMPLES = [(name, i, text) for name, texts in FORMAT_SAMPLES.items() for i, text in enumerate(texts)]
PROSE = json.loads(
    (Path(__file__).parent / "fixtures" / "prose_answers.json").read_text(encoding="utf-8")
)["answers"]
RATE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})


def stream(fmt, pieces, **options) -> list:
    tool_stream = ToolCallStream(fmt, **options)
    events = [event for piece in pieces for event in tool_stream.feed(piece)]
    return merge_deltas(events + tool_stream.close())


def random_chunks(text: str, rng: random.Random) -> list[str]:
    pieces, position = [], 0
    while position < len(text):
        size = rng.randint(1, 16)
        pieces.append(text[position : position + size])
        position += size
    return pieces


@pytest.mark.parametrize("name,index,text", SAMPLES, ids=[f"{n}-{i}" for n, i, _ in SAMPLES])
def test_whole_reply_events_are_the_parser_calls(name, index, text):
    events = parse_events(text, name)
    calls = [event.call for event in events if isinstance(event, ToolCallEvent)]
    assert calls == FORMATS[name].parser.parse(text.split("</think>")[-1].split("<channel|>")[-1])
    shown = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert find_call_markers(shown) == [] and "tool_call" not in shown


@pytest.mark.parametrize("name,index,text", SAMPLES, ids=[f"{n}-{i}" for n, i, _ in SAMPLES])
def test_any_chunking_gives_the_whole_reply_events(name, index, text):
    expected = parse_events(text, name)
    assert stream(name, list(text)) == expected
    assert stream(name, [text]) == expected
    rng = random.Random(f"{name}-{index}")
    for _ in range(1000):
        assert stream(name, random_chunks(text, rng)) == expected


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_ordinary_prose_streams_unchanged_in_every_format(name):
    rng = random.Random(name)
    for answer in PROSE:
        if answer["topic"] == "quotes-call-syntax":
            continue
        text = answer["text"]
        assert stream(name, random_chunks(text, rng)) == [TextDelta(text)], answer["id"]


def test_a_partial_marker_is_held_back_until_resolved():
    tool_stream = ToolCallStream("hermes")
    assert tool_stream.feed("Let me check. <tool_") == [TextDelta("Let me check. ")]
    assert tool_stream.feed("call>\n{\"name\": \"get_exchange_rate\", ") == []
    assert tool_stream.feed('"arguments": {"base": "EUR", "quote": "JPY"}}\n</tool_call>') == [
        ToolCallEvent(RATE)
    ]
    assert tool_stream.close() == []


def test_no_text_delta_holds_any_part_of_a_marker():
    # Outside their calls the samples hold plain words, so any of these
    # characters in a delta would be a piece of a marker shown to the user.
    for name, _index, text in SAMPLES:
        lead = "" if FORMATS[name].start_only or text.startswith(("<think>", "<|channel>")) else "Sure. "
        tool_stream = ToolCallStream(name)
        deltas = [e.text for ch in lead + text for e in tool_stream.feed(ch) if isinstance(e, TextDelta)]
        deltas += [e.text for e in tool_stream.close() if isinstance(e, TextDelta)]
        assert "".join(deltas).strip().startswith(lead.strip())
        assert not any(char in delta for delta in deltas for char in "<>[]{}`|"), (name, deltas)


def test_prose_naming_a_tag_is_released_as_text_without_waiting_for_the_end():
    tool_stream = ToolCallStream("hermes")
    assert tool_stream.feed("Qwen uses <tool_call>") == [TextDelta("Qwen uses ")]
    assert tool_stream.feed(" tags") == [TextDelta("<tool_call> tags")]


def test_llama3_streams_text_unless_the_reply_opens_as_a_call():
    tool_stream = ToolCallStream("llama3-json")
    assert tool_stream.feed("Sure") == [TextDelta("Sure")]
    json_answer = ToolCallStream("llama3-json")
    assert json_answer.feed('{"city": "Lisbon"') == [TextDelta('{"city": "Lisbon"')]
    call = ToolCallStream("llama3-json")
    assert call.feed('{"name": "get_exchange_rate", "parameters": {"base": "EUR"') == []
    assert call.feed(', "quote": "JPY"}}') == []
    assert call.close() == [ToolCallEvent(RATE)]


def test_a_call_rehearsed_while_thinking_is_never_parsed():
    text = "<think>\nMaybe " + QWEN3_CALL + " would do.\n</think>\n\nOne euro is 162.4 yen."
    expected = [
        ReasoningDelta("\nMaybe " + QWEN3_CALL + " would do.\n"),
        TextDelta("\n\nOne euro is 162.4 yen."),
    ]
    assert stream("hermes", list(text)) == expected == parse_events(text, "hermes")


def test_gemma4_thought_channel_is_reasoning():
    text = "<|channel>thought\nCall " + GEMMA4_CALL + "?<channel|>Done."
    assert stream("gemma4", random_chunks(text, random.Random(1))) == [
        ReasoningDelta("Call " + GEMMA4_CALL + "?"),
        TextDelta("Done."),
    ]


def test_a_prompt_that_opened_the_thinking_channel():
    text = "weighing options</think>\n\n" + QWEN3_CALL
    assert stream("hermes", list(text), reasoning_open=True) == [
        ReasoningDelta("weighing options"),
        TextDelta("\n\n"),
        ToolCallEvent(RATE),
    ]


def test_truncated_reasoning_is_flushed_as_reasoning():
    assert stream("hermes", ["<think>still thin", "king"]) == [ReasoningDelta("still thinking")]


def test_a_call_still_open_at_close_raises():
    tool_stream = ToolCallStream("hermes")
    tool_stream.feed('Checking. <tool_call>\n{"name": "get_exchange_rate", "argu')
    with pytest.raises(UnparsedToolCall, match=r"the reply ended inside a tool call: .* at offset 10 was never closed"):
        tool_stream.close()


def test_a_bare_opening_token_at_close_raises():
    tool_stream = ToolCallStream("gemma4")
    assert tool_stream.feed("<|tool_call>") == []
    with pytest.raises(UnparsedToolCall, match="never closed"):
        tool_stream.close()


def test_a_closed_call_the_parser_cannot_read_raises_at_once():
    tool_stream = ToolCallStream("hermes")
    with pytest.raises(UnparsedToolCall, match=r"'<tool_call>' at offset 3 "):
        tool_stream.feed('Ok <tool_call>\n{"name": "f", "arguments": {"x": 1}, "extra": 2}\n</tool_call>')


def test_another_formats_call_raises_instead_of_leaking():
    with pytest.raises(UnparsedToolCall, match=r"the hermes format .* '<\|tool_call>' at offset 0 .* gemma4"):
        stream("hermes", list(GEMMA4_CALL))


def test_a_closing_tag_inside_an_argument_does_not_end_the_call():
    call = ParsedToolCall("write_note", {"text": "use </tool_call> to close, and ``` for code"})
    hermes = '<tool_call>\n{"name": "write_note", "arguments": ' + json.dumps(call.arguments) + "}\n</tool_call>"
    fenced = '```json\n{"name": "write_note", "arguments": ' + json.dumps(call.arguments) + "}\n```"
    gemma = '<|tool_call>call:write_note{text:<|"|>use <tool_call|> here<|"|>}<tool_call|>'
    assert stream("hermes", list(hermes)) == [ToolCallEvent(call)]
    assert stream("fenced-json", list(fenced)) == [ToolCallEvent(call)]
    assert stream("gemma4", list(gemma)) == [
        ToolCallEvent(ParsedToolCall("write_note", {"text": "use <tool_call|> here"}))
    ]


def test_a_mistral_call_is_emitted_as_soon_as_its_json_closes():
    tool_stream = ToolCallStream("mistral")
    assert tool_stream.feed('[TOOL_CALLS]get_exchange_rate[ARGS]{"base": "EUR", "quote": "JPY"') == []
    assert tool_stream.feed("} ok") == [ToolCallEvent(RATE), TextDelta(" ok")]


def test_cost_is_linear_in_the_reply_length():
    prose = " ".join(answer["text"] for answer in PROSE if answer["topic"] != "quotes-call-syntax")
    long_call = '<tool_call>\n{"name": "write_note", "arguments": {"text": "' + "x" * 50_000 + '"}}\n</tool_call>'
    for fmt, text in [("hermes", prose * 4), ("gemma4", prose * 4), ("hermes", long_call), ("llama3-json", '{"name": "f", "parameters": {"t": "' + "y" * 50_000 + '"}}')]:
        tool_stream = ToolCallStream(fmt)
        for char in text:
            tool_stream.feed(char)
        tool_stream.close()
        assert tool_stream.chars_examined <= 3 * len(text), fmt


def test_a_closed_stream_refuses_more():
    tool_stream = ToolCallStream("hermes")
    tool_stream.close()
    with pytest.raises(RuntimeError, match="already closed"):
        tool_stream.feed("x")


def test_a_tokenizer_picks_its_format(qwen3, gemma4):
    assert ToolCallStream(qwen3).format.name == "hermes"
    assert ToolCallStream(gemma4).format.name == "gemma4"


# --- adversarial input: the stream agrees with the whole-reply reading and reads once ---------

SOUP_PIECES = [
    "<tool_call>", "</tool_call>", "<function=f>", "<function=", "<|tool_call>", "call:f{a:", '<|"|>',
    "<tool_call|>", "[TOOL_CALLS]", "f[ARGS]", "[CALL_ID]", "<|python_tag|>", "<|tool_call_start|>",
    "<|tool_call_end|>", "```json", "```", "<think>", "</think>", "<|channel>thought\n", "<channel|>",
    '{"name": "f", "arguments": ', '{"name": "f", "parameters": ', "[f(", ")]", "{", "}", "[", "]",
    '"', "\\", " ", "\n", "\x1c", "a", "x=1", ";",
]


def outcome(read):
    """The events read() returns, or the type of the error it raises."""
    try:
        return read()
    except UnparsedToolCall as error:
        return type(error)


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from(SOUP_PIECES), max_size=12).map("".join),
    cuts=st.lists(st.integers(0, 200), max_size=6),
    fmt=st.sampled_from(sorted(FORMATS)),
)
def test_any_chunking_of_marker_soup_streams_to_the_whole_reply_events(text, cuts, fmt):
    # Before the held openings kept their place, a bare literal at close
    # ('<function=', '```json') crashed with AttributeError, and
    # '<|tool_call> ' was released as text in one chunking while the whole
    # reply reads it as a call cut short.
    expected = outcome(lambda: parse_events(text, fmt))
    bounds = sorted({cut for cut in cuts if cut < len(text)} | {0, len(text)})
    for pieces in ([text], list(text), [text[a:b] for a, b in zip(bounds, bounds[1:])]):
        assert outcome(lambda: stream(fmt, pieces)) == expected, (fmt, pieces)


@pytest.mark.parametrize(
    "text",
    ["<function=", "```json", "Then ```json", "[TOOL_CALLS]get_rate", '```json\n{"name": "f"'],
)
def test_an_opening_that_never_completes_is_text_at_close(text):
    assert stream("hermes", [text]) == [TextDelta(text)] == parse_events(text, "hermes")


def test_a_cut_off_opener_followed_by_whitespace_is_held_until_the_end_decides():
    with pytest.raises(UnparsedToolCall, match="never closed"):
        stream("gemma4", ["<|tool_call> ", " \n"])
    tool_stream = ToolCallStream("gemma4")
    assert tool_stream.feed("<|tool_call> ") == []
    assert tool_stream.feed(" is the tag") == [TextDelta("<|tool_call>  is the tag")]


HELD_OPENINGS = {
    "hermes": "<tool_call>" + " " * 20_000 + "x",
    "fenced-json": "```json" + " " * 20_000 + "x",
    "mistral": "[TOOL_CALLS]" + "a" * 20_000 + " ok",
    "llama3-json": '{"name": "' + "a" * 20_000 + " ok",
    "pythonic": "[" + " " * 20_000 + "x",
    "gemma4": "<|tool_call>" + " " * 20_000 + "x",
}


@pytest.mark.parametrize("fmt", sorted(HELD_OPENINGS))
def test_a_long_held_opening_is_read_once_whatever_the_chunking(fmt):
    # A stream that re-read its held text from the start on every chunk
    # examined about len**2 / 2 / chunk characters here (tens of millions).
    text = HELD_OPENINGS[fmt]
    rng = random.Random(fmt)
    tool_stream = ToolCallStream(fmt)
    events = []
    for piece in random_chunks(text, rng):
        events += tool_stream.feed(piece)
    assert merge_deltas(events + tool_stream.close()) == [TextDelta(text)]
    assert tool_stream.chars_examined <= 3 * len(text)


def test_a_long_mistral_call_id_is_read_once():
    text = "[TOOL_CALLS]get_exchange_rate[CALL_ID]" + "a" * 20_000 + '[ARGS]{"base": "EUR", "quote": "JPY"}'
    tool_stream = ToolCallStream("mistral")
    pieces = [text[start : start + 7] for start in range(0, len(text), 7)]
    events = [event for piece in pieces for event in tool_stream.feed(piece)]
    assert merge_deltas(events + tool_stream.close()) == parse_events(text, "mistral")
    assert tool_stream.chars_examined <= 3 * len(text)


def test_empty_deltas_neither_show_nor_separate_runs():
    events = [TextDelta("a"), ReasoningDelta(""), TextDelta("b"), ToolCallEvent(RATE), TextDelta("")]
    assert merge_deltas(events) == [TextDelta("ab"), ToolCallEvent(RATE)]
