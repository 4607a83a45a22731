"""Where a JSON string ends (``wire.json_scan.json_string_end``), and the extents that use it (issue 23).

The string end is found at C speed by a regex whose look-behinds tell a
quote escaped by one, three or five backslashes from a closing one, with
longer runs counted. Checked here against the tests' own statement of the
rule (a walk that pairs each backslash with the character after it), on
generated bodies dense in quotes and backslash runs of every length, from
the body's start and from the escape boundaries a stream resumes at; and
against the C decoder on every string ``json.dumps`` writes. The extents'
quick path (a value decoded whole once a closer has arrived, after a head
such as DeepSeek's ``NAME<｜tool▁sep｜>``) must give the calls a whole
read gives, whatever the chunking.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import ToolCallEvent
from templatestudio.formats import FORMATS
from templatestudio.stream import ToolCallStream
from templatestudio.wire.json_scan import escape_resume_point, json_string_end, json_value_at
from templatestudio.wire.jsonbody import skip_space

# Quotes and backslashes in runs (a run of seven counts as one draw, so long runs are common).
PIECES = st.sampled_from(['"', "\\", "\\\\", "\\" * 3, "\\" * 5, "\\" * 6, "\\" * 7, "\\" * 12, "a", "é", "｜", "\n"])


def walked_end(text: str, position: int) -> int:
    """The rule, walked: a backslash escapes the next character; the first other quote ends the string."""
    index = position
    while index < len(text):
        if text[index] == "\\":
            index += 2
        elif text[index] == '"':
            return index + 1
        else:
            index += 1
    return -1


@given(st.lists(PIECES, max_size=30).map("".join), st.sampled_from(['"', 'x"', '"\\\\', '"\\\\\\\\']))
def test_the_end_is_where_the_walk_ends_it(body, before):
    # before: the opening quote, or a settled run of pairs a stream resumed after.
    text = before + body
    assert json_string_end(text, len(before)) == walked_end(text, len(before))


@given(st.lists(PIECES, max_size=30).map("".join), st.lists(st.integers(0, 40), max_size=4))
def test_resuming_at_each_chunk_end_finds_the_same_end(body, cuts):
    # A stream searches the text so far, then resumes where escape_resume_point says.
    text = '"' + body
    whole = json_string_end(text, 1)
    position = 1
    for cut in sorted({min(cut, len(text)) for cut in cuts} | {len(text)}):
        if cut < position:
            continue
        end = json_string_end(text[:cut], position)
        if end != -1:
            assert end == whole
            return
        position = escape_resume_point(text[:cut], position)
    assert whole == -1


@given(st.text(alphabet=st.sampled_from('"\\/ab\n\t\u00e9\u2028｜'), max_size=40), st.sampled_from(["", "}", '"', '\\"', " x"]))
def test_a_written_string_ends_where_the_decoder_ends_it(value, after):
    written = json.dumps(value, ensure_ascii=False)
    text = written + after
    end = json_string_end(text, 1)
    assert end == len(written)
    assert json.decoder.scanstring(text, 1)[1] == end


# Formats whose call region is a tag extent with a head before the JSON (the quick path after the head),
# one with the value at the region's start, and bracket-ended ones (the value extent).
SUBJECTS = ("deepseek-v3.1", "deepseek-v3", "kimi-k2", "functionary-v3.1", "hermes", "llama3-json", "mistral")


def calls_of(events) -> list[tuple[str, object]]:
    return [(event.call.name, event.call.arguments) for event in events if isinstance(event, ToolCallEvent)]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SUBJECTS), st.lists(PIECES | st.sampled_from(["<｜tool▁call▁end｜>", "<|tool_calls_section_end|>",
                                                                      "</tool_call>", "}", "]"]), max_size=40).map("".join),
       st.lists(st.integers(1, 64), min_size=1, max_size=6))
def test_a_streamed_call_reads_as_the_whole_reply_reads(name, body, sizes):
    fmt = FORMATS[name]
    arguments = {"code": body, "n": 1}
    text = fmt.write_call(ParsedToolCall("run", arguments))
    whole = calls_of(read_events(text, fmt))
    assert whole == [("run", arguments)]
    stream, events, at, turn = ToolCallStream(fmt), [], 0, 0
    while at < len(text):
        size = sizes[turn % len(sizes)]
        events += stream.feed(text[at : at + size])
        at, turn = at + size, turn + 1
    assert calls_of(events + stream.close()) == whole


# Pieces of JSON and of what surrounds a call's value: brackets, tokens, spaces, markers, prose.
VALUE_PIECES = st.sampled_from(["{", "}", "[", "]", '"a"', '"', ":", ",", " ", "\n", "1", "-", "true", "null", "nul",
                                "[null]", "[ false ]", '{"k": [null, -1]}',
                                "[TOOL_CALLS]", "<tool_call>", "x", "é", "\\"])


def decoded_or_none(text: str, index: int):
    """The oracle: the C decoder on the whole text at index, None where it refuses."""
    try:
        return json.JSONDecoder().raw_decode(text, index)
    except (ValueError, RecursionError):
        return None


@settings(max_examples=400)
@given(st.lists(VALUE_PIECES, max_size=40).map("".join), st.sampled_from([0, 1, 5, 64]))
def test_a_value_at_a_bracket_is_what_the_decoder_reads_there(text, window):
    # json_value_at's windows and its look at the first token inside a bracket are shortcuts: at
    # every bracket they must answer what the decoder answers on the whole text.
    for index, char in enumerate(text):
        if char in "{[":
            assert json_value_at(text, index, window) == decoded_or_none(text, index), (text, index)


@given(st.text(alphabet=" \t\n\r\x0b\x0c\u00a0\u2028x{", max_size=40), st.integers(min_value=0, max_value=45))
def test_skip_space_skips_json_whitespace_only(text, index):
    """skip_space against its definition: JSON's four whitespace characters, none other (not \\v, NBSP, U+2028)."""
    expected = index
    while expected < len(text) and text[expected] in " \t\n\r":
        expected += 1
    assert skip_space(text, index) == expected


# A text that is not ASCII (a marker past U+00FF, as DeepSeek's, or a letter past U+007F) is decoded
# from a slice cut after the window's last closing bracket (``_narrow_window``): values longer than the
# first window, with brackets inside their strings, make the windows grow past such cuts.
LONG_RUNS = st.builds(lambda count, char: char * count, st.integers(0, 6000), st.sampled_from('ab"\\中é}]{['))
JSON_VALUES = st.recursive(st.none() | st.integers() | LONG_RUNS,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(LONG_RUNS, inner, max_size=3),
                           max_leaves=6).filter(lambda value: isinstance(value, (list, dict)))
AROUND = st.sampled_from(["", "<｜tool▁call▁end｜>", "中", "é", " ", "}", "]", '"', "x" * 5000, "<｜tool▁sep｜>{"])


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES, st.lists(AROUND, max_size=4).map("".join), st.sampled_from(["", "中", "é"]),
       st.integers(0, 40), st.sampled_from([0, 100, 4096, 70000]))
def test_a_value_in_a_text_that_is_not_ascii_is_what_the_decoder_reads_there(value, after, before, cut, window):
    written = json.dumps(value, ensure_ascii=False)
    # Whole, or cut short by up to 40 characters (a value still open when the window or the text ends).
    text = before + written[: len(written) - cut] + after
    for index in (at for at in range(min(len(text), len(before) + 64)) if text[at] in "{["):
        assert json_value_at(text, index, window) == decoded_or_none(text, index), (index, window)
