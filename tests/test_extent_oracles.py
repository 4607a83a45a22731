"""A tag extent with JSON strings ends just past the first closer outside its strings, however the text arrives.

The oracle below walks the region one character at a time (in a string
or not, a backslash taking the next character with it) and is the whole
definition; ``TagExtent`` reaches the same end with searches, one match
that crosses text and whole strings, a look for a closer before it scans,
and a decode of a value when the region is long. The text is drawn from
the characters that matter (quotes, backslashes, the closers and their
pieces, brackets), so closers inside strings, escaped quotes, runs of
backslashes and closers cut by a chunk's end are common, and fed whole
and in random chunks.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from templatestudio.formats import FORMATS
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.value_extent import ValueExtent, value_extent


def outside_strings(text: str, index: int):
    """Each (index, character) from index on that stands outside the JSON strings (their quotes passed over too)."""
    in_string = False
    while index < len(text):
        char = text[index]
        if in_string:
            if char == "\\":
                index += 2
                continue
            in_string = char != '"'
        elif char == '"':
            in_string = True
        else:
            yield index, char
        index += 1


def oracle_end(text: str, skip: int, closes: tuple[str, ...]) -> int | None:
    """Index just past the first closer outside strings from skip on (the longest there), or None."""
    for index, _ in outside_strings(text, skip):
        here = [item for item in closes if text.startswith(item, index)]
        if here:
            return index + max(map(len, here))
    return None


CLOSER_SETS = [("</tool_call>",), ("<|call|>", "<|end|>"), ("]",), ("\n</tool_call>", "</tool_call>")]

pieces = st.sampled_from(['"', "\\", "\\\\", '\\"', "a", " ", "{", "}", "[", ":", ",", "<", "/", "|", "\n",
                          "</", "</tool_", "tool_call>", "<|", "call|>", "end|>", '{"a": "', '"}',
                          # whole strings holding a closer: a chunk may end right after one
                          '"x</tool_call>"', '"<|end|>"', '"]"', '"\\"</tool_call>"'])


@settings(max_examples=1000)
@given(closes=st.sampled_from(CLOSER_SETS), parts=st.lists(pieces, max_size=40), tail=st.lists(pieces, max_size=8),
       cuts=st.lists(st.integers(min_value=1, max_value=24), max_size=60))
def test_a_json_tag_extent_ends_where_the_oracle_does_whole_and_in_chunks(closes, parts, tail, cuts):
    opener = "<tool_call>"
    # A closer in the middle, so that most regions do close (and the tail after it is never read).
    text = opener + "".join(parts) + closes[0] + "".join(tail)
    expected = oracle_end(text, len(opener), closes)

    whole = TagExtent(len(opener), closes if len(closes) > 1 else closes[0], "json")
    assert whole.advance(text, 0, True) == expected

    # In random chunks, and one character at a time (every boundary: right after a quote, inside a closer).
    for sizes in (iter(cuts), iter(lambda: 1, None)):
        chunked = TagExtent(len(opener), closes if len(closes) > 1 else closes[0], "json")
        end, at = None, 0
        while end is None and at < len(text):
            at = min(len(text), at + next(sizes, 5))
            end = chunked.advance(text[:at], 0, at == len(text))
        assert end == expected, (text, end, expected)


def value_oracle_end(text: str, skip: int, units: tuple[str, ...], stops: tuple[str, ...]) -> int | None:
    """Where a value extent ends: just past the first bracketed value after skip, or just before a stop literal
    met before the value opens; head units before it are passed over whole; None while neither came."""
    index = skip
    while index < len(text):
        unit = next((item for item in units if text.startswith(item, index)), None)
        if unit is not None:
            index += len(unit)
            continue
        if any(text.startswith(item, index) for item in stops):
            return index  # (known once the whole stop literal is in: see known_at)
        if text[index] in "{[":
            break
        index += 1
    else:
        return None
    depth = 0
    for index, char in outside_strings(text, index):
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


VALUE_EXTENTS = [
    # (opener, head units, stop literals): Mistral's call, Llama 3's <|python_tag|> call, a bare value.
    ("[TOOL_CALLS]", ("[ARGS]", "[CALL_ID]"), ("[TOOL_CALLS]", "</s>")),
    ("<|python_tag|>", (), ("<|eom_id|>", "<|eot_id|>")),
    ("", (), ()),
]

value_pieces = st.sampled_from(['"', "\\", '\\"', "\\\\", "a", " ", ":", ",", "{", "}", "[", "]", "get", "[ARGS]",
                                "[AR", "GS]", "[CALL_ID]", "[TOOL_CALLS]", "[TOOL_", "CALLS]", "</s>", "</", "<|eom_id|>",
                                "<|eo", "m_id|>", "<|eot_id|>", '"x}"', '"]"', '{"a": "', '"}', '"\\\\"}'])


@settings(max_examples=1000)
@given(extent=st.sampled_from(VALUE_EXTENTS), parts=st.lists(value_pieces, max_size=40),
       cuts=st.lists(st.integers(min_value=1, max_value=24), max_size=60))
def test_a_value_extent_ends_where_the_oracle_does_whole_and_in_chunks(extent, parts, cuts):
    opener, units, stops = extent
    text = opener + "".join(parts)
    expected = value_oracle_end(text, len(opener), units, stops)
    # The stream must say so as soon as the text up to the end is in (a stop literal: the whole literal).
    stop = next((item for item in stops if expected is not None and text.startswith(item, expected)), "")
    known_at = None if expected is None else expected + len(stop)
    for sizes in (None, iter(cuts), iter(lambda: 1, None)):
        found = value_extent(len(opener), head_units=units, stop_at=stops)()
        if sizes is None:
            end = found.advance(text, 0, True)
        else:
            end, at = None, 0
            while end is None and at < len(text):
                at = min(len(text), at + next(sizes, 5))
                end = found.advance(text[:at], 0, at == len(text))
                assert end is not None or known_at is None or at < known_at, (text, at, known_at)
        assert end == expected, (text, sizes is None, end, expected)


def _may_begin_json(text: str) -> bool:
    """Own oracle: whether a JSON value may start with text (only a bracket's start matters here)."""
    if not text or text[0] not in "{[":
        return False
    rest = text[1:].lstrip(" \t\n\r")
    return not rest or rest[0] in ('"}' if text[0] == "{" else '"{[]-0123456789tfn')


def test_no_value_extent_head_or_stop_literal_begins_a_json_value():
    """ValueExtent does not try the decoder where a head unit or stop literal stands: none may begin a value."""
    seen = 0
    for fmt in FORMATS.values():
        for opener in fmt.openers:
            extent = opener.extent()
            if isinstance(extent, ValueExtent):
                for literal in extent._heads:
                    seen += 1
                    assert not _may_begin_json(literal), (fmt.name, literal)
    assert seen and _may_begin_json("[ 1") and not _may_begin_json("[TOOL_CALLS]")
