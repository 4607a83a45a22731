"""The XML wires' one-match step reads what the value-by-value search reads (``wire.xml_plain``).

The common call (no ``<`` in a value) is matched whole, by the extent that
finds a call's end and by the reader, instead of searching each value's
end. That is a shortcut, so it is held here to the search it stands for,
over generated text made of each wire's own markup, bits of it, plain
text, newlines and stray ``<`` and ``>``, and written calls whose values
hold the same:

- an extent that may take the step ends the region where one without it
  ends it, read whole or in random chunks;
- ``read_invoke`` (the named-element wires) and GLM's reader give what
  their searching readers give: the same call and offset, or the same
  refusal.
"""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall
from templatestudio.formats import FORMATS
from templatestudio.formats import glm_xml
from templatestudio.wire import named_pairs
from templatestudio.wire.arguments import XmlParameters
from templatestudio.wire.base import CallSyntaxError
from templatestudio.wire.shape import Invoke
from templatestudio.wire.xml_extent import ValueAwareExtent
from templatestudio.wire.xml_params import read_invoke, read_invoke_searched

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def pieces(fmt) -> list[str]:
    """What generated text is made of: the format's markup, its halves, text, whitespace, stray brackets."""
    wire = fmt.wire
    markup = [*wire.inner_literals, *wire.closers, wire.call.open, *wire.stop_tokens]
    markup = [literal for literal in markup if literal]
    halves = [literal[: len(literal) // 2] for literal in markup if len(literal) > 1]
    return [*markup, *halves, "k", "EUR", "a b", " ", "\n", "\n\n", "<", ">", "/", "=", '"']


def plain_extents() -> list[tuple[str, object]]:
    """(format, opener) for each opener whose extent may take the one-match step."""
    found = []
    for fmt in FORMATS.values():
        for opener in fmt.openers:
            extent = opener.extent()
            if isinstance(extent, ValueAwareExtent) and extent.plain is not None:
                found.append((fmt.name, opener))
    return found


PLAIN_EXTENTS = plain_extents()


def test_the_step_is_taken_by_the_xml_wires():
    """The step is not dead code: the XML wires whose small-call speed it serves use it."""
    names = {name for name, _ in PLAIN_EXTENTS}
    for fmt in FORMATS.values():
        if isinstance(fmt.wire.arguments, XmlParameters) and isinstance(fmt.wire.name, Invoke):
            for opener in fmt.openers:
                if isinstance(opener.extent(), ValueAwareExtent):
                    assert fmt.name in names
    assert glm_xml.FORMAT.name in names


def written_or_pieces(fmt, draw) -> str:
    """A call the format writes (its values made of pieces), perhaps cut or spliced, or pieces alone."""
    parts = pieces(fmt)
    value = st.lists(st.sampled_from(parts), max_size=6).map("".join)
    if draw(st.booleans()):
        arguments = draw(st.dictionaries(st.sampled_from(["a", "base", "k"]), value, max_size=3))
        text = fmt.write_call(ParsedToolCall("get_exchange_rate", arguments))
        if draw(st.booleans()):  # splice pieces in somewhere
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(value) + text[at:]
        return text + draw(value)
    return "".join(draw(st.lists(st.sampled_from(parts), max_size=25)))


def end_of(extent, text: str, cuts: list[int]) -> int | None:
    """Where the extent ends the region text[0:] when fed up to each cut, then whole and final."""
    for cut in [*cuts, len(text)]:
        end = extent.advance(text[:cut], 0, False)
        if end is not None:
            return end
    return extent.advance(text, 0, True)


@pytest.mark.parametrize(("name", "opener"), PLAIN_EXTENTS, ids=[f"{n}-{o.literal}" for n, o in PLAIN_EXTENTS])
@SETTINGS
@given(data=st.data())
def test_the_extent_ends_a_call_where_the_search_alone_ends_it(name, opener, data):
    fmt = FORMATS[name]
    body = written_or_pieces(fmt, data.draw)
    text = body if body.startswith(opener.literal) else opener.literal + body
    cuts = sorted(data.draw(st.lists(st.integers(1, max(1, len(text))), max_size=5)))
    stepping = opener.extent()
    searching = copy.copy(stepping)
    searching.plain = None
    assert end_of(stepping, text, cuts) == end_of(searching, text, cuts)
    # Read whole, the step decides at the first look.
    whole, alone = opener.extent(), copy.copy(opener.extent())
    alone.plain = None
    assert end_of(whole, text, []) == end_of(alone, text, [])


def invoke_formats() -> list[str]:
    return [fmt.name for fmt in FORMATS.values()
            if isinstance(fmt.wire.arguments, XmlParameters) and fmt.wire.arguments.typed is None
            and isinstance(fmt.wire.name, Invoke)]


def outcome(read, *args, **kwargs):
    try:
        return read(*args, **kwargs)
    except CallSyntaxError as error:
        return ("refused", str(error))


@pytest.mark.parametrize("name", invoke_formats())
@SETTINGS
@given(data=st.data())
def test_read_invoke_reads_what_its_search_reads(name, data):
    fmt = FORMATS[name]
    wire = fmt.wire
    body = written_or_pieces(fmt, data.draw)
    call_close = wire.call.close or None
    if call_close and data.draw(st.booleans()):
        # A wrapped call: the region ends at the call's closer, and the values see it.
        region = body + call_close
        end = len(body)
    else:
        call_close, region, end = None, body, len(body)
    args = (region, 0, end, wire.name, wire.arguments)
    assert outcome(read_invoke, *args, call_close=call_close) == outcome(read_invoke_searched, *args,
                                                                          call_close=call_close)


@SETTINGS
@given(data=st.data())
def test_glm_reads_what_its_search_reads(data):
    body = written_or_pieces(glm_xml.FORMAT, data.draw)
    if body.startswith(glm_xml.OPEN):
        body = body[len(glm_xml.OPEN):]
    if body.endswith(glm_xml.CLOSE):
        body = body[: -len(glm_xml.CLOSE)]
    region = glm_xml.OPEN + body + glm_xml.CLOSE
    fmt = glm_xml.FORMAT
    (opener,) = fmt.openers
    assert outcome(fmt.read_region, region, opener, None) == outcome(named_pairs._read_searched, region, fmt.wire)


def test_a_value_holding_markup_is_left_to_the_search():
    """The step declines what it cannot read, and the search reads it: a value holding a closer."""
    fmt = FORMATS["qwen-xml"]
    text = fmt.write_call(ParsedToolCall("f", {"a": "x</parameter>y"}))
    opener = next(o for o in fmt.openers if text.startswith(o.literal))
    extent = opener.extent()
    assert extent.plain.match(text) is None
    assert end_of(extent, text, []) == len(text.rstrip())


def test_random_chunkings_of_small_calls_end_each_call_once():
    """Many small calls streamed in random chunks: each region ends at its own closer, as read whole."""
    rng = random.Random(7)
    for _, opener in PLAIN_EXTENTS:
        fmt = next(f for f in FORMATS.values() if opener in f.openers)
        text = fmt.write_call(ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"}))
        cuts = sorted(rng.sample(range(1, len(text)), 5))
        assert end_of(opener.extent(), text, cuts) == end_of(opener.extent(), text, []), fmt.name
