"""A stream's JSON list is read item by item as it arrives, and gives the value ``json.loads`` gives the whole list.

``ValueExtent`` hands ``ListItems`` the item boundaries its bracket scan
finds; the reader then takes the list from the extent (``FoundJSON``)
instead of decoding the region at the list's last ``]``. The oracle is
``json.loads`` of the region. Lists are generated (nested values, strings
holding brackets and commas, whitespace everywhere), then broken by one
edit (a comma lost or replaced, or any character dropped, doubled or
replaced), and fed in random chunks with batches of a few characters, so
batch boundaries fall everywhere.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from templatestudio.events import ToolCallEvent
from templatestudio.formats import FORMATS
from templatestudio.reader import read_tool_calls
from templatestudio.stream import ToolCallStream
from templatestudio.wire import jsonbody, list_items, value_extent as value_extent_module
from templatestudio.wire.base import FoundJSON
from templatestudio.wire.value_extent import value_extent

space = st.sampled_from(["", " ", "\n", "  \t"])
scalars = st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.none(),
                    st.text(alphabet='ab[]{},:"\\ ', max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text("abc", max_size=2), inner, max_size=3)),
                      max_leaves=8)


@st.composite
def list_texts(draw) -> str:
    """A JSON list written with whitespace drawn around every item and comma, maybe broken by one edit."""
    items = draw(st.lists(values, max_size=8))
    text = "[" + draw(space)
    for number, item in enumerate(items):
        if number:
            text += draw(space) + "," + draw(space)
        text += json.dumps(item)
    text += draw(space) + "]"
    commas = [at for at, char in enumerate(text) if char == ","]
    if commas and draw(st.booleans()):  # a separator lost or replaced: the likeliest damage to a list
        at = draw(st.sampled_from(commas))
        text = text[:at] + draw(st.sampled_from(["", " ", "x", ":", ",,", "1"])) + text[at + 1:]
    elif draw(st.booleans()) and len(text) > 2:
        at = draw(st.integers(1, len(text) - 2))
        edit = draw(st.sampled_from(["drop", "double", "]", "}", "[", "{", ",", " ", "\"", ":", "x", "1"]))
        text = (text[:at] + text[at + 1:] if edit == "drop" else text[:at] + text[at] + text[at:]
                if edit == "double" else text[:at] + edit + text[at + 1:])
    return text


def _loads(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


@settings(max_examples=1500)
@given(text=list_texts(), every=st.integers(1, 12), cuts=st.lists(st.integers(1, 9), max_size=80))
def test_a_streamed_list_found_by_its_items_is_the_list_json_loads_reads(text, every, cuts):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(value_extent_module, "READ_EVERY", every)
        extent = value_extent(0)()
        end, at, sizes = None, 0, iter(cuts)
        while end is None and at < len(text):
            at = min(len(text), at + next(sizes, 3))
            end = extent.advance(text[:at], 0, at == len(text))
    whole = _loads(text[:end]) if end is not None else None
    found = extent.found
    if found is not None:
        assert type(found) is FoundJSON and (found.start, found.end) == (0, end)
        assert end is not None and text[end - 1] == "]"
        assert found.value == whole, (text, found.value, whole)
    else:  # a list that reads as JSON is always handed over (whole at once, or item by item)
        assert end is None or not isinstance(whole, list), (text, end, "not found")


def _counting(monkeypatch) -> list[int]:
    """Counts the characters every JSON decode in the reader and in ListItems is given."""
    decoded = [0]

    class Decoder:
        def raw_decode(self, text, index=0):
            decoded[0] += len(text) - index
            return json.JSONDecoder().raw_decode(text, index)

    class Json:
        @staticmethod
        def loads(text):
            decoded[0] += len(text)
            return json.loads(text)

    monkeypatch.setattr(jsonbody, "_DECODER", Decoder())
    monkeypatch.setattr(list_items, "json", Json)
    return decoded


def _calls(reply: str, fmt) -> int:
    try:
        return len(read_tool_calls(reply, fmt).calls)
    except ValueError:  # UnparsedToolCall: this opener takes no list
        return 0


def _list_formats():
    """(format, reply prefix) for each format whose calls may come as one JSON list after an opener literal."""
    one = json.dumps({"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}})
    found = []
    for fmt in FORMATS.values():
        for opener in fmt.openers:
            prefix = opener.literal[:-1] if opener.literal.endswith("[") else opener.literal
            reply = prefix + "[" + one + ", " + one + "]"
            if _calls(reply, fmt) == 2 and (fmt.name, prefix) not in found:
                found.append((fmt.name, prefix))
    return found


LIST_FORMATS = _list_formats()


def test_lists_of_calls_are_found_in_the_formats_that_write_them():
    assert {name for name, _ in LIST_FORMATS} >= {"xlam", "granite", "firefunction-v2"}, LIST_FORMATS


@pytest.mark.parametrize(("name", "prefix"), LIST_FORMATS)
def test_the_end_of_a_streamed_list_of_calls_decodes_only_its_last_items(name, prefix, monkeypatch):
    """The last token of a long list costs at most a batch's decoding, not the whole list's (counted characters)."""
    one = json.dumps({"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}})
    text = prefix + "[" + ", ".join([one] * 2000) + "]"
    decoded = _counting(monkeypatch)
    stream = ToolCallStream(FORMATS[name])
    events = []
    for start in range(0, len(text) - 1, 4):
        events += stream.feed(text[start : min(start + 4, len(text) - 1)])
    before = decoded[0]
    events += stream.feed(text[-1])
    events += stream.close()
    at_the_end = decoded[0] - before
    assert before > 0 and at_the_end <= 2 * list_items.READ_EVERY, (before, at_the_end)
    assert [event.call for event in events if isinstance(event, ToolCallEvent)] == read_tool_calls(text, FORMATS[name]).calls
