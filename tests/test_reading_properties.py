"""Properties of the one reading machine, for every registered format.

- Any string built from a format's alphabet (its markers and pieces of
  them, closers, JSON punctuation, quotes, backslashes, control characters,
  look-alike Unicode, pieces of samples and near misses) reads the same
  whole and streamed in any chunking: the same events, or the same
  exception with the same message. The record machine behind
  ``leaks.find_call_markers`` gives the same markers in any chunking and
  never changes the text.
- Every format's calls, read by any other format's reader, raise.
- Issue 11's classes, as properties: a reply cut inside a call raises; a
  name, key or number comes back exactly as written or the call is refused;
  a mutated call either raises, reads, or is prose by the format's own
  declared rule, and then no marker is left in it.

The alphabet, the samples and the regions all come from the registry.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import Machine, read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.wire.base import CallSyntaxError, Format
from templatestudio.leaks import find_call_markers
from templatestudio.guards import guard_of
from templatestudio.resumable_match import MATCHED
from templatestudio.stream import ToolCallStream
from format_relations import covers  # Llama 3 reads Phi-4-mini's objects
from oracle import same_json  # the tests' own comparison, not the package's

NAMES = list(FORMATS)
# Per format; the registry holds many formats, so the whole file stays within CI's minutes.
SETTINGS = settings(max_examples=50, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
EQUIVALENCE = settings(SETTINGS, max_examples=150)


# --- reading helpers --------------------------------------------------------------------


def stream_events(fmt: Format, pieces: list[str]) -> list:
    stream = ToolCallStream(fmt)
    events = [event for piece in pieces for event in stream.feed(piece)]
    return merge_deltas(events + stream.close())


def outcome(read) -> tuple:
    """("events", events) or ("raises", type name, message): what two readings must share."""
    try:
        return ("events", read())
    except UnparsedToolCall as error:
        return ("raises", type(error).__name__, str(error))


def calls_of(result: tuple) -> list[ParsedToolCall] | None:
    if result[0] != "events":
        return None
    return [event.call for event in result[1] if isinstance(event, ToolCallEvent)]


def shown_text(result: tuple) -> str:
    return "".join(event.text for event in result[1] if isinstance(event, TextDelta))


def split_at(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({cut % (len(text) + 1) for cut in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def random_pieces(text: str, rng: random.Random, longest: int = 8) -> list[str]:
    pieces, at = [], 0
    while at < len(text):
        size = rng.randint(1, longest)
        pieces.append(text[at : at + size])
        at += size
    return pieces


# --- the alphabets ----------------------------------------------------------------------------

LOOKALIKES = [
    "𝐝", "𝐞", "ｇ", "ｅ", "＿", "ﬁ", "ſ", "K", "Å", "²", "ǅ", "ℌ",  # NFKC maps each to something else
    "١٢٣", "٣", "۴", "１",  # digits that are not ASCII
    "é", "🙂", "\u00a0", "\u2028", "\ufeff", "\u200b",
]
CONTROLS = ["\x00", "\x1c", "\x1d", "\x1e", "\x1f", "\x0b", "\x0c", "\x85"]
PUNCTUATION = ["{", "}", "[", "]", "(", ")", ":", ",", ";", "=", '"', "'", "\\", "\\\"", " ", "\n", "\t", "\r"]
WORDS = ['"name"', '"arguments"', '"parameters"', '"type"', '"function"', "name", "call:", "f", "a=1", "1", "-2.5e3",
         "null", "None", "True", "true", "get_weather"]


def literals_of(fmt: Format) -> list[str]:
    found = [o.literal for o in fmt.openers] + list(fmt.closers) + list(fmt.reasoning or ())
    return list(dict.fromkeys(found))


def fragments(literal: str) -> list[str]:
    return [literal[:k] for k in range(1, len(literal))] + [literal[k:] for k in range(1, len(literal))]


ALL_LITERALS = sorted({literal for fmt in FORMATS.values() for literal in literals_of(fmt)})
SHARED = ALL_LITERALS + LOOKALIKES + CONTROLS + PUNCTUATION + WORDS


def texts_of(fmt: Format) -> list[str]:
    return [s.text for s in fmt.samples] + [n.text for n in fmt.near_misses]


def slices(texts: list[str]):
    return st.sampled_from(texts).flatmap(
        lambda text: st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(
            lambda ab: text[min(ab) : max(ab)]
        )
    )


def alphabet_text(fmt: Format):
    """Soup of the format's pieces, sometimes around one whole sample or near miss."""
    own = literals_of(fmt)
    own_pieces = own + [piece for literal in own for piece in fragments(literal)]
    piece = st.one_of(
        st.sampled_from(own_pieces), st.sampled_from(own_pieces), st.sampled_from(SHARED),
        slices(texts_of(fmt)), slices([text for other in FORMATS.values() for text in texts_of(other)]),
        st.text(max_size=3),
    )
    soup = st.lists(piece, max_size=10).map("".join)
    short = st.lists(piece, max_size=2).map("".join)
    spliced = st.tuples(short, st.sampled_from(texts_of(fmt)), short).map("".join)
    return st.one_of(soup, spliced)


# --- 1. stream == whole text == any other chunking ------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_any_chunking_reads_like_the_whole_text(name):
    fmt = FORMATS[name]
    seen: Counter = Counter()

    @EQUIVALENCE
    @given(text=alphabet_text(fmt), cuts=st.lists(st.integers(0, 400), max_size=8), seed=st.integers(0, 2**16))
    def agree(text, cuts, seed):
        whole = outcome(lambda: read_events(text, fmt))
        seen[whole[0] if calls_of(whole) in (None, []) else "calls"] += 1
        for pieces in (list(text), split_at(text, cuts), random_pieces(text, random.Random(seed))):
            assert outcome(lambda: stream_events(fmt, pieces)) == whole, (text, pieces)

    agree()
    print(f"{name}: {dict(seen)}")
    # The property must have seen all three kinds of reply, or it proved little.
    assert seen["raises"] and seen["calls"] and seen["events"], seen


def record(text: str, pieces: list[str]) -> tuple[list, list]:
    machine = Machine(None, record=True)
    events = [event for piece in pieces for event in machine.feed(piece)]
    return merge_deltas(events + machine.close()), machine.markers


@SETTINGS
@given(text=st.sampled_from(NAMES).flatmap(lambda name: alphabet_text(FORMATS[name])),
       cuts=st.lists(st.integers(0, 400), max_size=8))
def test_the_leak_survey_reads_like_the_whole_text_in_any_chunking(text, cuts):
    events, markers = record(text, [text])
    assert markers == find_call_markers(text)
    # Recording never raises and never hides a character: the survey's text is the input.
    assert events == ([TextDelta(text)] if text else [])
    for marker in markers:
        assert text.startswith(marker.text, marker.offset) and set(marker.formats) <= set(FORMATS)
    assert [m.offset for m in markers] == sorted(m.offset for m in markers)
    for pieces in (list(text), split_at(text, cuts)):
        assert record(text, pieces) == (events, markers)


# --- 2. the cross-format leak matrix ----------------------------------------------------------

CROSS = [(reader, written, index) for reader in NAMES for written in NAMES if written != reader
         for index, sample in enumerate(FORMATS[written].samples) if sample.calls]


def test_every_formats_calls_raise_under_every_other_reader():
    failures = []
    for reader, written, index in CROSS:
        text = FORMATS[written].samples[index].text
        whole = outcome(lambda: read_events(text, FORMATS[reader]))
        if covers(FORMATS[reader], FORMATS[written]):  # Llama 3 reads Phi-4-mini's objects as its own
            if whole[0] != "events" or not any(isinstance(event, ToolCallEvent) for event in whole[1]):
                failures.append((reader, written, index, whole))
            continue
        if not find_call_markers(text, guard=guard_of(None, FORMATS[reader])):
            # The reader addresses its calls (harmony): a call that opens on plain text is content to it.
            if not (FORMATS[reader].wire.addressed and merge_deltas(whole[1]) == [TextDelta(text)]):
                failures.append((reader, written, index, whole))
        elif whole[0] != "raises":
            failures.append((reader, written, index, whole))
        assert outcome(lambda: stream_events(FORMATS[reader], list(text))) == whole
    print(f"cross-format matrix: {len(CROSS) - len(failures)} of {len(CROSS)} readings raise")
    assert failures == []


def test_every_raising_near_miss_raises_under_every_reader():
    # A reader whose declaration covers fmt's (Llama 3 over Phi-4-mini) reads by its own rules,
    # which its own near misses check (Llama 3 takes arguments written as a JSON string).
    cases = [(reader, miss.text) for fmt in FORMATS.values() for miss in fmt.near_misses if miss.raises
             for reader in FORMATS.values() if not (reader is not fmt and covers(reader, fmt))]
    # A reader that addresses its calls (harmony) does not watch the formats that open on plain text:
    # their near misses are content to it.
    quiet = [(reader.name, text) for reader, text in cases if outcome(lambda: read_events(text, reader))[0] != "raises"
             and (find_call_markers(text, guard=guard_of(None, reader)) or not reader.wire.addressed)]
    print(f"raising near misses: {len(cases) - len(quiet)} of {len(cases)} readings raise")
    assert quiet == []


def test_every_text_near_miss_is_text_under_every_reader():
    cases = [(reader, miss.text) for fmt in FORMATS.values() for miss in fmt.near_misses if not miss.raises
             for reader in FORMATS.values()]
    wrong = [(reader.name, text) for reader, text in cases if outcome(lambda: read_events(text, reader)) != ("events", [TextDelta(text)])]
    assert wrong == []


# --- 3. issue 11 (a): a reply cut inside a call raises ------------------------------------------


def call_regions(text: str) -> list[tuple[int, int, int]]:
    """(start, committed, end) of every call region in text, from the registry's own pieces.

    start is the marker's offset, end what the opener's extent says,
    committed the first cut point at which a reply ending there has opened
    a call: past the opening pattern's match, or past the opener's
    declared cut length when that comes first.
    """
    regions = []
    for marker in find_call_markers(text):
        for opener in FORMATS[marker.formats[0]].openers:
            if opener.literal != marker.text:
                continue
            verdict, matched = opener.automaton.scan().feed(text, marker.offset)
            if verdict == MATCHED:
                end = opener.extent().advance(text, marker.offset, True)
                regions.append((marker.offset, marker.offset + min(opener.cut_length, matched - marker.offset), end))
                break
    return regions


SAMPLES_WITH_CALLS = [(name, index) for name, fmt in FORMATS.items() for index, sample in enumerate(fmt.samples) if sample.calls]


@pytest.mark.parametrize(("name", "index"), SAMPLES_WITH_CALLS, ids=[f"{n}-{i}" for n, i in SAMPLES_WITH_CALLS])
def test_a_reply_cut_inside_a_call_raises_and_outside_does_not(name, index):
    fmt = FORMATS[name]
    text = fmt.samples[index].text
    regions = call_regions(text)
    assert regions and all(end is not None for _, _, end in regions), regions
    full = calls_of(outcome(lambda: read_events(text, fmt)))
    rng = random.Random(f"{name}-{index}")
    accepted_whole = 0
    for cut in range(len(text) + 1):
        prefix = text[:cut]
        result = outcome(lambda: read_events(prefix, fmt))
        assert outcome(lambda: stream_events(fmt, random_pieces(prefix, rng))) == result, cut
        inside = [k for k, (_, committed, end) in enumerate(regions) if committed <= cut < end]
        done = [end for _, _, end in regions if end <= cut]
        if inside:
            # A cut call raises. The one other answer allowed is the call
            # whole (Hermes reads a last call whose closer a stop string
            # removed): never fewer calls than the regions it holds.
            whole_region = outcome(lambda: read_events(text[: regions[inside[0]][2]], fmt))
            if result[0] != "raises":
                assert calls_of(result) == calls_of(whole_region), (cut, prefix, result)
                # ... and nothing of the cut call is shown as text.
                assert shown_text(result) == shown_text(whole_region), (cut, prefix, result)
                accepted_whole += 1
        elif not any(start < cut < committed for start, committed, _ in regions):
            # Between calls: no error, and exactly the calls of the regions before the cut.
            assert result[0] == "events", (cut, prefix, result)
            assert calls_of(result) == full[: len(calls_of(outcome(lambda: read_events(text[: max(done, default=0)], fmt))))]
            assert calls_of(result) == calls_of(outcome(lambda: read_events(text[: max(done, default=0)], fmt)))
    print(f"{name}-{index}: {accepted_whole} cut points inside a call read it whole")


# --- 4. issue 11 (b): names, keys and numbers exactly as written --------------------------------

# Each of these NFKC-normalises to something else (𝐝 -> d, ｇ -> g, ﬁ -> fi, ſ -> s, K -> K ...).
CHANGED_BY_NFKC = "𝐝𝐞𝐥𝐭𝐚ｇｅｔ＿ﬁﬂſKÅǅℌ"
NAME_TEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_" + CHANGED_BY_NFKC, min_size=1, max_size=12).filter(
    lambda s: not s[0] == "_" or len(s) > 1
)
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def exactly_as_written(fmt: Format, call: ParsedToolCall, text: str, *, values: bool) -> None:
    result = outcome(lambda: read_events(text, fmt))
    assert outcome(lambda: stream_events(fmt, list(text))) == result
    if result[0] == "raises":
        return
    calls = calls_of(result)
    assert calls, f"a call written by {fmt.name}'s own writer came back as text: {text!r}"
    (read,) = calls
    assert read.name == call.name, f"{call.name!r} came back as {read.name!r}"
    assert list(read.arguments) == list(call.arguments), f"keys {list(call.arguments)} came back as {list(read.arguments)}"
    for value in read.arguments.values():
        if isinstance(value, int) and not isinstance(value, bool):
            assert str(value) in text, f"the number {value} is not in {text!r}"
    if values:
        assert same_json(read.arguments, call.arguments), (text, read.arguments)


@pytest.mark.parametrize("name", NAMES)
def test_names_and_keys_come_back_exactly_as_written_or_raise(name):
    fmt = FORMATS[name]

    # Issue 11's own examples first, then generated ones.
    @SETTINGS
    @example(call_name="𝐝𝐞𝐥𝐞𝐭𝐞_𝐚𝐥𝐥", keys=["confirm"], number=1, arabic=False)
    @example(call_name="ｇｅｔ_ｗｅａｔｈｅｒ", keys=["ﬁeld"], number=123, arabic=True)
    @example(call_name="＿", keys=[], number=0, arabic=False)
    @given(call_name=NAME_TEXT, keys=st.lists(NAME_TEXT, max_size=3, unique=True), number=st.integers(0, 10**6),
           arabic=st.booleans())
    def check(call_name, keys, number, arabic):
        value = str(number) if fmt.string_arguments else number
        call = ParsedToolCall(call_name, {key: value for key in keys})
        if fmt.limits_for(call.arguments):
            return
        text = fmt.write_call(call)
        if arabic:
            # The model wrote its digits in another script: they are never read as ASCII numbers.
            text = text.translate(ARABIC_INDIC)
        exactly_as_written(fmt, call, text, values=not arabic)

    check()


# --- 5. issue 11 (c): a mutated call is read, refused, or prose by the format's own rule ------------


def mutate(text: str, at: int, operation: str, char: str) -> str:
    if operation == "delete":
        return text[:at] + text[at + 1 :]
    if operation == "insert":
        return text[:at] + char + text[at:]
    return text[:at] + char + text[at + 1 :]


@pytest.mark.parametrize("name", NAMES)
def test_a_mutated_call_never_vanishes_silently(name):
    fmt = FORMATS[name]
    texts = [s.text for s in fmt.samples if s.calls]
    chars = sorted({char for literal in literals_of(fmt) for char in literal} | set("{}[]():,=\"'\\ \n\x1cab1") | {"ｇ", "١"})
    kinds: Counter = Counter()
    prose_examples: list[str] = []

    @SETTINGS
    @given(text=st.sampled_from(texts), data=st.data(), operation=st.sampled_from(["delete", "insert", "replace"]),
           char=st.sampled_from(chars))
    def check(text, data, operation, char):
        start, committed, end = data.draw(st.sampled_from(call_regions(text)))
        at = data.draw(st.integers(start, end - 1))
        mutated = mutate(text, at, operation, char)
        result = outcome(lambda: read_events(mutated, fmt))
        assert outcome(lambda: stream_events(fmt, random_pieces(mutated, random.Random(at)))) == result
        if result[0] == "raises":
            kinds["raises"] += 1
            return
        for call in calls_of(result):
            # The name is in the text as written (a JSON escape may spell it otherwise).
            assert call.name in mutated or "\\" in mutated, (mutated, call)
        if calls_of(result):
            kinds["calls"] += 1
            return
        # No call and no error: nothing in the text may open a call at all ...
        assert find_call_markers(mutated) == [], mutated
        kinds["prose"] += 1
        # ... and when the opening survived, the format's own reader must
        # have said "not a call" for the region (its declared prose rule),
        # not the machine dropping it.
        for opener in fmt.openers:
            if mutated.startswith(opener.literal, start) and opener.automaton.scan().feed(mutated, start)[0] == MATCHED:
                region_end = opener.extent().advance(mutated, start, True)
                if region_end is None:
                    continue
                try:
                    verdict = fmt.read_region(mutated[start:region_end], opener, None)
                except CallSyntaxError as error:
                    raise AssertionError(f"the reader refuses {mutated!r} ({error}) but the machine showed it as text")
                assert verdict is None, (mutated, verdict)
                prose_examples.append(mutated)
                kinds["declared prose"] += 1

    check()
    print(f"{name}: {dict(kinds)}; declared prose e.g. {prose_examples[:3]}")


# --- reasoning is read only at the start ----------------------------------------------------------


def test_a_reasoning_block_after_text_is_text_and_keeps_the_calls():
    # A reasoning block is read only at the start: a reply that opens with
    # text and then writes a reasoning opener keeps its calls.
    for fmt in FORMATS.values():
        if fmt.reasoning is None:
            continue
        call = next(s for s in fmt.samples if s.calls and not s.text.lstrip().startswith(fmt.reasoning[0]))
        text = "Ok. " + fmt.reasoning[0] + "x" + fmt.reasoning[1] + " " + call.text
        result = outcome(lambda: read_events(text, fmt))
        assert result[0] == "raises" or len(calls_of(result)) == len(call.calls), (fmt.name, result)
        assert not any(isinstance(e, ReasoningDelta) for e in (result[1] if result[0] == "events" else []))
