"""Runs of written calls (``templatestudio.canonical_runs``) read exactly as the general machine reads them.

The run path is only a faster way to the same events, and nothing checks
that at run time: these tests are the check. Every registered format
either gets no shape by a declared rule (its writer does not write
``json.dumps`` of the arguments), or its shape predicts exactly what the
general machine (``Machine(fmt, runs=False)``) reads from the probe
replies: three calls of every probe name and arguments, joined by every
separator the shape allows. The properties then compare a machine that
may use the shape with one that never does, on replies built from each
format's own writer and then disturbed: names and values of every kind,
the markers of every format inside strings, separators that are and are
not whitespace, prose around the run, cuts anywhere. Each rule that
withholds a shape is shown on a format made to break it, and the work of
failed tries is counted.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layout_oracle import laid_out  # the tests' own statement of the layout rule
from templatestudio import canonical_runs, run_shapes
from templatestudio.calls import CallSpan, ParsedToolCall, UnparsedToolCall, filler, region_spans
from templatestudio.engine import Machine, read_events
from templatestudio.events import TextDelta, ToolCallEvent, call_events, merge_deltas, region_events
from templatestudio.formats import FORMATS
from templatestudio.watch_tables import tables
from templatestudio.resumable_match import literal
from templatestudio.wire.base import SPACES, CallSyntaxError, Opener, opener_pattern
from templatestudio.wire.extents import TagExtent
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


def plain(text: str, fmt, guard=None, layout: bool = True) -> tuple:
    return outcome(lambda: _whole(Machine(fmt, runs=False, guard=guard, layout=layout), text))


def fast(text: str, fmt, guard=None, layout: bool = True) -> tuple:
    return outcome(lambda: _whole(Machine(fmt, guard=guard, layout=layout), text))


def shape_of(fmt, guard=None):
    """The run shape a machine for fmt uses (guard: by default the registry)."""
    return tables(fmt, tuple(FORMATS.values()) if guard is None else guard).runs


def _whole(machine: Machine, text: str) -> list:
    return merge_deltas(machine.feed(text) + machine.close())


def outcome(read) -> tuple:
    try:
        return ("events", read())
    except UnparsedToolCall as error:
        return ("raises", str(error))


# --- which formats have a shape, and that it agrees with the general machine ---------------------

# The probes: names and arguments of every shape a run reads (nested values,
# numbers, the characters JSON escapes, braces and brackets inside strings).
PROBE_NAMES = ("f", "get_exchange_rate", "A9_b")
PROBE_ARGUMENTS = (
    {"a": "b"},
    {},
    {"n": -1, "x": [1.5, True, None, {"k": "v"}], "e": 2e300},
    {"s": "é \" \\ }{ ][ \u2028 ,", "t": {"u": {}}},
)


def probe_replies() -> list[list[tuple[str, dict]]]:
    """The calls of each probe reply: three calls each, every probe name and arguments used."""
    return [[(PROBE_NAMES[(shift + index) % len(PROBE_NAMES)], PROBE_ARGUMENTS[(shift + index) % len(PROBE_ARGUMENTS)])
             for index in range(3)] for shift in range(len(PROBE_ARGUMENTS))]


def disagreements(fmt, shape) -> list[str]:
    """Where the general machine or the shape reads a probe reply otherwise than the shape predicts.

    Joined by each separator the shape allows, twice that separator, all
    of them, and nothing: the general machine (no runs) must read the
    reply's three calls with the ids the shape gives and the separators as
    text; the shape must read all calls but the last and stop where the
    last one starts; a machine that may use the shape must read the same.
    Both machines are asked without the layout rule (every separator
    character comes back) and with it (``laid_out`` by the format's
    spacing: whitespace between two calls is layout, a ";" is kept).
    """
    problems = []
    joiners = {"", shape.separators, *shape.separators, *(char * 2 for char in shape.separators)}
    for calls in probe_replies():
        for joiner in sorted(joiners):
            pieces = [run_shapes.written(fmt, name, arguments) for name, arguments in calls]
            text = joiner.join(pieces)
            expected = []
            for index, (name, arguments) in enumerate(calls):
                if index and joiner:
                    expected.append(TextDelta(joiner))
                expected.append(ToolCallEvent(ParsedToolCall(name, arguments), canonical_runs.call_id(shape.id_parts, name)))
            for layout, want in ((False, expected), (True, laid_out(expected, fmt.spacing))):
                if plain(text, fmt, layout=layout) != ("events", want):
                    problems.append(f"the general machine (layout={layout}), joined by {joiner!r}: "
                                    f"{plain(text, fmt, layout=layout)}")
                if fast(text, fmt, layout=layout) != ("events", want):
                    problems.append(f"the machine with runs (layout={layout}), joined by {joiner!r}: "
                                    f"{fast(text, fmt, layout=layout)}")
            events, end, _, _, _ = shape.read(text, 0)
            if merge_deltas(events) != expected[:-1] or end != len(text) - len(pieces[-1]):
                problems.append(f"the shape, joined by {joiner!r}: {events} up to {end}")
    return problems


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_gets_a_shape_that_agrees_or_none_by_the_writer_rule(name):
    """The build-time check of every registered format (the machine checks nothing at run time)."""
    fmt = FORMATS[name]
    shape = shape_of(fmt)
    if not writes_json_arguments(fmt):
        # The rule: a writer that does not write json.dumps of the arguments gets no shape.
        assert shape is None and run_shapes.derive(fmt, " ", None) is None
        return
    assert shape is not None, name
    assert shape.separators == run_shapes.SEPARATOR_CHOICES  # no registered literal starts with one
    assert disagreements(fmt, shape) == []


def test_every_writer_of_json_arguments_has_a_run_shape_and_no_other():
    shaped = {name for name, fmt in FORMATS.items() if shape_of(fmt) is not None}
    assert shaped == set(SHAPED)
    assert len(SHAPED) >= 17


@pytest.mark.parametrize("name", SHAPED)
def test_a_long_run_is_read_by_the_run_path_and_gives_the_plain_events(name):
    fmt = FORMATS[name]
    calls = [ParsedToolCall(f"tool_{index % 7}", {"i": index, "s": "x" * (index % 5)}) for index in range(300)]
    text = "\n".join(fmt.write_call(call) for call in calls)
    machine = Machine(fmt)
    events = _whole(machine, text)
    assert machine.run_tries.calls >= 290, machine.run_tries.calls  # all but the last of each run
    assert events == plain(text, fmt)[1]
    assert [event.call for event in events if isinstance(event, ToolCallEvent)] == calls


def _refusing(fmt, prefix: str):
    """fmt with a reader that refuses every call whose name starts with prefix."""
    reader = fmt.read_region

    def picky(region, opener, found):
        spans = reader(region, opener, found)
        if spans and any(span.call.name.startswith(prefix) for span in spans):
            raise CallSyntaxError(f"no names starting with {prefix}")
        return spans

    return dataclasses.replace(fmt, read_region=picky)


def test_a_writer_that_is_not_deterministic_or_whose_call_its_reader_refuses_gets_no_shape():
    hermes = FORMATS["hermes"]
    assert shape_of(hermes) is not None
    rng = random.Random(1)
    jittery = dataclasses.replace(hermes, write_call=lambda call: hermes.write_call(call) + " " * rng.randint(0, 3))
    assert shape_of(jittery) is None
    # The id and the call a run gives come from the format's reader on its
    # writer's call: a reader that refuses that call gets no shape.
    assert shape_of(_refusing(hermes, run_shapes.SENTINEL_NAME[:2])) is None
    id_twice = dataclasses.replace(hermes, read_region=lambda region, opener, found: [
        dataclasses.replace(span, id=span.call.name * 2) for span in hermes.read_region(region, opener, found)])
    assert shape_of(id_twice) is None


def test_the_build_time_check_catches_a_reader_that_refuses_calls_its_writer_writes():
    """A shape is not checked at run time: a reader that disagrees shows in the check above, not in the machine."""
    picky = _refusing(FORMATS["hermes"], "A")
    shape = shape_of(picky)
    assert shape is not None
    problems = disagreements(picky, shape)
    assert problems and all("A9_b" in problem or "no names starting with A" in problem for problem in problems)


def _literal_format(base, text: str):
    """A format that opens calls at the literal text (a call is text, JSON, and nothing else)."""
    opener = Opener(text, opener_pattern(text, SPACES, literal("{")), lambda: TagExtent(len(text), "\x00"))
    return dataclasses.replace(base, name=f"opens at {text!r}", openers=(opener,), wire=None)


def test_watched_literals_that_would_change_the_general_reading_withhold_or_narrow_the_shape():
    hermes = FORMATS["hermes"]
    registry = tuple(FORMATS.values())
    head = run_shapes.written(hermes).split(run_shapes.SENTINEL_NAME)[0]
    assert head.startswith("<tool_call>\n{") and "<tool_call>" in hermes.markers
    # A longer literal at the call's start, another format's: its opener is tried there, not hermes's.
    assert shape_of(hermes, (*registry, _literal_format(hermes, "<tool_call>\n{"))) is None
    # A literal that extends the text before the name: the machine waits to see whether it arrives.
    assert shape_of(hermes, (*registry, _literal_format(hermes, head + "zz"))) is None
    # A literal that starts with a separator character: that character no longer separates calls.
    narrowed = shape_of(hermes, (*registry, _literal_format(hermes, ";;call")))
    assert narrowed is not None and narrowed.separators == run_shapes.SEPARATOR_CHOICES.replace(";", "")
    assert shape_of(hermes, (hermes,)).separators == run_shapes.SEPARATOR_CHOICES


def test_a_narrowed_shape_reads_like_the_plain_machine_under_its_guard():
    hermes = FORMATS["hermes"]
    guard = (*FORMATS.values(), _literal_format(hermes, ";;call"))
    call = hermes.write_call(ParsedToolCall("f", {"a": 1}))
    for joiner in ("; ", ";", ";;", ";;call{", "\n", ";;call {}"):
        text = joiner.join([call] * 5)
        assert fast(text, hermes, guard) == plain(text, hermes, guard), joiner
        assert fast(text, hermes, guard, layout=False) == plain(text, hermes, guard, layout=False), joiner


def test_derive_refuses_writers_without_json_arguments_or_with_the_name_after_them():
    hermes = FORMATS["hermes"]
    no_json = dataclasses.replace(hermes, write_call=lambda call: f"<tool_call>{call.name}({call.arguments})</tool_call>")
    assert run_shapes.derive(no_json, " ", None) is None
    name_after = dataclasses.replace(
        hermes, write_call=lambda call: f"<tool_call>{json.dumps(call.arguments)}{call.name}</tool_call>")
    assert run_shapes.derive(name_after, " ", None) is None


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
        # Without the layout rule too: the separators come back character for character.
        assert fast(text, fmt, layout=False) == plain(text, fmt, layout=False), text
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
        assert fast(text, fmt, layout=False) == plain(text, fmt, layout=False)

    agree()


# --- linear work ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SHAPED)
def test_failed_tries_are_bounded_so_work_stays_linear(name):
    """Floods of calls a run cannot take are tried at most once per reach of text, however long."""
    fmt = FORMATS[name]
    shape = shape_of(fmt)
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
        assert machine.run_tries.tried >= 1, label
        if label == "a closer in the arguments" and not closer:
            # No closing tag to fear: one run reads them all, then one try at its last call. Where
            # another format's start-only opener shares the first call's literal (xlam's "[",
            # pythonic's), the reply's start decides that call by its opener, before any run.
            at_start = any(opener.start_only and text.startswith(opener.literal)
                           and any(own.literal == opener.literal and not own.start_only for own in fmt.openers)
                           for other in FORMATS.values() if other is not fmt for opener in other.openers)
            assert machine.run_tries.calls == 2999 - at_start and machine.run_tries.tried == 2, label
            continue
        # Every try failed, and each failure blocks the next reach of text.
        assert machine.run_tries.calls == 0, label
        assert machine.run_tries.tried <= machine.offset // shape.reach + 2, (
            label, machine.run_tries.tried, machine.offset, shape.reach)


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
    shape = shape_of(fmt)
    closer = next(c for c in fmt.closers if c.strip("{}[],: \n"))
    calls = [ParsedToolCall("f", {"a": closer if index % every == every - 1 else "b"}) for index in range(1500)]
    text = "\n".join(fmt.write_call(call) for call in calls)
    machine = Machine(fmt)
    assert outcome(lambda: _whole(machine, text)) == plain(text, fmt)
    assert machine.run_tries.tried >= 1
    assert machine.run_tries.scanned <= len(text) + shape.reach, (machine.run_tries.scanned, len(text))


def test_spans_made_by_filling_equal_the_constructor_and_other_fields_are_refused():
    calls = [ParsedToolCall("f", {"a": [index]}) for index in range(3)]
    assert region_spans(calls, 17) == [CallSpan(call, 0, 17) for call in calls]
    assert [vars(span) for span in region_spans(calls, 5)] == [vars(CallSpan(call, 0, 5)) for call in calls]
    with pytest.raises(dataclasses.FrozenInstanceError):
        region_spans(calls, 5)[0].end = 6
    for wrong in (("call", "start", "end"), ("call", "id"), ("start", "call", "end", "id")):
        with pytest.raises(TypeError, match="cannot be made by filling its fields"):
            filler(CallSpan, wrong)


def test_the_run_path_is_not_used_by_the_leak_survey_or_without_a_format():
    assert Machine(None).run_tries is None
    assert Machine(FORMATS["hermes"], record=True).run_tries is None


def test_read_events_merges_where_feed_and_close_meet():
    fmt = FORMATS["hermes"]
    call = fmt.write_call(ParsedToolCall("f", {}))
    text = call + "\n" + call + " tail <tool"  # close settles the held partial marker as text
    raw = plain(text, fmt, layout=False)[1]
    assert raw == [ToolCallEvent(ParsedToolCall("f", {})), TextDelta("\n"), ToolCallEvent(ParsedToolCall("f", {})),
                   TextDelta(" tail <tool")]
    assert read_events(text, fmt) == plain(text, fmt)[1] == laid_out(raw)
    # feed settles "tail", close " <tool": one delta. The space touching the
    # call is layout; the one inside the prose is the model's.
    assert read_events(text, fmt)[-1] == TextDelta("tail <tool")


@pytest.mark.parametrize("name", SHAPED)
def test_a_string_that_forges_the_end_of_a_call_and_the_next_one_reads_like_the_plain_machine(name):
    """String values built from the format's own written pieces: a tail, a head, braces, quotes."""
    fmt = FORMATS[name]
    sample = run_shapes.written(fmt)
    before, after = sample.split(json.dumps(run_shapes.SENTINEL_ARGUMENTS))
    head = before.replace(run_shapes.SENTINEL_NAME, "g")
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
        assert fast(text, fmt, layout=False) == plain(text, fmt, layout=False), text
        if result[0] == "events":
            assert [e.call for e in result[1] if isinstance(e, ToolCallEvent)] == calls

    agree()


def test_events_made_by_filling_their_fields_equal_the_constructors():
    calls = [ParsedToolCall("f", {"a": [1]}), ParsedToolCall("g", {})]
    made = call_events(calls, ["x", None])
    built = [ToolCallEvent(calls[0], "x"), ToolCallEvent(calls[1], None)]
    assert made == built and repr(made) == repr(built) and list(map(vars, made)) == list(map(vars, built))
    assert call_events(calls[:1], ["a", "b"]) == [ToolCallEvent(calls[0], "a")]  # one per row: the shorter column
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].id = "y"
    with pytest.raises(TypeError, match="cannot be made by filling its fields"):
        filler(TextDelta, ("text",))


def test_a_region_s_events_keep_the_text_around_and_between_its_spans():
    """The calls of spans, and every character of the region outside them as text, in order."""
    one, two = ParsedToolCall("f", {}), ParsedToolCall("g", {"a": 1})
    region = "ab<call one>cd<call two>ef"
    assert region_events(region, [CallSpan(one, 2, 12), CallSpan(two, 14, 24, "7")]) == [
        TextDelta("ab"), ToolCallEvent(one), TextDelta("cd"), ToolCallEvent(two, "7"), TextDelta("ef")]
    assert region_events(region, [CallSpan(one, 0, 12), CallSpan(two, 12, 26)]) == [  # tiled: no text
        ToolCallEvent(one), ToolCallEvent(two)]
    assert region_events(region, [CallSpan(one, 0, 26), CallSpan(two, 0, 26)]) == [  # a list: the whole region
        ToolCallEvent(one), ToolCallEvent(two)]
    assert region_events(region, [CallSpan(one, 2, 20), CallSpan(two, 4, 12)]) == [  # nested: the outer end counts
        TextDelta("ab"), ToolCallEvent(one), ToolCallEvent(two), TextDelta("two>ef")]


@pytest.mark.parametrize("name", SHAPED)
def test_read_one_takes_a_region_that_is_exactly_one_call_and_nothing_after_it(name):
    """A region with anything after the written call (text, a separator, another call) is left to the reader."""
    fmt = FORMATS[name]
    shape = shape_of(fmt)
    call = ParsedToolCall("get_rate", {"base": "EUR", "n": 1})
    written = fmt.write_call(call)
    assert shape.read_one(written) == ToolCallEvent(call, canonical_runs.call_id(shape.id_parts, call.name))
    for tail in ("x", " ", "\n", ";", "}", " done.", "\n" + written):
        assert shape.read_one(written + tail) is None, tail
    for cut in (1, len(written) // 2, len(written) - 1):
        assert shape.read_one(written[:cut]) is None, cut


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
