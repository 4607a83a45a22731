"""A big JSON argument is decoded about once, whichever format carries it.

The extents find a small value's end with the C decoder and hand the value
to the reader as an argument (``Extent.found``, ``jsonbody.decode_at``), and give the
decoder growing windows rather than the whole buffer. Counted here: the
characters ``json.JSONDecoder.raw_decode`` read, to a value's end or to
where it failed (work, not time).
"""

from __future__ import annotations

import json

import pytest

from templatestudio.calls import ParsedToolCall
from templatestudio.canonical_runs import ARGUMENTS_LIMIT
from templatestudio.engine import read_events
from templatestudio.events import ToolCallEvent
from templatestudio.formats import FORMATS
from templatestudio.wire.base import FoundCalls, FoundJSON
from templatestudio.wire.jsonbody import decode_at

SIZE = 200_000
SHAPES = {
    "one long string": {"text": "x" * SIZE},
    "many short strings": {"items": ["abcdefgh"] * (SIZE // 12)},
    "escapes": {"t": 'a"b\\c\n' * (SIZE // 12)},
}


@pytest.fixture
def decoded_chars(monkeypatch):
    seen: list[int] = []
    real = json.JSONDecoder.raw_decode

    def counting(self, text, idx=0):
        index = idx
        # What the decoder read: up to the value's end, or to where it failed.
        try:
            value, end = real(self, text, index)
        except json.JSONDecodeError as error:
            # An unterminated string is reported where it starts, found at the text's end.
            seen.append((len(text) if error.msg.startswith("Unterminated string") else error.pos) - index)
            raise
        seen.append(end - index)
        return value, end

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counting)
    return seen


JSON_BODIED = [name for name, fmt in FORMATS.items() if not fmt.string_arguments]


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", JSON_BODIED)
def test_a_big_argument_is_decoded_about_once(name, shape, decoded_chars):
    fmt, arguments = FORMATS[name], SHAPES[shape]
    text = fmt.write_call(ParsedToolCall("f", arguments))
    read_events("", fmt)  # the machine's tables and run shape are made once per format: not this reply's work
    decoded_chars.clear()
    events = read_events(text, fmt)
    assert [e.call.arguments for e in events if isinstance(e, ToolCallEvent)] == [arguments]
    # One decode of the payload, plus the windows a cut-off first try cost (4 K, 64 K, and the
    # run shortcut's window of canonical_runs.ARGUMENTS_LIMIT).
    assert sum(decoded_chars) <= len(text) + 70_000 + ARGUMENTS_LIMIT, (name, shape, decoded_chars[:8])


# Formats whose call ends with a closer of its own: the first character of a closer ends the
# decoder's first window (a valid value holds it only in its strings), even where it starts the
# call's closer and the extent watches the section's (Kimi K2, PLaMo 3: three windows before).
CLOSED = [name for name in JSON_BODIED if FORMATS[name].wire.call.close]


@pytest.mark.parametrize("name", CLOSED)
def test_a_closer_ends_the_first_window_of_a_big_argument(name, monkeypatch):
    fmt, arguments = FORMATS[name], {"text": "x" * SIZE}
    text = fmt.write_call(ParsedToolCall("f", arguments))
    failed = []
    real = json.JSONDecoder.raw_decode

    def counting(self, text, idx=0):
        try:
            return real(self, text, idx)
        except json.JSONDecodeError:
            failed.append(idx)
            raise

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counting)
    events = read_events(text, fmt)
    assert [e.call.arguments for e in events if isinstance(e, ToolCallEvent)] == [arguments]
    # At most the run shortcut's cut-off window (canonical_runs.ARGUMENTS_LIMIT) fails.
    assert len(failed) <= 1, (name, len(failed))


def test_a_found_value_is_used_only_where_it_starts():
    region = '<x>{"a": 1} {"b": 2}'
    found = FoundJSON(3, {"a": "remembered"}, 11)
    assert decode_at(region, 3, found) == ({"a": "remembered"}, 11)
    assert decode_at(region, 12, found) == ({"b": 2}, len(region))  # another value: decoded
    assert decode_at(region, 3) == ({"a": 1}, 11)  # nothing handed over: decoded
    assert decode_at(region, 3, FoundCalls([])) == ({"a": 1}, 11)  # calls are not a JSON value
