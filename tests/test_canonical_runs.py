"""Runs of written calls (``templatestudio.canonical_runs``) read exactly as the general machine reads them.

The run path is only a faster way to the same events: every property here
compares a machine that may use it with one that never does
(``Machine(fmt, runs=False)``), on replies built from each format's own
writer and then disturbed: names and values of every kind, the markers of
every format inside strings, separators that are and are not whitespace,
prose around the run, cuts anywhere. Which formats get a run shape is
derived from the registry (the writers that write ``json.dumps`` of the
arguments), and the work of failed tries is counted.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio import canonical_runs
from templatestudio.calls import CallSpan, ParsedToolCall, UnparsedToolCall, filler, region_spans
from templatestudio.engine import Machine, TextDelta, ToolCallEvent, _run_shape, merge_deltas, read_events
from templatestudio.formats import FORMATS
from templatestudio.wire.base import CallSyntaxError
from templatestudio.wire.jsonbody import call_from, calls_from
from templatestudio.stream import ToolCallStream

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def writes_json_arguments(fmt) -> bool:
    probe = {"k": "v", "n": 1}
    return json.dumps(probe, ensure_ascii=False) in fmt.write_call(ParsedToolCall("f", probe))


SHAPED = [name for name, fmt in FORMATS.items() if writes_json_arguments(fmt)]
MARKERS = sorted({piece for fmt in FORMATS.values()
                  for piece in (*fmt.markers, *fmt.closers, *(fmt.reasoning or ())) if piece})


def plain(text: str, fmt) -> tuple:
    return outcome(lambda: _whole(Machine(fmt, runs=False), text))


def fast(text: str, fmt) -> tuple:
    return outcome(lambda: _whole(Machine(fmt), text))


def _whole(machine: Machine, text: str) -> list:
    return merge_deltas(machine.feed(text) + machine.close())


def outcome(read) -> tuple:
    try:
        return ("events", read())
    except UnparsedToolCall as error:
        return ("raises", str(error))


# --- which formats have a shape ------------------------------------------------------------------


def test_every_writer_of_json_arguments_has_a_run_shape_and_no_other():
    shaped = {name for name, fmt in FORMATS.items() if _run_shape(fmt) is not None}
    assert shaped == set(SHAPED)
    assert len(SHAPED) >= 17


@pytest.mark.parametrize("name", SHAPED)
def test_a_long_run_is_read_by_the_run_path_and_gives_the_plain_events(name):
    fmt = FORMATS[name]
    calls = [ParsedToolCall(f"tool_{index % 7}", {"i": index, "s": "x" * (index % 5)}) for index in range(300)]
    text = "\n".join(fmt.write_call(call) for call in calls)
    machine = Machine(fmt)
    events = _whole(machine, text)
    assert machine.run_calls >= 290, machine.run_calls  # all but the last of each run
    assert events == plain(text, fmt)[1]
    assert [event.call for event in events if isinstance(event, ToolCallEvent)] == calls


def test_a_writer_that_is_not_deterministic_or_a_reader_that_disagrees_gets_no_shape():
    hermes = FORMATS["hermes"]
    rng = random.Random(1)
    jittery = dataclasses.replace(hermes, write_call=lambda call: hermes.write_call(call) + " " * rng.randint(0, 3))
    assert _run_shape(jittery) is None
    # A reader that refuses one of the probe names: the probes show it, no shape.
    picky_reader = hermes.read_region

    def picky(region, opener, found):
        spans = picky_reader(region, opener, found)
        if spans and any(span.call.name.startswith("A") for span in spans):
            raise hermes_error("no A names")
        return spans

    from templatestudio.wire.base import CallSyntaxError as hermes_error  # noqa: PLC0415 - the test's own fake
    picky_format = dataclasses.replace(hermes, read_region=picky)
    assert _run_shape(picky_format) is None


def test_derive_refuses_writers_without_json_arguments_or_with_the_name_after_them():
    hermes = FORMATS["hermes"]
    no_json = dataclasses.replace(hermes, write_call=lambda call: f"<tool_call>{call.name}({call.arguments})</tool_call>")
    assert canonical_runs.derive(no_json, " ", None) is None
    name_after = dataclasses.replace(
        hermes, write_call=lambda call: f"<tool_call>{json.dumps(call.arguments)}{call.name}</tool_call>")
    assert canonical_runs.derive(name_after, " ", None) is None


# --- the property: same events as the plain machine --------------------------------------------

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.sampled_from(MARKERS + ["{", "}", "[", "]", '"', "\\", "\n", ",", ": ", "é", "\u2028", "a", " "]),
             max_size=4).map("".join),
    st.text(max_size=5),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
ARGUMENTS = st.dictionaries(st.text(max_size=6), VALUES, max_size=4)
NAMES = st.one_of(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True),
                  st.sampled_from(["get-weather", "ns.tool", "ünï", "a b", "f:1", "x" * 70]), st.text(max_size=6))
SEPARATORS = st.lists(st.sampled_from([" ", "\n", "\t", "\r", ";", "; ", "", "", "x", "<", "]", "{", "prose. "] + MARKERS),
                      max_size=3).map("".join)


@pytest.mark.parametrize("name", SHAPED)
def test_runs_read_like_the_plain_machine_whole_and_streamed(name):
    fmt = FORMATS[name]

    @SETTINGS
    @given(calls=st.lists(st.tuples(NAMES, ARGUMENTS), min_size=1, max_size=6),
           separators=st.lists(SEPARATORS, min_size=6, max_size=6), around=st.tuples(SEPARATORS, SEPARATORS),
           cut=st.one_of(st.none(), st.integers(0, 2000)), seed=st.integers(0, 2**16))
    def agree(calls, separators, around, cut, seed):
        pieces = []
        for (call_name, arguments), separator in zip(calls, separators):
            pieces += [fmt.write_call(ParsedToolCall(call_name, arguments)), separator]
        text = around[0] + "".join(pieces[:-1]) + around[1]
        if cut is not None:
            text = text[: cut % (len(text) + 1)]
        expected = plain(text, fmt)
        assert fast(text, fmt) == expected, text
        rng = random.Random(seed)
        chunks, at = [], 0
        while at < len(text):
            size = rng.choice([1, 3, 64, 4096])
            chunks.append(text[at : at + size])
            at += size
        stream = ToolCallStream(fmt)
        assert outcome(lambda: merge_deltas([e for c in chunks for e in stream.feed(c)] + stream.close())) == expected

    agree()


@pytest.mark.parametrize("name", SHAPED)
def test_a_run_of_flat_calls_broken_anywhere_reads_like_the_plain_machine(name):
    """The batch path: many flat calls, one of them mutated (a marker, a brace, a cut string, a big number)."""
    fmt = FORMATS[name]
    breakers = [*MARKERS, "{", "}", '"', "\\", "\n", "1" * 5000, "[" * 3000, "x" * 3000]

    @SETTINGS
    @given(count=st.integers(2, 40), broken=st.integers(0, 39), where=st.integers(0, 400),
           breaker=st.sampled_from(breakers))
    def agree(count, broken, where, breaker):
        written = [fmt.write_call(ParsedToolCall("get_rate", {"base": "EUR", "n": index})) for index in range(count)]
        target = written[broken % count]
        at = where % (len(target) + 1)
        written[broken % count] = target[:at] + breaker + target[at:]
        text = "\n".join(written)
        assert fast(text, fmt) == plain(text, fmt)

    agree()


# --- linear work ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SHAPED)
def test_failed_tries_are_bounded_so_work_stays_linear(name):
    """Floods of calls a run cannot take are tried at most once per reach of text, however long."""
    fmt = FORMATS[name]
    shape = _run_shape(fmt)
    closer = next((c for c in fmt.closers if c.strip("{}[],: \n")), "")
    floods = {
        "arguments past the window": "\n".join([fmt.write_call(ParsedToolCall("f", {"a": "x" * 3000}))] * 80),
        "one call between prose": " ok. ".join([fmt.write_call(ParsedToolCall("f", {"a": 1}))] * 3000),
        "a closer in the arguments": "\n".join([fmt.write_call(ParsedToolCall("f", {"a": closer + "}"}))] * 3000),
    }
    for label, text in floods.items():
        machine = Machine(fmt)
        expected = plain(text, fmt)
        try:
            events = merge_deltas(machine.feed(text) + machine.close())
            assert ("events", events) == expected, label
        except UnparsedToolCall as error:
            assert ("raises", str(error)) == expected, label
        assert machine.runs_tried >= 1, label
        if label == "a closer in the arguments" and not closer:
            # No closing tag to fear: one run reads them all, then one try at its last call.
            assert machine.run_calls == 2999 and machine.runs_tried == 2, label
            continue
        # Every try failed, and each failure blocks the next reach of text.
        assert machine.run_calls == 0, label
        assert machine.runs_tried <= machine.offset // shape.reach + 2, (
            label, machine.runs_tried, machine.offset, shape.reach)


# The shaped formats with a closer that a JSON string can hold and that stops a run.
STOPPED_BY_A_CLOSER = [name for name in SHAPED if any(c.strip("{}[],: \n") for c in FORMATS[name].closers)]


@pytest.mark.parametrize("name", STOPPED_BY_A_CLOSER)
@pytest.mark.parametrize("every", [2, 3, 7])
def test_the_batch_pattern_reads_each_character_once_when_decodes_stop_it_short(name, every):
    """Calls the batch matches but may not take (a marker in the arguments) do not make it read again.

    Every every-th call holds one of the format's closers inside a string:
    the batch matches the whole run, keeps the calls before the first such
    one, and the rest are read one by one; were the batch tried again after
    each of them, it would read what is left of the run each time.
    """
    fmt = FORMATS[name]
    shape = _run_shape(fmt)
    closer = next(c for c in fmt.closers if c.strip("{}[],: \n"))
    calls = [ParsedToolCall("f", {"a": closer if index % every == every - 1 else "b"}) for index in range(1500)]
    text = "\n".join(fmt.write_call(call) for call in calls)
    machine = Machine(fmt)
    assert outcome(lambda: _whole(machine, text)) == plain(text, fmt)
    assert machine.runs_tried >= 1
    assert machine.run_scanned <= len(text) + shape.reach, (machine.run_scanned, len(text))


def test_spans_made_by_filling_equal_the_constructor_and_other_fields_are_refused():
    calls = [ParsedToolCall("f", {"a": [index]}) for index in range(3)]
    assert region_spans(calls, 17) == [CallSpan(call, 0, 17) for call in calls]
    assert [vars(span) for span in region_spans(calls, 5)] == [vars(CallSpan(call, 0, 5)) for call in calls]
    with pytest.raises(dataclasses.FrozenInstanceError):
        region_spans(calls, 5)[0].end = 6
    for wrong in (("call", "start", "end"), ("call", "id")):
        with pytest.raises(TypeError, match="cannot be made by filling its fields"):
            filler(CallSpan, wrong)


def test_the_run_path_is_not_used_by_the_leak_survey_or_without_a_format():
    assert Machine(None)._runs is None
    assert Machine(FORMATS["hermes"], record=True)._runs is None


def test_read_events_merges_where_feed_and_close_meet():
    fmt = FORMATS["hermes"]
    call = fmt.write_call(ParsedToolCall("f", {}))
    text = call + "\n" + call + " tail <tool"  # close settles the held partial marker as text
    assert read_events(text, fmt) == plain(text, fmt)[1]
    assert read_events(text, fmt)[-1] == TextDelta(" tail <tool")


@pytest.mark.parametrize("name", SHAPED)
def test_a_string_that_forges_the_end_of_a_call_and_the_next_one_reads_like_the_plain_machine(name):
    """String values built from the format's own written pieces: a tail, a head, braces, quotes."""
    fmt = FORMATS[name]
    sample = canonical_runs.written(fmt)
    before, after = sample.split(json.dumps(canonical_runs.SENTINEL_ARGUMENTS))
    head = before.replace(canonical_runs.SENTINEL_NAME, "g")
    # JSON escapes a newline inside a string, so a forged separator is a space, ";" or nothing.
    pieces = [after, head, "{", "}", '"', "\n", " ", "\\", ",", "}" + after + head, after + " " + head, after + ";" + head]

    @SETTINGS
    @given(values=st.lists(st.lists(st.sampled_from(pieces), max_size=6).map("".join), min_size=1, max_size=4),
           count=st.integers(2, 5))
    def agree(values, count):
        calls = [ParsedToolCall("f", {"a": value}) for value in values] * count
        text = "\n".join(fmt.write_call(call) for call in calls)
        result = fast(text, fmt)
        assert result == plain(text, fmt), text
        if result[0] == "events":
            assert [e.call for e in result[1] if isinstance(e, ToolCallEvent)] == calls

    agree()


def test_events_made_by_filling_their_fields_equal_the_constructors():
    _new_event = canonical_runs._new_event

    call = ParsedToolCall("f", {"a": [1]})
    made = _new_event(ToolCallEvent)(ToolCallEvent)
    made.__dict__.update(call=call, id="x")
    built = ToolCallEvent(call, "x")
    assert made == built and repr(made) == repr(built) and vars(made) == vars(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.id = "y"
    with pytest.raises(TypeError, match="cannot be made by filling its fields"):
        _new_event(TextDelta)


# --- lists of calls read inline (jsonbody.calls_from) --------------------------------------------

_ITEM_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                            lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
                            max_leaves=4)
_ITEMS = st.one_of(
    st.fixed_dictionaries({"name": st.text(max_size=5), "arguments": st.dictionaries(st.text(max_size=3), _ITEM_VALUES, max_size=2)}),
    st.fixed_dictionaries({"tool_name": st.text(max_size=5), "parameters": st.dictionaries(st.text(max_size=3), _ITEM_VALUES, max_size=2)}),
    st.dictionaries(st.sampled_from(["name", "arguments", "parameters", "tool_name", "id"]), _ITEM_VALUES, max_size=3),
    _ITEM_VALUES,
)


@SETTINGS
@given(items=st.lists(_ITEMS, max_size=5), numbered=st.booleans(),
       keys=st.sampled_from([{}, {"name_key": "tool_name", "argument_keys": ("parameters",)},
                             {"argument_keys": ("arguments", "parameters")}, {"string_arguments": True}]))
def test_a_list_of_calls_is_read_as_call_from_reads_each_item(items, numbered, keys):
    """calls_from gives call_from's call for every item, or the first item's error (numbered on request)."""
    expected: list | str = []
    for number, item in enumerate(items, start=1):
        try:
            expected.append(call_from(item, **keys)[0])
        except CallSyntaxError as error:
            expected = f"item {number} of the list: {error}" if numbered else str(error)
            break
    try:
        got: list | str = calls_from(items, numbered=numbered, **keys)
    except CallSyntaxError as error:
        got = str(error)
    assert got == expected
