"""Kimi K3 (XTML): the conformance fixtures, generated calls, refusals, and streams.

- Every Kimi K3 fixture of the ``canitoolcall`` suite (the installed
  package's bundled fixtures; a test dependency, never skipped) read by
  ``read_tool_calls(text, "kimi-k3", prefix=the generation prompt)`` gives
  the expected calls, content and reasoning, or an accepted outcome; the
  few where this reader answers otherwise are listed with the reason, and
  the test holds them to that answer. The Kimi K2.6 and K2 Instruct
  fixtures read as the existing ``kimi-k2`` format, K3's calls are leaks
  under K2's reader and K2's under K3's.
- Generated calls (several per reply, every type, keys and values full of
  XTML-looking text) written by the test's own spelling of the wire read
  back exactly, whole and streamed in random chunks.
- Malformed calls raise ``UnparsedToolCall`` with the reader's reason.
"""

from __future__ import annotations

import json
import random
from importlib import resources

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from templatestudio import ToolCallStream, UnparsedToolCall, get_format, read_tool_calls
from templatestudio.calls import ParsedToolCall
from templatestudio.engine import Machine, read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from layout_oracle import laid_out
from oracle import same_json  # the tests' own comparison, not the package's

K3 = get_format("kimi-k3")
K2 = get_format("kimi-k2")
FIXTURES = resources.files("canitoolcall") / "_data" / "fixtures" / "kimi"  # the installed suite's own corpus

# The test's own spelling of the wire (not the module's constants).
OPEN, CLOSE, SEP = "<|open|>", "<|close|>", "<|sep|>"
THINK_PROMPT = f'{OPEN}message role="assistant"{SEP}{OPEN}think{SEP}'
NO_THINK_PROMPT = f'{OPEN}message role="assistant"{SEP}{OPEN}response{SEP}'


def _fixtures() -> list[dict]:
    files = sorted((entry for entry in FIXTURES.iterdir() if entry.name.endswith(".jsonl")), key=lambda e: e.name)
    return [json.loads(line) for path in files for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


ALL = _fixtures()
PROMPTS = {model["repo"]: model["default_generation_prompt"]
           for model in json.loads((FIXTURES / "family.json").read_text(encoding="utf-8"))["reference_models"]}
K3_FIXTURES = [item for item in ALL if "x-kimi-k3" in item["tags"]]
K2_FIXTURES = [item for item in ALL if "x-kimi-k2" in item["tags"]]

# Fixtures this reader answers otherwise, and why: none now (a reply that opens with its
# response element skipped the think element, Reasoning.skipped_by).
DIFFERENT: dict[str, str] = {}
# K2 fixtures kimi-k2 answers otherwise (kimi_k2.py's business, left out here): text between
# the section token and the first call, which the reader refuses (README, "Conformance").
K2_DIFFERENT = ("kimi/k2i-vllm-noise-between-markers",)
K2_READ = [item for item in K2_FIXTURES if item["id"] not in K2_DIFFERENT]
# Fixtures whose expected content or reasoning keeps whitespace that touches
# the reasoning block or a call, in a format whose declared spacing makes it
# layout (issue 22 item 4): the reader gives the expected answer without that
# whitespace, and the raw machine (layout=False) gives it exactly. None now:
# K3 (like K2) declares no layout whitespace, since its encoder writes none, so
# a recorded reply cut after a space in its reasoning keeps that space.
LAYOUT_IN_EXPECTED: set[str] = set()


def prompt_of(fixture: dict) -> str:
    if fixture.get("generation_prompt"):
        return fixture["generation_prompt"]
    if fixture.get("thinking") is False:
        raise AssertionError(f"{fixture['id']}: thinking off without a generation prompt")
    return PROMPTS[fixture["models"][0]]


def answer(fixture: dict, name: str) -> dict:
    reply = read_tool_calls(fixture["raw_output"], name, prefix=prompt_of(fixture))
    return {"content": reply.content or None, "reasoning": reply.reasoning or None,
            "calls": [(call.name, call.arguments) for call in reply.calls]}


def every_character(fixture: dict, fmt) -> list:
    """The raw machine's events (layout=False), not strict as read_tool_calls: every character kept."""
    machine = Machine(fmt, reasoning_open=fmt.reasoning_opened_by(prompt_of(fixture)), strict=False, layout=False)
    return merge_deltas(machine.feed(fixture["raw_output"]) + machine.close())


def answer_of(events: list) -> dict:
    content = "".join(event.text for event in events if isinstance(event, TextDelta))
    reasoning = "".join(event.text for event in events if isinstance(event, ReasoningDelta))
    return {"content": content or None, "reasoning": reasoning or None,
            "calls": [(event.call.name, event.call.arguments) for event in events if isinstance(event, ToolCallEvent)]}


def check_expected(fixture: dict, fmt) -> None:
    """The fixture's expected answer, exactly; with LAYOUT_IN_EXPECTED, exactly from the raw machine and
    without the layout from the reader. Either way the reader's events are the raw ones laid out."""
    raw = every_character(fixture, fmt)
    reply = read_tool_calls(fixture["raw_output"], fmt, prefix=prompt_of(fixture))
    assert reply.events == laid_out(raw, fmt.spacing), (reply.events, raw)
    got = answer(fixture, fmt.name)
    if fixture["id"] in LAYOUT_IN_EXPECTED:
        assert matches(answer_of(raw), fixture["expected"]), raw
        assert not matches(got, fixture["expected"]), got  # the set stays what it says
    else:
        assert matches(got, fixture["expected"]), got


def matches(got: dict, expected: dict) -> bool:
    want = expected["tool_calls"]
    return (got["content"] == (expected["content"] or None)
            and got["reasoning"] == (expected["reasoning_content"] or None)
            and len(got["calls"]) == len(want)
            and all(name == item["name"] and same_json(arguments, item["arguments"])
                    for (name, arguments), item in zip(got["calls"], want)))


def outcome(fixture: dict, name: str) -> str:
    """The conformance suite's outcome of a cut or malformed reply: exception, no_tool_calls or calls."""
    try:
        got = answer(fixture, name)
    except UnparsedToolCall:
        return "exception"
    return "calls" if got["calls"] else "no_tool_calls"


def chunks(text: str, rng: random.Random) -> list[str]:
    pieces, at = [], 0
    while at < len(text):
        size = rng.choice((1, 1, 2, 3, 5, 8, 13, 40))
        pieces.append(text[at : at + size])
        at += size
    return pieces


def streamed(text: str, fmt, pieces: list[str], reasoning_open: bool) -> list:
    stream = ToolCallStream(fmt, reasoning_open=reasoning_open)
    events = [event for piece in pieces for event in stream.feed(piece)]
    return merge_deltas(events + stream.close())


def whole_or_error(text: str, fmt, reasoning_open: bool):
    try:
        return read_events(text, fmt, reasoning_open=reasoning_open)
    except UnparsedToolCall as error:
        return f"raised: {error}"


def stream_or_error(text: str, fmt, pieces: list[str], reasoning_open: bool):
    try:
        return streamed(text, fmt, pieces, reasoning_open)
    except UnparsedToolCall as error:
        return f"raised: {error}"


# --- the conformance fixtures ------------------------------------------------------------------------


def test_the_fixtures_hold_kimi_k3_cases():
    assert len(K3_FIXTURES) >= 20 and set(DIFFERENT) <= {item["id"] for item in K3_FIXTURES}


@pytest.mark.parametrize("fixture", K3_FIXTURES, ids=[item["id"] for item in K3_FIXTURES])
def test_each_k3_fixture_reads_as_expected(fixture):
    different = DIFFERENT.get(fixture["id"])
    if different == "all reasoning":
        got = answer(fixture, "kimi-k3")
        assert got == {"content": None, "reasoning": fixture["raw_output"], "calls": []}
        return
    if "expected" in fixture:
        check_expected(fixture, K3)
        return
    assert outcome(fixture, "kimi-k3") in fixture["expected_error"]["accept"]


@pytest.mark.parametrize("fixture", K3_FIXTURES, ids=[item["id"] for item in K3_FIXTURES])
def test_each_k3_fixture_streams_as_it_reads(fixture):
    text, opened = fixture["raw_output"], K3.reasoning_opened_by(prompt_of(fixture))
    whole = whole_or_error(text, K3, opened)
    rng = random.Random(fixture["id"])
    for _ in range(5):
        assert stream_or_error(text, K3, chunks(text, rng), opened) == whole


@pytest.mark.parametrize("fixture", K2_READ, ids=[item["id"] for item in K2_READ])
def test_each_k2_fixture_reads_as_kimi_k2(fixture):
    if "expected" in fixture:
        check_expected(fixture, K2)
    else:
        assert outcome(fixture, "kimi-k2") in fixture["expected_error"]["accept"]


def test_the_fixtures_kept_layout_whitespace_in_are_fixtures_read_here():
    read = {item["id"] for item in K3_FIXTURES + K2_READ if "expected" in item and item["id"] not in DIFFERENT}
    assert LAYOUT_IN_EXPECTED <= read


def test_the_k26_fixtures_are_all_read_by_kimi_k2():
    k26 = [item for item in K2_FIXTURES if item["models"] == ["moonshotai/Kimi-K2.6"]]
    assert len(k26) >= 14 and all(item in K2_READ for item in k26)


# Calls a reader reads (K2's noise case is text to K2's own reader, so to K3's too).
WITH_CALLS = [item for item in ALL if item.get("expected", {}).get("tool_calls") and item["id"] not in K2_DIFFERENT]


@pytest.mark.parametrize("fixture", WITH_CALLS, ids=[item["id"] for item in WITH_CALLS])
def test_one_kimi_generations_calls_are_a_leak_under_the_other(fixture):
    other = K2 if "x-kimi-k3" in fixture["tags"] else K3
    with pytest.raises(UnparsedToolCall, match="left a tool call unread"):
        read_tool_calls(fixture["raw_output"], other, prefix=prompt_of(fixture))


# --- the prompt decides the reasoning ---------------------------------------------------------------


def test_the_thinking_prompt_opens_the_reasoning_and_the_other_does_not():
    assert K3.reasoning_opened_by(THINK_PROMPT)
    assert not K3.reasoning_opened_by(NO_THINK_PROMPT)
    assert not K3.reasoning_opened_by(f"{THINK_PROMPT}done{CLOSE}think{SEP}")


def test_a_reply_cut_inside_the_reasoning_is_reasoning():
    reply = read_tool_calls("Still thinking <|clo", "kimi-k3", prefix=THINK_PROMPT)
    assert (reply.reasoning, reply.content, reply.calls) == ("Still thinking <|clo", "", [])


# --- generated calls ---------------------------------------------------------------------------------

# Text that looks like the wire: every tag but the tools closer (a value cannot hold it),
# the argument's closer included (held_by_a_limit leaves out the values it would end).
XTML_BITS = [OPEN, CLOSE, SEP, f"{OPEN}tools{SEP}", f"{CLOSE}call{SEP}", f'{OPEN}argument key="k" type="string"{SEP}',
             f"{CLOSE}argument{SEP}",
             f"{OPEN}response{SEP}", f"{CLOSE}message{SEP}", f"{CLOSE}think{SEP}", '"', "&", "&amp;", "&quot;",
             "&lt;", "<|", "|>", " index=\"1\"", "\n", " "]
xtml_text = st.lists(st.one_of(st.sampled_from(XTML_BITS), st.text(max_size=6)), max_size=6).map("".join)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**15), 10**15),
                    st.floats(allow_nan=False, allow_infinity=False), xtml_text)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(xtml_text, inner, max_size=3), max_leaves=8)
names = st.one_of(st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True), xtml_text.filter(bool))
calls = st.builds(ParsedToolCall, names, st.dictionaries(xtml_text, json_values, max_size=5))


def attribute(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")


def type_of(value: object) -> str:
    kinds = {str: "string", bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}
    return "null" if value is None else kinds[type(value)]


def spelled(call: ParsedToolCall, index: int, space: str) -> str:
    arguments = "".join(
        f'{space}{OPEN}argument key="{attribute(key)}" type="{type_of(value)}"{SEP}'
        f"{value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}{CLOSE}argument{SEP}"
        for key, value in call.arguments.items()
    )
    return f'{space}{OPEN}call tool="{attribute(call.name)}" index="{index}"{SEP}{arguments}{space}{CLOSE}call{SEP}'


def held_by_a_limit(call: ParsedToolCall) -> bool:
    # A name holding the tools closer ends the element too (the limits speak of arguments only).
    return bool(K3.limits_for(call.arguments)) or f"{CLOSE}tools{SEP}" in call.name


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(turn=st.lists(calls, min_size=1, max_size=4), thinking=st.text(max_size=20), content=st.text(max_size=20),
       space=st.sampled_from(["", "\n", " \n  "]), seed=st.integers(0, 1000))
@example(turn=[ParsedToolCall("f", {"a": " x "})], thinking=" a  b\n", content="\tc \n d ", space="\n", seed=0)
def test_generated_replies_read_back_whole_and_streamed(turn, thinking, content, space, seed):
    if any(held_by_a_limit(call) for call in turn) or any(mark in thinking for mark in (CLOSE + "think", "<|")) \
            or "<|" in content:
        return
    section = f"{OPEN}tools{SEP}" + "".join(spelled(call, i + 1, space) for i, call in enumerate(turn)) \
        + f"{space}{CLOSE}tools{SEP}"
    text = f"{thinking}{CLOSE}think{SEP}{OPEN}response{SEP}{content}{CLOSE}response{SEP}{section}{CLOSE}message{SEP}"
    reply = read_tool_calls(text, "kimi-k3", prefix=THINK_PROMPT)
    assert len(reply.calls) == len(turn)
    for got, want in zip(reply.calls, turn):
        assert got.name == want.name and same_json(got.arguments, want.arguments), (text, got)
    # The whitespace where the thought and the content touch the block and the calls is layout; inside, kept.
    raw = ([ReasoningDelta(thinking)] if thinking else []) + ([TextDelta(content)] if content else []) \
        + [ToolCallEvent(call) for call in reply.calls]
    laid = laid_out(raw, K3.spacing)
    assert reply.reasoning == "".join(e.text for e in laid if isinstance(e, ReasoningDelta))
    assert reply.content == "".join(e.text for e in laid if isinstance(e, TextDelta))
    if (thinking, content) == (" a  b\n", "\tc \n d "):  # the example above, spelled out:
        # K3's encoder writes no whitespace of its own, so all of it is the model's.
        assert (reply.reasoning, reply.content) == (" a  b\n", "\tc \n d ")
    assert reply.ids == [None] * len(turn)
    pieces = chunks(text, random.Random(seed))
    assert streamed(text, K3, pieces, True) == read_events(text, K3, reasoning_open=True)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(call=calls)
def test_the_writer_writes_what_the_tests_spelling_says(call):
    if held_by_a_limit(call):
        return
    assert K3.write_call(call) == f"{OPEN}tools{SEP}{spelled(call, 1, '')}{CLOSE}tools{SEP}"


def test_each_type_comes_back_typed():
    call = ParsedToolCall("f", {"s": "15", "i": 15, "x": 1.5, "e": 1e300, "t": True, "f": False, "n": None,
                                "a": [1, "two", None], "o": {"k": [True]}, "empty": "", "spaces": "  "})
    (read,) = read_tool_calls(f"{CLOSE}response{SEP}{OPEN}tools{SEP}{spelled(call, 1, '')}{CLOSE}tools{SEP}",
                              "kimi-k3", prefix=NO_THINK_PROMPT).calls
    assert same_json(read.arguments, call.arguments)
    assert type(read.arguments["i"]) is int and type(read.arguments["x"]) is float


def test_a_json_value_may_have_whitespace_around_it():
    text = (f'{OPEN}tools{SEP}{OPEN}call tool="f" index="1"{SEP}{OPEN}argument key="a" type="array"{SEP}'
            f" [1]\n{CLOSE}argument{SEP}{CLOSE}call{SEP}{CLOSE}tools{SEP}")
    (call,) = read_tool_calls(text, "kimi-k3").calls
    assert same_json(call.arguments, {"a": [1]})


def test_an_empty_tools_element_is_no_call_and_no_text():
    reply = read_tool_calls(f"{CLOSE}response{SEP}{OPEN}tools{SEP}{CLOSE}tools{SEP}{CLOSE}message{SEP}", "kimi-k3",
                            prefix=NO_THINK_PROMPT)
    assert (reply.calls, reply.content, reply.reasoning) == ([], "", "")


# --- values holding the argument's closer ---------------------------------------------------------------

ARG_END = f"{CLOSE}argument{SEP}"
# What may stand after a closer inside a value without ending it: text, other tags, near
# misses of the two structures that end a value (the argument's tag, the call's closer).
AFTER_CLOSER = [" is how args end", "x", "\n", ARG_END, f"{CLOSE}call", f"{CLOSE}call{SEP[:-1]}", f"{OPEN}argument",
                f"{OPEN}argument key", f"{OPEN}argument  key=\"", f"{OPEN}tools{SEP}", f'{OPEN}call tool="g"',
                f"{CLOSE}think{SEP}", f"{CLOSE}message{SEP}", f"{OPEN}response{SEP}", "<|close|>", "&quot;", '"']
held_closers = st.lists(st.one_of(st.just(ARG_END), st.sampled_from(AFTER_CLOSER), st.text(max_size=4)),
                        max_size=6).map("".join)
# The ambiguous ones: the closer, whitespace or nothing, then one of the two structures.
BOUNDARIES = [f"{ARG_END}{space}{structure}" for space in ("", " ", "\n\t")
              for structure in (f'{OPEN}argument key="', f"{CLOSE}call{SEP}")]


def first_boundary(text: str) -> int:
    """The test's own statement of where a value ends: the first closer followed (after whitespace) by a structure."""
    at = text.find(ARG_END)
    while at != -1:
        rest = text[at + len(ARG_END):].lstrip(" \t\n\r")
        if rest.startswith((f'{OPEN}argument key="', f"{CLOSE}call{SEP}")):
            return at
        at = text.find(ARG_END, at + 1)
    return -1


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(held_closers, min_size=1, max_size=3), nested=st.booleans(), seed=st.integers(0, 1000))
@example(values=[f"{ARG_END} is how args end"], nested=False, seed=0)
@example(values=[ARG_END, f"x{ARG_END}", f"{ARG_END}{ARG_END}"], nested=False, seed=1)
@example(values=[f'{ARG_END}{OPEN}argument key="'], nested=True, seed=2)  # JSON escapes the quote: no tag
def test_values_holding_the_closer_read_back_exactly_whole_and_streamed(values, nested, seed):
    arguments = {f"k{i}": ([value, {"in": value}] if nested else value) for i, value in enumerate(values)}
    text = f"{OPEN}tools{SEP}{spelled(ParsedToolCall('f', arguments), 1, '')}{CLOSE}tools{SEP}"
    written = [json.dumps(v, ensure_ascii=False) if nested else v for v in arguments.values()]
    if f"{CLOSE}tools{SEP}" in "".join(written):
        return  # the other limit
    ambiguous = any(first_boundary(f"{value}{ARG_END}{CLOSE}call{SEP}") != len(value) for value in written)
    assert bool(K3.limits_for(arguments)) == ambiguous, (arguments, K3.limits_for(arguments))
    if ambiguous:
        return
    whole = read_events(text, K3)
    (event,) = whole
    assert event.call.name == "f" and same_json(event.call.arguments, arguments), (text, event.call)
    assert streamed(text, K3, chunks(text, random.Random(seed)), False) == whole


@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("tail", ["", " is how it ends", f'b" type="string"{SEP}c'])
def test_a_value_holding_the_closer_then_a_structure_is_a_limit_and_is_never_read_as_written(boundary, tail):
    value = f"a{boundary}{tail}"
    arguments = {"text": value}
    (limit,) = K3.limits_for(arguments)
    assert "the value ends there" in limit.description
    written = K3.write_call(ParsedToolCall("f", arguments))
    try:
        events = read_events(written, K3)
    except UnparsedToolCall as error:
        assert "cannot be told from its end" in str(error) or "given twice" in str(error), error
        with pytest.raises(UnparsedToolCall):
            streamed(written, K3, chunks(written, random.Random(3)), False)
        return
    (event,) = events  # read as the structure: the value is cut where the template's boundary stands
    assert event.call.arguments["text"] == "a"
    assert streamed(written, K3, chunks(written, random.Random(3)), False) == events


def test_the_fixtures_value_reads_as_written():
    value = f"{ARG_END} is how args end"
    text = one(argument("path", "string", "x.txt") + argument("content", "string", value))
    (event,) = read_events(text, K3)
    assert event.call.arguments == {"path": "x.txt", "content": value}
    assert not K3.limits_for({"content": value})


def test_a_value_holding_the_tools_closer_is_a_declared_limit():
    arguments = {"text": f"a {CLOSE}tools{SEP} b"}
    assert K3.limits_for(arguments)
    with pytest.raises(UnparsedToolCall):
        read_events(K3.write_call(ParsedToolCall("f", arguments)), K3)


# --- refusals ------------------------------------------------------------------------------------------


def tools(*calls_text: str) -> str:
    return f"{OPEN}tools{SEP}{''.join(calls_text)}{CLOSE}tools{SEP}"


def one(body: str, name: str = "f", index: str = "1") -> str:
    return tools(f'{OPEN}call tool="{name}" index="{index}"{SEP}{body}{CLOSE}call{SEP}')


def argument(key: str, kind: str, value: str) -> str:
    return f'{OPEN}argument key="{key}" type="{kind}"{SEP}{value}{CLOSE}argument{SEP}'


REFUSED = [
    (one(argument("x", "integer", "1")), r"the argument 'x' has type 'integer', not one of string, number, boolean, "
                                         r"null, array, object"),
    (one(argument("x", "", "1")), r"the argument 'x' has type '', not one of"),
    (one(argument("x", "number", '"15"')), r"the argument 'x' of type 'number' holds \"15\""),
    (one(argument("x", "number", "true")), r"the argument 'x' of type 'number' holds true"),
    (one(argument("x", "boolean", "1")), r"the argument 'x' of type 'boolean' holds 1"),
    (one(argument("x", "null", "0")), r"the argument 'x' of type 'null' holds 0"),
    (one(argument("x", "array", "{}")), r"the argument 'x' of type 'array' holds \{\}"),
    (one(argument("x", "object", "[]")), r"the argument 'x' of type 'object' holds \[\]"),
    (one(argument("x", "object", '{"a": ')), r"invalid JSON at offset"),
    (one(argument("x", "number", "1 2")), r"unexpected text after the JSON value"),
    (one(argument("x", "string", "1") + argument("x", "string", "2")), r"the argument 'x' is given twice"),
    (one(argument("a&b", "string", "1")), r"the argument key at offset \d+ holds an & that is neither &amp; nor "
                                          r"&quot;"),
    (one("", name="a&lt;b"), r"the tool name at offset \d+ holds an & that is neither"),
    (one("", name=""), r"the call at offset \d+ has an empty tool name"),
    (one("", index="one"), r"the index of 'f' at offset \d+ is not ASCII digits"),
    (one("", index="١"), r"the index of 'f' at offset \d+ is not ASCII digits"),
    (tools(f'{OPEN}call tool="f"{SEP}{CLOSE}call{SEP}'), r'expected index="N" after the tool name \'f\''),
    (one(f'{OPEN}argument key="x"{SEP}1{CLOSE}argument{SEP}'), r"the argument 'x' at offset \d+ has no type"),
    (one(f'{OPEN}argument key="x" type="string" {SEP}1{CLOSE}argument{SEP}'),
     r"expected <\|sep\|> after the argument 'x'\'s type"),
    (one(f'{OPEN}argument key="x" type="string"{SEP}1'), r"the value of 'x' has no <\|close\|>argument<\|sep\|>"),
    (one("noise"), r'expected <\|open\|>argument key=" or <\|close\|>call<\|sep\|> at offset'),
    # A value holding the closer then the call's closer, then text: the value may hold both.
    (one(argument("x", "string", f"{CLOSE}argument{SEP}{CLOSE}call{SEP} tail")),
     r"the value of 'x' ends at offset \d+, where <\|close\|>argument<\|sep\|> is followed by <\|close\|>call<\|sep\|>, "
     r"but text follows the call at offset \d+: a value holding <\|close\|>argument<\|sep\|> then "
     r"<\|close\|>call<\|sep\|> as text cannot be told from its end"),
    # ... or the closer then an argument's tag that opens no argument.
    (one(argument("x", "string", f'{CLOSE}argument{SEP}{OPEN}argument key=" is how they start')),
     r"the value of 'x' ends at offset 103, where <\|close\|>argument<\|sep\|> is followed by "
     r"<\|open\|>argument key=\", but the argument key at offset 149 has no closing quote: a value holding "
     r"<\|close\|>argument<\|sep\|> then <\|open\|>argument key=\" as text cannot be told from its end"),
    (one(argument("x", "string", f'{CLOSE}argument{SEP}{OPEN}argument key="y" no type')),
     r"the value of 'x' ends at offset 103, .* but the argument 'y' at offset 127 has no type attribute: "),
    (tools(f'{OPEN}call tool="f" index="1"{SEP}{CLOSE}call{SEP}', "noise"),
     r'expected <\|open\|>call tool=" or <\|close\|>tools<\|sep\|> at offset'),
]


@pytest.mark.parametrize(("text", "message"), REFUSED, ids=[str(i) for i in range(len(REFUSED))])
def test_a_malformed_call_is_refused_with_its_reason(text, message):
    with pytest.raises(UnparsedToolCall, match=r"the kimi-k3 format cannot read the tool call at offset 0 "
                                               r"\('<\|open\|>tools<\|sep\|>'\): " + message):
        read_events(text, K3)
    with pytest.raises(UnparsedToolCall, match=message):
        streamed(text, K3, chunks(text, random.Random(7)), False)


@pytest.mark.parametrize("cut", [5, 20, 30, 60, 100, -len(f"{CLOSE}tools{SEP}"), -1])
def test_a_reply_cut_inside_the_tools_element_raises(cut):
    text = one(argument("city", "string", "Paris"))[:cut]
    if len(text) < len(f"{OPEN}tools{SEP}"):
        assert read_events(text, K3) == [TextDelta(text)]  # a token's start is text
        return
    with pytest.raises(UnparsedToolCall, match="the reply ended inside a tool call"):
        read_events(text, K3)


def test_prose_naming_the_tokens_and_framing_in_the_reply_stay_out_of_the_calls():
    prose = f"K3 writes {OPEN}tools{SEP} before its calls."
    assert read_events(prose, K3) == [TextDelta(prose)]
    events = read_events(f"{OPEN}response{SEP}Hi{CLOSE}response{SEP}{CLOSE}message{SEP}", K3)
    assert events == [TextDelta("Hi")]
    assert not any(isinstance(event, (ToolCallEvent, ReasoningDelta)) for event in events)


def test_a_reply_cut_in_its_second_call_keeps_the_first():
    first = f'{OPEN}call tool="f" index="1"{SEP}{argument("a", "number", "1")}{CLOSE}call{SEP}'
    text = f'{CLOSE}response{SEP}{OPEN}tools{SEP}{first}{OPEN}call tool="g" index="2"{SEP}{OPEN}argument key="b'
    reply = read_tool_calls(text, "kimi-k3", prefix=NO_THINK_PROMPT)
    assert [(call.name, call.arguments) for call in reply.calls] == [("f", {"a": 1})]
    assert reply.content == "" and reply.cut is not None and reply.cut.name == "g"
    assert reply.cut.raw == text[text.index(f'{OPEN}call tool="g"'):]
    with pytest.raises(UnparsedToolCall, match="the reply ended inside a tool call"):
        read_tool_calls(text, "kimi-k3", prefix=NO_THINK_PROMPT, strict=True)


# --- a reply that skips the think element its prompt opened (Reasoning.skipped_by) -----------------

RESPONSE_OPEN = "<|open|>response<|sep|>"


@pytest.mark.parametrize("answer", ["Hello world", "", "  two  spaces ", "<|open|>response<|sep|> again"])
@pytest.mark.parametrize("seed", range(4))
def test_a_reply_opening_with_its_response_skipped_the_think_the_prompt_opened(answer, seed):
    text = f"{RESPONSE_OPEN}{answer}<|close|>response<|sep|><|close|>message<|sep|>"
    whole = read_events(text, K3, reasoning_open=True)
    assert not any(isinstance(event, ReasoningDelta) for event in whole)
    assert "".join(event.text for event in whole if isinstance(event, TextDelta)) == answer.replace(RESPONSE_OPEN, "")
    assert streamed(text, K3, chunks(text, random.Random(seed)), True) == whole


@pytest.mark.parametrize("lead", ["<|open|>resp", "<|open|>", "thinking <|open|>response<|sep|>", " " + RESPONSE_OPEN])
def test_only_the_literal_at_the_first_character_skips_the_block(lead):
    """A partial literal, the literal later on, or after a space: the block is reasoning as before."""
    text = f"{lead} more<|close|>think<|sep|>ok"
    whole = read_events(text, K3, reasoning_open=True)
    assert whole[0] == ReasoningDelta(f"{lead} more") and whole[-1] == TextDelta("ok")
    for size in (1, 3, 7):
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        assert streamed(text, K3, pieces, True) == whole


def test_without_an_opened_block_the_response_element_is_framing_as_ever():
    text = f"{RESPONSE_OPEN}Hello<|close|>response<|sep|>"
    assert read_events(text, K3) == [TextDelta("Hello")]
