"""Which foreign markers a reader watches is a parameter, ``guard``, not the registry wired into the machine.

A machine watches its own format's openers first, then those of the
formats in its guard (by default every registered format). A made-up
format, passed in a guard and never added to the registry, whose literal
shares its start with several registered ones (``<tool_call``), must
change no registered format's reading of its own samples, of its near
misses and of replies its own writer writes, whole or fed a character at
a time; a call written in the made-up format is a leak exactly for the
readers and surveys that guard against it. And a guard without a format
lets that format's calls through as text.
"""

from __future__ import annotations

import json

import pytest

from templatestudio.calls import CallSpan, ParsedToolCall, UnparsedToolCall
from templatestudio.engine import Machine, read_events
from templatestudio.events import Marker, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.resumable_match import chars, literal, run
from templatestudio.stream import ToolCallStream
from templatestudio.wire.base import CallSyntaxError, Format, Opener, opener_pattern
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import decode_at
from format_relations import covers  # Llama 3 reads Phi-4-mini's objects

OPEN, CLOSE = "<tool_call:zz>", "</tool_call:zz>"


def _read(region: str, opener: Opener, found) -> list[CallSpan]:
    name_end = region.find(" ", len(OPEN))
    name = region[len(OPEN) : name_end]
    if name_end == -1 or not name.isidentifier():
        raise CallSyntaxError("expected a name and a space after the opener")
    arguments, stop = decode_at(region, name_end + 1, found)
    if not isinstance(arguments, dict) or region[stop:] != CLOSE:
        raise CallSyntaxError(f"expected a JSON object, then {CLOSE}")
    return [CallSpan(ParsedToolCall(name, arguments), 0, len(region))]


def _write(call: ParsedToolCall) -> str:
    # NAME, a space, the arguments: no {"name": ...} object, which bare-JSON formats would read.
    return f"{OPEN}{call.name} {json.dumps(call.arguments)}{CLOSE}"


MADE_UP = Format(
    name="made-up",
    description=f"{OPEN}NAME {{JSON arguments}}{CLOSE}, a format no model writes",
    openers=(Opener(OPEN, opener_pattern(OPEN, run(chars("[A-Za-z_]"), at_least=1), literal(" {")),
                    lambda: TagExtent(len(OPEN), CLOSE, "json")),),
    read_region=_read,
    write_call=_write,
    closers=(CLOSE,),
    response_template=None,
    no_response_template="made up for this test",
    reasoning=None,
    samples=(),
    near_misses=(),
    wire_limits=(),
    corpus_labels=(),
)
REGISTRY = tuple(FORMATS.values())
WITH_MADE_UP = (*REGISTRY, MADE_UP)
CALLS = (ParsedToolCall("get_rate", {"base": "EUR", "quote": "JPY"}), ParsedToolCall("ping", {}))
MADE_UP_CALL = _write(CALLS[0])


def outcome(read) -> tuple:
    try:
        return ("events", merge_deltas(read()))
    except UnparsedToolCall as error:
        return ("raises", str(error))


def whole(text: str, fmt, guard=None) -> tuple:
    return outcome(lambda: read_events(text, fmt, guard=guard))


def by_character(text: str, fmt, guard=None) -> tuple:
    def read():
        machine = Machine(fmt, guard=guard)
        return [event for char in text for event in machine.feed(char)] + machine.close()

    return outcome(read)


def own_texts(fmt) -> list[str]:
    """fmt's samples, near misses and replies its writer writes (one call, two, after prose)."""
    written = [fmt.write_call(call) for call in CALLS]
    replies = [written[0], "\n".join(written), "Let me look that up. " + written[1]]
    return [sample.text for sample in fmt.samples] + [miss.text for miss in fmt.near_misses] + replies


def test_the_made_up_format_reads_its_own_calls_and_shares_a_literal_start_with_registered_ones():
    assert whole(MADE_UP_CALL, MADE_UP) == ("events", [ToolCallEvent(CALLS[0])])
    assert MADE_UP.name not in FORMATS and MADE_UP not in REGISTRY
    sharing = [fmt.name for fmt in REGISTRY if any(marker.startswith("<tool_call") for marker in fmt.markers)]
    assert len(sharing) >= 3, sharing


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_made_up_format_in_the_guard_changes_no_registered_reading(name):
    fmt = FORMATS[name]
    for text in own_texts(fmt):
        expected = whole(text, fmt)
        assert whole(text, fmt, WITH_MADE_UP) == expected, text
        assert by_character(text, fmt, WITH_MADE_UP) == expected, text
    # The leak survey of the same texts: the same markers, none of the made-up format.
    for text in own_texts(fmt):
        assert find_call_markers(text, guard=WITH_MADE_UP) == find_call_markers(text), text


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_made_up_call_is_a_leak_only_for_a_reader_that_guards_against_it(name):
    fmt = FORMATS[name]
    text = "Sure. " + MADE_UP_CALL
    assert whole(text, fmt) == ("events", [TextDelta(text)])
    for guarded in (whole(text, fmt, WITH_MADE_UP), by_character(text, fmt, WITH_MADE_UP)):
        assert guarded == ("raises", f"the {name} format left a tool call unread: {OPEN!r} at offset 6 "
                                     "opens a call in the made-up format")
    assert find_call_markers(text) == []
    assert find_call_markers(text, guard=WITH_MADE_UP) == [Marker(OPEN, 6, ("made-up",))]


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_guard_without_a_format_lets_its_calls_through_as_text(name):
    """For the made-up reader: a sample of the format is a leak when guarded against, text when not."""
    fmt = FORMATS[name]
    for sample in (sample for sample in fmt.samples if sample.calls):
        assert whole(sample.text, MADE_UP, ()) == ("events", [TextDelta(sample.text)])
        guarded = whole(sample.text, MADE_UP, (fmt,))
        assert guarded[0] == "raises" and f"opens a call in the {name} format" in guarded[1], sample.text
        # A marker names the first registered format that reads it: Llama 3's reader also reads
        # Phi-4-mini's objects (tests/test_formats.covers), and comes first.
        named = {name for marker in find_call_markers(sample.text) for name in marker.formats}
        assert name in named or any(covers(FORMATS[other], fmt) for other in named), (name, named)
        left_out = tuple(item for item in REGISTRY if item is not fmt)
        assert name not in {name for marker in find_call_markers(sample.text, guard=left_out) for name in marker.formats}


def test_a_reader_with_the_registry_but_one_format_reads_that_format_as_text():
    hermes, mistral = FORMATS["hermes"], FORMATS["mistral"]
    text = "Calling it now: " + mistral.write_call(CALLS[0])
    with pytest.raises(UnparsedToolCall, match="opens a call in the mistral format"):
        read_events(text, hermes)
    without_mistral = tuple(fmt for fmt in REGISTRY if fmt is not mistral)
    assert whole(text, hermes, without_mistral) == ("events", [TextDelta(text)])
    assert by_character(text, hermes, without_mistral) == ("events", [TextDelta(text)])


def test_a_guard_is_a_tuple_of_formats():
    with pytest.raises(TypeError, match="a guard is a tuple of Format, got str 'mistral'"):
        Machine(FORMATS["hermes"], guard=("mistral",))
    with pytest.raises(TypeError, match="a guard is a tuple of Format"):
        find_call_markers("text", guard=(None,))


def test_the_stream_takes_a_guard_too():
    text = "Sure. " + MADE_UP_CALL
    for guard, raises in ((None, False), (WITH_MADE_UP, True)):
        stream = ToolCallStream(FORMATS["hermes"], guard=guard)
        try:
            events = [event for char in text for event in stream.feed(char)] + stream.close()
        except UnparsedToolCall as error:
            assert raises and "opens a call in the made-up format" in str(error)
        else:
            assert not raises and merge_deltas(events) == [TextDelta(text)]
