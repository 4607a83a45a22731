"""Family-aware leak detection: every format's call is flagged under every other parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samples import FORMAT_SAMPLES, GEMMA4_CALL
from templatestudio.formats import FORMATS
from templatestudio.leaks import (
    MARKER_RULES,
    Marker,
    assert_no_unparsed_markers,
    find_call_markers,
    unconsumed_markers,
)
from templatestudio.resumable_match import FAILED, MATCHED, MORE, chars, run
from templatestudio.tools import UnparsedToolCall, looks_like_tool_call

PROSE = json.loads(
    (Path(__file__).parent / "fixtures" / "prose_answers.json").read_text(encoding="utf-8")
)["answers"]
ORDINARY = [answer for answer in PROSE if answer["topic"] != "quotes-call-syntax"]
QUOTED_CALLS = [answer for answer in PROSE if answer["topic"] == "quotes-call-syntax"]

SAMPLES = [(name, i, text) for name, texts in FORMAT_SAMPLES.items() for i, text in enumerate(texts)]
MISMATCHED = [(written, reader, i, text) for written, i, text in SAMPLES for reader in FORMATS if reader != written]


def test_every_registered_format_has_a_marker_rule_for_each_of_its_markers():
    for fmt in FORMATS.values():
        literals = {rule.literal for rule in MARKER_RULES if fmt.name in rule.formats}
        assert set(fmt.markers) <= literals, fmt.name


@pytest.mark.parametrize("written,reader,index,text", MISMATCHED, ids=[f"{w}-{i}-by-{r}" for w, r, i, _ in MISMATCHED])
def test_a_call_read_by_the_wrong_parser_is_flagged(written, reader, index, text):
    spans = FORMATS[reader].parser.scan(text)
    leftover = unconsumed_markers(text, spans)
    assert leftover and written in leftover[0].formats
    with pytest.raises(UnparsedToolCall, match=rf"the {reader} format left a tool call unread"):
        assert_no_unparsed_markers(text, spans, FORMATS[reader])


@pytest.mark.parametrize("name,index,text", SAMPLES, ids=[f"{n}-{i}" for n, i, _ in SAMPLES])
def test_the_right_parser_consumes_every_marker(name, index, text):
    spans = FORMATS[name].parser.scan(text)
    assert spans
    assert find_call_markers(text)
    assert_no_unparsed_markers(text, spans, FORMATS[name])


def test_no_ordinary_answer_is_flagged():
    assert len(PROSE) >= 200
    flagged = [answer["id"] for answer in ORDINARY if find_call_markers(answer["text"])]
    assert flagged == []


def test_answers_quoting_a_complete_call_mid_reply_are_flagged():
    # A detector cannot tell these from a leak; the bare Llama JSON one is
    # only a call when it opens the reply, so it stays unflagged.
    flagged = {answer["id"] for answer in QUOTED_CALLS if find_call_markers(answer["text"])}
    assert flagged == {a["id"] for a in QUOTED_CALLS} - {"quotes-call-syntax-004"}


def test_the_course_check_misses_gemma4_and_the_new_one_does_not():
    assert not looks_like_tool_call(GEMMA4_CALL)
    assert find_call_markers(GEMMA4_CALL) == [Marker("<|tool_call>", 0, ("gemma4",))]


def test_the_error_names_the_marker_and_its_offset():
    text = "Let me check.\n" + GEMMA4_CALL
    with pytest.raises(UnparsedToolCall) as caught:
        assert_no_unparsed_markers(text, [], FORMATS["hermes"])
    assert str(caught.value) == (
        "the hermes format left a tool call unread: '<|tool_call>' at offset 14 "
        "opens a call in the gemma4 format"
    )


def test_offset_shifts_the_reported_position():
    with pytest.raises(UnparsedToolCall, match="at offset 107 "):
        assert_no_unparsed_markers(GEMMA4_CALL, [], "a parser", offset=107)


@pytest.mark.parametrize(
    "text",
    [
        "Qwen wraps calls in <tool_call> tags.",
        "The token [TOOL_CALLS] is special in Mistral's vocabulary.",
        "Gemma 4 opens calls with <|tool_call> and closes with <tool_call|>.",
        "Llama writes <|python_tag|> first.",
        "An element such as <function=...> holds the name.",
        "Here:\n```json\n{\"name\": \"Alice\", \"age\": 3}\n```",
        'Your JSON: {"name": "f", "parameters": {}} is a tool call.',
        "[link](https://example.com) and [x](y)",
    ],
)
def test_prose_that_names_a_marker_is_not_flagged(text):
    assert find_call_markers(text) == []


@pytest.mark.parametrize(
    "text,literal",
    [
        ("Checking now. <tool_call>\n", "<tool_call>"),
        ("<|tool_call>", "<|tool_call>"),
        ("[TOOL_CALLS]  ", "[TOOL_CALLS]"),
        ("<|python_tag|>", "<|python_tag|>"),
    ],
)
def test_an_opening_cut_off_at_the_end_is_flagged(text, literal):
    assert [marker.text for marker in find_call_markers(text)] == [literal]


def test_bare_shapes_count_only_at_the_start_of_a_reply():
    call = '\n {"name": "f", "parameters": {"x": 1}}'
    assert find_call_markers(call) == [Marker("{", 2, ("llama3-json",))]
    assert find_call_markers(call, at_reply_start=False) == []
    assert find_call_markers('[f(x=1)]', at_reply_start=False) == []
    assert [m.text for m in find_call_markers('[f(x=1)]')] == ["["]


def test_spans_may_be_pairs():
    assert unconsumed_markers(GEMMA4_CALL, [(0, len(GEMMA4_CALL))]) == []
    assert unconsumed_markers(GEMMA4_CALL, [(1, len(GEMMA4_CALL))])[0].offset == 0


# --- the marker rules' two forms: a regex for whole texts, an automaton for streams ---------

RULE_PIECES = [
    "<tool_call>", "<function=", "<|tool_call>", "call:", "[TOOL_CALLS]", "<|python_tag|>",
    "<|tool_call_start|>", "```json", '"type"', '"function"', '"name"', '"arguments"', '"parameters"',
    "[ARGS]", "[CALL_ID]", "{", "[", "(", ">", ":", ",", '"', "\\", " ", "\n", "\t", "\x1c",
    "a", "f.g", "-", "é",
]


@settings(max_examples=400, deadline=None)
@given(
    rule=st.sampled_from(MARKER_RULES),
    tail=st.lists(st.sampled_from(RULE_PIECES), max_size=10).map("".join),
    cut=st.integers(0, 60),
)
def test_a_rules_automaton_reads_its_regex_language_in_any_pieces(rule, tail, cut):
    text = rule.literal + tail
    whole = rule.compiled.match(text, partial=True)
    expected = MORE if whole is not None and whole.partial else MATCHED if whole is not None else FAILED
    scan = rule.automaton.scan()
    verdict, end = scan.feed(text[:cut])
    if verdict == MORE:
        verdict, end = scan.feed(text, min(cut, len(text)))
    assert verdict == expected, (rule.literal, text)
    if verdict == MATCHED:  # the shortest match: what the regex needs to call it a call
        assert rule.compiled.match(text[:end]) and not rule.compiled.match(text[: end - 1])


def test_the_fenced_rule_has_one_whitespace_run_after_the_fence():
    # "```json[ \t]*\n?\s*{" backtracked through every split of a long run
    # between its three pieces: 10 KB of spaces took 0.3 s, 30 KB 3 s.
    fenced = next(rule for rule in MARKER_RULES if rule.literal == "```json")
    assert fenced.pattern.startswith(r"```json\s*+\{")
    assert find_call_markers("```json" + " " * 20_000 + "x") == []
    assert find_call_markers("```json \n\t\n " + '{"name": "f", "arguments": {}}')[0].text == "```json"


def test_a_run_repeats_at_least_zero_or_one_times():
    with pytest.raises(ValueError, match=r"run\(at_least=2\): only 0 or 1 is supported"):
        run(chars("a"), at_least=2)


def test_overlapping_and_unsorted_spans_cover_what_any_of_them_covers():
    text = "<|tool_call>call:f{}<tool_call|> " * 3
    starts = [marker.offset for marker in find_call_markers(text)]
    assert starts == [0, 33, 66]
    assert unconsumed_markers(text, [(60, 70), (0, 50), (10, 20)]) == []
    assert [m.offset for m in unconsumed_markers(text, [(20, 40), (0, 1)])] == [66]
    assert [m.offset for m in unconsumed_markers(text, [(1, 33), (34, 99)])] == [0, 33]
