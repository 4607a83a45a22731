"""Leak detection: every format's call is found in any text, and prose is not.

``find_call_markers`` runs the readers' own machine over a text for every
registered format at once, so a marker counts exactly where a reader would
read or refuse a call. Two prose sets score it: the tuning set
(``fixtures/prose_answers.json``), which the rules may be fitted to and
must pass with no false positive, and the held-out set
(``fixtures/prose_holdout.json``), written apart from the rules and only
scored: its rate is printed and must stay at or under 1%.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio.calls import UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import Marker, ToolCallEvent
from templatestudio.formats import FORMATS
from templatestudio.leaks import assert_no_unparsed_markers, find_call_markers, unconsumed_markers
from templatestudio.guards import guard_of
from templatestudio.resumable_match import FAILED, MATCHED, MORE, Automaton, chars, run
from templatestudio.tools import looks_like_tool_call
from format_relations import covers  # a format whose declaration reads another's calls (Llama 3 reads Phi-4-mini's)

FIXTURES = Path(__file__).parent / "fixtures"
TUNING = json.loads((FIXTURES / "prose_answers.json").read_text(encoding="utf-8"))["answers"]
HOLDOUT = json.loads((FIXTURES / "prose_holdout.json").read_text(encoding="utf-8"))["answers"]
ORDINARY = [answer for answer in TUNING if answer["topic"] != "quotes-call-syntax"]
QUOTED_CALLS = [answer for answer in TUNING if answer["topic"] == "quotes-call-syntax"]
GEMMA4_CALL = FORMATS["gemma4"].samples[0].text
WITH_CALLS = [(name, i) for name, fmt in FORMATS.items() for i, sample in enumerate(fmt.samples) if sample.calls]


def false_positive(text: str) -> str | None:
    """Why text counts as a false positive (a marker found, or a reader that raises or reads a call), else None."""
    markers = find_call_markers(text)
    if markers:
        return f"marker {markers[0].text!r} at {markers[0].offset} ({markers[0].formats[0]})"
    for fmt in FORMATS.values():
        try:
            events = read_events(text, fmt)
        except UnparsedToolCall as error:
            return f"{fmt.name} raises: {error}"
        if any(isinstance(event, ToolCallEvent) for event in events):
            return f"{fmt.name} reads a call"
    return None


# --- the prose sets ----------------------------------------------------------------------------------


def test_no_tuning_answer_is_flagged():
    assert len(TUNING) >= 200
    flagged = {answer["id"]: why for answer in ORDINARY if (why := false_positive(answer["text"]))}
    print(f"tuning set: {len(flagged)} false positives of {len(ORDINARY)}")
    assert flagged == {}


def test_the_held_out_false_positive_rate_is_at_most_one_percent():
    assert len(HOLDOUT) >= 100
    assert not {a["text"] for a in HOLDOUT} & {a["text"] for a in TUNING}, "the held-out set must be its own"
    flagged = {answer["id"]: why for answer in HOLDOUT if (why := false_positive(answer["text"]))}
    rate = len(flagged) / len(HOLDOUT)
    print(f"held-out set: {len(flagged)} false positives of {len(HOLDOUT)} ({rate:.1%}): {flagged}")
    assert rate <= 0.01, flagged


def test_answers_quoting_a_complete_call_are_flagged():
    # A detector cannot tell these from a leak, and a call inside prose is
    # read (issue 11): every one of them counts.
    assert QUOTED_CALLS
    assert [a["id"] for a in QUOTED_CALLS if not find_call_markers(a["text"])] == []


# --- every call is found -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "index"), WITH_CALLS, ids=[f"{n}-{i}" for n, i in WITH_CALLS])
def test_a_call_no_span_consumed_is_flagged_with_its_format(name, index):
    text = FORMATS[name].samples[index].text
    leftover = unconsumed_markers(text, [])
    # Its own format, or the first in the registry whose reader reads the same calls (a survey names one).
    assert leftover and any(other == name or covers(FORMATS[other], FORMATS[name]) for other in leftover[0].formats)
    assert unconsumed_markers(text, [(0, len(text))]) == []
    with pytest.raises(UnparsedToolCall, match=r"^the reader left a tool call unread: .* at offset \d+ opens a call in the "):
        assert_no_unparsed_markers(text, [], "the reader")
    assert_no_unparsed_markers(text, [(0, len(text))], "the reader")


# Call attempts named in issue 11: each is either flagged (then every reader
# reads or refuses it) or written down as prose in some format's near misses.
ISSUE_11_ATTEMPTS = [
    "Checking. <|tool_call>cal",
    "Sure! [TOOL_CALLS]sear",
    "<tool_call>\n<func",
    '<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_call>',
    '<|tool_call>\ncall:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    '<|tool_call> call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    "[TOOL_CALLS]get weather[ARGS]{}",
    '[{"name": "get_weather", "parameters": {"city": "Paris"}}]',
    "{'name': 'get_weather', 'parameters': {'city': 'Paris'}}",
    '\ufeff{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "\u200b[get_weather(city='Paris')]",
    '{"parameters": {"city": "Paris"}, "name": "get_weather"}\nI will check.',
    "```json\n{'name': 'get_weather', 'arguments': {'city': 'Paris'}}\n```",
    '```json\n[{"name": "get_weather", "arguments": {"city": "Paris"}}]\n```',
    '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}} // the call\n```',
    '<|tool_call>:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    '[TOOL_CALLS]add{"a": 1}',
    "[TOOL_CALLS]toolname_no_args",
    "<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|>",
    '<|tool_call_start|> [get_weather(city="LA")]<|tool_call_end|>',
    'Here is the result: {"name": "get_weather", "parameters": {}} Would you like to know more?',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}',
    "[𝐝𝐞𝐥𝐞𝐭𝐞_𝐚𝐥𝐥(confirm=True)]",
    "<|tool_call>call:a{n:1٢٣}<tool_call|>",
]


@pytest.mark.parametrize("text", ISSUE_11_ATTEMPTS)
def test_a_call_attempt_is_never_silent(text):
    declared_prose = {miss.text for fmt in FORMATS.values() for miss in fmt.near_misses if not miss.raises}
    if text in declared_prose:
        return  # a decision written down in the format module, and tested by the registry
    assert find_call_markers(text), f"nothing flags {text!r}"
    for fmt in FORMATS.values():
        if not find_call_markers(text, guard=guard_of(None, fmt)):
            # A reader of a format that addresses its calls (harmony) does not watch the formats that
            # open on plain text: to it the attempt is content (tests/test_harmony_classes.py).
            assert fmt.wire.addressed, fmt.name
            assert not any(isinstance(event, ToolCallEvent) for event in read_events(text, fmt)), fmt.name
            continue
        try:
            events = read_events(text, fmt)
        except UnparsedToolCall:
            continue
        assert any(isinstance(event, ToolCallEvent) for event in events), (fmt.name, events)


def test_the_course_check_misses_gemma4_and_the_new_one_does_not():
    assert not looks_like_tool_call(GEMMA4_CALL)
    assert find_call_markers(GEMMA4_CALL) == [Marker("<|tool_call>", 0, ("gemma4",))]


def test_the_error_names_the_marker_and_its_offset():
    text = "Let me check.\n" + GEMMA4_CALL
    with pytest.raises(UnparsedToolCall) as caught:
        assert_no_unparsed_markers(text, [], "the hermes format")
    assert str(caught.value) == (
        "the hermes format left a tool call unread: '<|tool_call>' at offset 14 opens a call in the gemma4 format"
    )


@pytest.mark.parametrize(
    "text",
    [
        "Qwen wraps calls in <tool_call> tags.",
        "The token [TOOL_CALLS] is special in Mistral's vocabulary.",
        "Gemma 4 opens calls with <|tool_call> and closes with <tool_call|>.",
        "Llama writes <|python_tag|> first.",
        "An element such as <function=...> holds the name.",
        'Here:\n```json\n{"name": "Alice", "age": 3}\n```',
        "[link](https://example.com) and [x](y)",
    ],
)
def test_prose_that_names_a_marker_is_not_flagged(text):
    assert find_call_markers(text) == []


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("Checking now. <tool_call>\n", "<tool_call>"),
        ("<|tool_call>", "<|tool_call>"),
        ("[TOOL_CALLS]  ", "[TOOL_CALLS]"),
        ("<|python_tag|>", "<|python_tag|>"),
    ],
)
def test_an_opening_cut_off_at_the_end_is_flagged(text, literal):
    assert [marker.text for marker in find_call_markers(text)] == [literal]


def test_bare_list_calls_count_only_at_the_start_of_a_reply():
    assert find_call_markers('\n {"name": "f", "parameters": {"x": 1}}') == [Marker("{", 2, ("llama3-json",))]
    assert [m.text for m in find_call_markers("[f(x=1)]")] == ["["]
    assert find_call_markers("So [f(x=1)] is how you call it.") == []


def test_spans_may_be_pairs():
    assert unconsumed_markers(GEMMA4_CALL, [(0, len(GEMMA4_CALL))]) == []
    assert unconsumed_markers(GEMMA4_CALL, [(1, len(GEMMA4_CALL))])[0].offset == 0


def test_overlapping_and_unsorted_spans_cover_what_any_of_them_covers():
    text = "<|tool_call>call:f{}<tool_call|> " * 3
    assert [marker.offset for marker in find_call_markers(text)] == [0, 33, 66]
    assert unconsumed_markers(text, [(60, 70), (0, 50), (10, 20)]) == []
    assert [m.offset for m in unconsumed_markers(text, [(20, 40), (0, 1)])] == [66]
    assert [m.offset for m in unconsumed_markers(text, [(1, 33), (34, 99)])] == [0, 33]


# --- an opening pattern's two forms: a regex for whole texts, an automaton for streams ----------------

OPENERS = [(fmt.name, opener) for fmt in FORMATS.values() for opener in fmt.openers]
PIECES = sorted({o.literal for _, o in OPENERS}) + [
    "call:", '"type"', '"function"', '"name"', '"arguments"', '"parameters"', "'name'", "[ARGS]", "[CALL_ID]",
    "{", "[", "(", ">", ":", ",", '"', "\\", " ", "\n", "\t", "\x1c", "a", "f.g", "-", "é", "functions.",
]


@settings(max_examples=400, deadline=None)
@given(
    pair=st.sampled_from(OPENERS),
    tail=st.lists(st.sampled_from(PIECES), max_size=10).map("".join),
    cut=st.integers(0, 60),
)
def test_an_openers_automaton_reads_its_regex_language_in_any_pieces(pair, tail, cut):
    import regex

    _, opener = pair
    compiled = regex.compile(opener.opening.regex)
    text = opener.literal + tail
    whole = compiled.match(text, partial=True)
    expected = MORE if whole is not None and whole.partial else MATCHED if whole is not None else FAILED
    scan = opener.automaton.scan()
    verdict, end = scan.feed(text[:cut])
    if verdict == MORE:
        verdict, end = scan.feed(text, min(cut, len(text)))
    assert verdict == expected, (opener.literal, text)
    if verdict == MATCHED:  # the shortest match: what the regex needs to call it an opening
        assert compiled.match(text[:end]) and not compiled.match(text[: end - 1])


def test_a_long_run_after_the_fence_is_read_once():
    # "```json[ \t]*\n?\s*{" backtracked through every split of a long run
    # between its three pieces: 10 KB of spaces took 0.3 s, 30 KB 3 s.
    assert find_call_markers("```json" + " " * 20_000 + "x") == []
    assert find_call_markers('```json \n\t\n {"name": "f", "arguments": {}}')[0].text == "```json"


def test_a_run_repeats_at_least_zero_or_one_times():
    with pytest.raises(ValueError, match=r"run\(at_least=2\): only 0 or 1 is supported"):
        run(chars("a"), at_least=2)
    assert Automaton(run(chars("a"), at_least=1)).scan().feed("b")[0] == FAILED
