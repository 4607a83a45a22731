"""Streaming: no marker reaches the user, calls arrive whole, any chunking gives the same events.

Samples come from the registry. The property that the stream equals the
whole-text read for arbitrary strings lives in test_reading_properties.py;
here are the stream's own promises, each shown on the registry's samples or
on one named case.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from layout_oracle import laid_out  # the tests' own statement of the layout rule
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.literal_search import REGEX_FIRST_LOOK
from templatestudio.detect import resolve_format
from templatestudio.formats import FORMATS, UnknownFormat
from templatestudio.leaks import find_call_markers
from templatestudio.resumable_match import MORE
from templatestudio.stream import (
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    ToolCallStream,
    merge_deltas,
)

SAMPLES = [(name, i) for name, fmt in FORMATS.items() for i in range(len(fmt.samples))]
SAMPLE_IDS = [f"{n}-{i}" for n, i in SAMPLES]
PROSE = json.loads((Path(__file__).parent / "fixtures" / "prose_answers.json").read_text(encoding="utf-8"))["answers"]
ORDINARY = [answer for answer in PROSE if answer["topic"] != "quotes-call-syntax"]
RATE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
HERMES_CALL = FORMATS["hermes"].samples[0].text
GEMMA4_CALL = FORMATS["gemma4"].samples[0].text


def stream(fmt, pieces, **options) -> list:
    tool_stream = ToolCallStream(fmt, **options)
    events = [event for piece in pieces for event in tool_stream.feed(piece)]
    return merge_deltas(events + tool_stream.close())


def outcome(read):
    try:
        return read()
    except UnparsedToolCall as error:
        return ("raises", str(error))


def random_chunks(text: str, rng: random.Random) -> list[str]:
    pieces, position = [], 0
    while position < len(text):
        size = rng.randint(1, 16)
        pieces.append(text[position : position + size])
        position += size
    return pieces


def shown(events: list) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


# --- the samples ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "index"), SAMPLES, ids=SAMPLE_IDS)
def test_whole_reply_events_are_the_samples_calls_and_show_no_marker(name, index):
    fmt = FORMATS[name]
    sample = fmt.samples[index]
    events = read_events(sample.text, FORMATS[name])
    assert [e.call for e in events if isinstance(e, ToolCallEvent)] == list(sample.calls)
    assert find_call_markers(shown(events)) == []
    for opener in fmt.openers:
        if len(opener.literal) > 1:  # "{" and "[" are everybody's punctuation
            assert opener.literal not in shown(events), (opener.literal, shown(events))


@pytest.mark.parametrize(("name", "index"), SAMPLES, ids=SAMPLE_IDS)
def test_any_chunking_gives_the_whole_reply_events(name, index):
    text = FORMATS[name].samples[index].text
    expected = read_events(text, FORMATS[name])
    assert stream(name, list(text)) == expected
    assert stream(name, [text]) == expected
    rng = random.Random(f"{name}-{index}")
    for _ in range(100):
        assert stream(name, random_chunks(text, rng)) == expected


@pytest.mark.parametrize(("name", "index"), SAMPLES, ids=SAMPLE_IDS)
def test_no_delta_shows_what_later_becomes_a_call(name, index):
    """Text is released piece by piece, and every piece released stays text."""
    fmt = FORMATS[name]
    text = fmt.samples[index].text
    lead = "" if any(o.start_only for o in fmt.openers) or (fmt.reasoning and text.startswith(fmt.reasoning[0])) else "Sure, one moment. "
    tool_stream = ToolCallStream(name)
    released = [e.text for ch in lead + text for e in tool_stream.feed(ch) if isinstance(e, TextDelta)]
    released += [e.text for e in tool_stream.close() if isinstance(e, TextDelta)]
    assert "".join(released) == shown(read_events(lead + text, fmt))
    # The lead's inner spaces are prose and kept; its last space may touch a call (layout).
    assert "".join(released).startswith(lead.rstrip(" "))
    assert find_call_markers("".join(released)) == []


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_ordinary_prose_streams_unchanged_in_every_format(name):
    rng = random.Random(name)
    for answer in ORDINARY:
        text = answer["text"]
        assert stream(name, random_chunks(text, rng)) == [TextDelta(text)], answer["id"]


# --- holding back, releasing -------------------------------------------------------------------


def test_a_partial_marker_is_held_back_until_resolved():
    tool_stream = ToolCallStream("hermes")
    # The space before "<tool_" is held too: it is layout if a call follows.
    assert tool_stream.feed("Let me check. <tool_") == [TextDelta("Let me check.")]
    assert tool_stream.feed('call>\n{"name": "get_exchange_rate", ') == []
    assert tool_stream.feed('"arguments": {"base": "EUR", "quote": "JPY"}}\n</tool_call>') == [ToolCallEvent(RATE)]
    assert tool_stream.close() == []


def test_prose_naming_a_tag_is_released_as_text_without_waiting_for_the_end():
    tool_stream = ToolCallStream("hermes")
    # The space before the tag is held until the tag turns out to be prose; then it is the model's.
    assert tool_stream.feed("Qwen uses <tool_call>") == [TextDelta("Qwen uses")]
    # Two words after the tag could still be a call's name and a key with markup glued on
    # (``<tool_call> f\ncity</arg_key>``: a malformed call, which raises): the third word settles it.
    assert tool_stream.feed(" tags") == []
    assert tool_stream.feed(" for") == []
    assert tool_stream.feed(" calls") == [TextDelta(" <tool_call> tags for calls")]
    assert tool_stream.close() == []


def test_llama3_streams_text_unless_the_reply_opens_as_a_call():
    tool_stream = ToolCallStream("llama3-json")
    assert tool_stream.feed("Sure") == [TextDelta("Sure")]
    json_answer = ToolCallStream("llama3-json")
    assert json_answer.feed('{"city": "Lisbon"') == [TextDelta('{"city": "Lisbon"')]
    call = ToolCallStream("llama3-json")
    assert call.feed('{"name": "get_exchange_rate", "parameters": {"base": "EUR"') == []
    assert call.feed(', "quote": "JPY"}}') == [ToolCallEvent(RATE)]
    assert call.close() == []


def test_a_cut_off_opener_followed_by_whitespace_is_held_until_the_end_decides():
    with pytest.raises(UnparsedToolCall, match="never closed"):
        stream("gemma4", ["<|tool_call> ", " \n"])
    tool_stream = ToolCallStream("gemma4")
    assert tool_stream.feed("<|tool_call> ") == []
    assert tool_stream.feed(" is the tag") == [TextDelta("<|tool_call>  is the tag")]


def test_an_unwrapped_function_tag_is_prose_after_prose_and_a_cut_call_at_the_reply_start():
    # Without <tool_call> the tag is a call only once a parameter, its
    # closer or a JSON body follows: prose that goes on past it names it. A
    # reply that starts with it (after whitespace) and ends there was cut in a
    # call: only a call starts so (issue 23, malformed means raise). After
    # prose, a reply may end on it: vLLM's own test docstrings do.
    for text in ("See <function=get_weather> in the docs.", "Use <function=f> tags.", "<function=name> names it",
                 "See <function=", "See <function=get_weather>", "tool calls that start with <function=...>\n    "):
        assert stream("hermes", [text]) == [TextDelta(text)] == read_events(text, FORMATS["hermes"])
    for text in ("<function=", " \n<function=get_wea", "<function=get_weather>\n<param"):
        for read in (lambda: stream("hermes", list(text)), lambda: read_events(text, FORMATS["hermes"])):
            with pytest.raises(UnparsedToolCall, match="<function="):
                read()


def test_an_opening_cut_short_at_the_end_raises():
    # Issue 11: a reply that ends inside what opened as a call is an error, not text.
    for name, text in [("fenced-json", '```json\n{"name": "f"'), ("mistral", "[TOOL_CALLS]get_rate"),
                       ("gemma4", "Checking. <|tool_call>cal"), ("qwen-xml", "<tool_call>\n<func")]:
        with pytest.raises(UnparsedToolCall, match="never closed"):
            stream(name, list(text))


# --- reasoning -------------------------------------------------------------------------------------


def test_a_call_rehearsed_while_thinking_is_never_read():
    text = "<think>\nMaybe " + HERMES_CALL + " would do.\n</think>\n\nOne euro is 162.4 yen."
    raw = [ReasoningDelta("\nMaybe " + HERMES_CALL + " would do.\n"), TextDelta("\n\nOne euro is 162.4 yen.")]
    expected = [ReasoningDelta("Maybe " + HERMES_CALL + " would do."), TextDelta("One euro is 162.4 yen.")]
    assert laid_out(raw) == expected
    assert stream("hermes", list(text)) == expected == read_events(text, FORMATS["hermes"])


def test_gemma4_thought_channel_is_reasoning():
    text = "<|channel>thought\nCall " + GEMMA4_CALL + "?<channel|>Done."
    assert stream("gemma4", random_chunks(text, random.Random(1))) == [
        ReasoningDelta("Call " + GEMMA4_CALL + "?"),
        TextDelta("Done."),
    ]


def test_a_prompt_that_opened_the_thinking_channel():
    text = "weighing options</think>\n\n" + HERMES_CALL
    # The blank line between the block and the call is layout: no text event at all.
    assert stream("hermes", list(text), reasoning_open=True) == [
        ReasoningDelta("weighing options"),
        ToolCallEvent(RATE),
    ]


def test_truncated_reasoning_is_flushed_as_reasoning():
    assert stream("hermes", ["<think>still thin", "king"]) == [ReasoningDelta("still thinking")]


def test_a_think_closer_inside_an_argument_does_not_end_anything():
    call = ParsedToolCall("write_note", {"text": "say </think> here"})
    text = "<think>\nok\n</think>\n" + FORMATS["hermes"].write_call(call)
    raw = [ReasoningDelta("\nok\n"), TextDelta("\n"), ToolCallEvent(call)]
    assert stream("hermes", list(text)) == laid_out(raw) == [ReasoningDelta("ok"), ToolCallEvent(call)]


# --- refusals --------------------------------------------------------------------------------------


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


def test_a_closed_call_the_reader_cannot_read_raises_at_once():
    tool_stream = ToolCallStream("hermes")
    with pytest.raises(UnparsedToolCall, match=r"cannot read the tool call at offset 3 \('<tool_call>'\): .*'extra'"):
        tool_stream.feed('Ok <tool_call>\n{"name": "f", "arguments": {"x": 1}, "extra": 2}\n</tool_call>')


def test_another_formats_call_raises_instead_of_leaking():
    with pytest.raises(UnparsedToolCall, match=r"the hermes format .* '<\|tool_call>' at offset 0 .* gemma4"):
        stream("hermes", list(GEMMA4_CALL))


def test_a_closed_stream_refuses_more():
    tool_stream = ToolCallStream("hermes")
    tool_stream.close()
    with pytest.raises(RuntimeError, match="already closed"):
        tool_stream.feed("x")
    with pytest.raises(RuntimeError, match="already closed"):
        tool_stream.close()


# --- calls arrive whole, strings are strings -----------------------------------------------------


def test_a_closing_tag_inside_an_argument_does_not_end_the_call():
    call = ParsedToolCall("write_note", {"text": "use </tool_call> to close, and ``` for code"})
    hermes = '<tool_call>\n{"name": "write_note", "arguments": ' + json.dumps(call.arguments) + "}\n</tool_call>"
    fenced = '```json\n{"name": "write_note", "arguments": ' + json.dumps(call.arguments) + "}\n```"
    gemma = '<|tool_call>call:write_note{text:<|"|>use <tool_call|> here<|"|>}<tool_call|>'
    assert stream("hermes", list(hermes)) == [ToolCallEvent(call)]
    assert stream("fenced-json", list(fenced)) == [ToolCallEvent(call)]
    assert stream("gemma4", list(gemma)) == [ToolCallEvent(ParsedToolCall("write_note", {"text": "use <tool_call|> here"}))]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_split_escape_inside_a_string_reads_the_same(name):
    # A chunk that ends right after a backslash must not end the string
    # there (it once flipped quote parity in the bracket-counting extents).
    fmt = FORMATS[name]
    call = ParsedToolCall("write_note", {"text": 'a\\"b\\\\" c\\\\\\"d'})
    if fmt.limits_for(call.arguments):
        call = ParsedToolCall("write_note", {"text": "a\\b\\\\c"})
    text = fmt.write_call(call)
    whole = outcome(lambda: read_events(text, FORMATS[name]))
    for cut in range(len(text) + 1):
        assert outcome(lambda: stream(name, [text[:cut], text[cut:]])) == whole, cut


def test_a_mistral_call_is_emitted_as_soon_as_its_json_closes():
    tool_stream = ToolCallStream("mistral")
    assert tool_stream.feed('[TOOL_CALLS]get_exchange_rate[ARGS]{"base": "EUR", "quote": "JPY"') == []
    # The space right after the call is layout; the one inside the prose after it is kept.
    assert tool_stream.feed("} ok then") == [ToolCallEvent(RATE), TextDelta("ok then")]
    assert tool_stream.close() == []


def test_a_tokenizer_is_resolved_to_a_format_before_the_stream_not_by_it(qwen3, gemma4):
    assert ToolCallStream(resolve_format(qwen3, deadline=None)).format.name == "hermes"
    assert ToolCallStream(resolve_format(gemma4, deadline=None)).format.name == "gemma4"
    with pytest.raises(TypeError, match="resolve_format"):
        ToolCallStream(qwen3)
    with pytest.raises(UnknownFormat):
        ToolCallStream("no-such-format")


def test_empty_deltas_neither_show_nor_separate_runs():
    events = [TextDelta("a"), ReasoningDelta(""), TextDelta("b"), ToolCallEvent(RATE), TextDelta("")]
    assert merge_deltas(events) == [TextDelta("ab"), ToolCallEvent(RATE)]


# --- cost ---------------------------------------------------------------------------------------------


def test_cost_is_linear_in_the_reply_length():
    prose = " ".join(answer["text"] for answer in ORDINARY)
    long_call = FORMATS["hermes"].write_call(ParsedToolCall("write_note", {"text": "x" * 50_000}))
    long_llama = FORMATS["llama3-json"].write_call(ParsedToolCall("f", {"t": "y" * 50_000}))
    for fmt, text in [("hermes", prose), ("gemma4", prose), ("hermes", long_call), ("llama3-json", long_llama)]:
        tool_stream = ToolCallStream(fmt)
        for char in text:
            tool_stream.feed(char)
        tool_stream.close()
        assert tool_stream.chars_examined <= 3 * len(text), fmt


def held_openings() -> list[tuple[str, str]]:
    """(format, literal + one character) for every opener that a run of that character keeps undecided."""
    held = []
    for fmt in FORMATS.values():
        for opener in fmt.openers:
            for char in "a_ \n":
                if opener.automaton.scan().feed(opener.literal + char * 64)[0] == MORE:
                    held.append((fmt.name, opener.literal + char))
                    break
    return held


HELD = held_openings()


@pytest.mark.parametrize(("name", "start"), HELD, ids=[f"{n}-{s!r}" for n, s in HELD])
def test_a_long_held_opening_is_read_once_whatever_the_chunking(name, start):
    # A stream that re-read its held text from the start on every chunk
    # examined about len**2 / 2 / chunk characters here (tens of millions).
    text = start[:-1] + start[-1] * 20_000 + " ok"
    tool_stream = ToolCallStream(name)
    events = []
    try:
        for piece in random_chunks(text, random.Random(name)):
            events += tool_stream.feed(piece)
        result = merge_deltas(events + tool_stream.close())
    except UnparsedToolCall as error:
        result = ("raises", str(error))
    assert result == outcome(lambda: read_events(text, FORMATS[name]))
    # About two looks per character (the search, the extent) and one for
    # each opener the literal may start (each reads the held run once: where
    # several formats share the literal, apriel's and HY's '<tool_calls>',
    # each decides on its own) or a literal inside it may start (MiniMax M3's
    # ']<]minimax[>[<tool_call>' holds '<tool_call>': once it is prose, the
    # search goes on inside it), plus the regex's first look (at most
    # REGEX_FIRST_LOOK characters) for each: never a look per character per chunk.
    sharing = sum(1 for fmt in FORMATS.values() for opener in fmt.openers if opener.literal in start)
    assert tool_stream.chars_examined <= 2 * len(text) + 200 + sharing * (len(text) + REGEX_FIRST_LOOK)


def test_a_long_mistral_call_id_is_read_once():
    text = "[TOOL_CALLS]get_exchange_rate[CALL_ID]" + "a" * 20_000 + '[ARGS]{"base": "EUR", "quote": "JPY"}'
    tool_stream = ToolCallStream("mistral")
    pieces = [text[start : start + 7] for start in range(0, len(text), 7)]
    events = [event for piece in pieces for event in tool_stream.feed(piece)]
    assert merge_deltas(events + tool_stream.close()) == read_events(text, FORMATS["mistral"])
    assert tool_stream.chars_examined <= 3 * len(text)
