"""Mistral's reasoning block, ``[THINK]…[/THINK]``, and reasoning blocks in general.

Magistral 2509, Ministral 3 Reasoning and Mistral Small 4 (tokenizer v13
and later) write ``[THINK]…[/THINK]`` before their content or their
``[TOOL_CALLS]``. What is checked here:

- the conformance suite's Mistral fixtures (``canitoolcall``'s
  ``_data/fixtures/mistral``): the reasoning, content and calls each one
  expects, read through ``read_tool_calls``, and the same events from any
  chunking of the reply;
- generated replies whose reasoning rehearses calls (``[TOOL_CALLS]``,
  ``[ARGS]``, cut calls, a stray ``[THINK]``): everything up to ``[/THINK]``
  is reasoning, never a call and never an error, whole or streamed;
- the same rule for every registered format that declares a reasoning
  block, with every format's call texts inside it;
- the corpus' ``mistral-common-v13_think`` and ``v15_think`` templates:
  an assistant turn they render with reasoning reads back as that
  reasoning, content and calls.

Magistral 2506's plain-text ``<think>…</think>`` (tokenizer v11) is the
format's second reasoning pair (``Reasoning.also``): read here through the
fixture and the v11 template, and in ``tests/test_reasoning_pairs.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing.response_parser import parse_response

from corpus_guard import require_corpus
from layout_oracle import laid_out
from oracle import same_json  # the tests' own comparison, not the package's
from templatestudio import corpus, read_tool_calls
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import Machine, read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.formats.mistral import ARGS_RESPONSE_TEMPLATE
from templatestudio.stream import ToolCallStream
from templatestudio.templates import ChatTemplate

MISTRAL = FORMATS["mistral"]
THINK, END_THINK = "[THINK]", "[/THINK]"
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
# The installed suite's bundled fixtures (canitoolcall is a test dependency: no skip when it is missing).
FIXTURE_DIR = resources.files("canitoolcall") / "_data" / "fixtures" / "mistral"


def load_fixtures() -> list[dict]:
    found = []
    for path in sorted((entry for entry in FIXTURE_DIR.iterdir() if entry.name.endswith(".jsonl")),
                       key=lambda entry: entry.name):
        found += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return found


FIXTURES = load_fixtures()
THINKING = [fixture for fixture in FIXTURES
            if THINK in fixture["raw_output"] or "reasoning" in fixture.get("tags", ())]

# Fixtures whose expected answer this reader does not give, and why (a
# strict xfail below fails the day the gap closes).
GAPS: dict[str, str] = {}
# The reply ends right after [TOOL_CALLS] (or inside a call): the strict
# reader raises "never closed" where the fixture expects the text before it.
CUT = {"mistral/v13think-stop-at-open-marker", "mistral/v13think-truncated-in-arguments"}


def whole(text: str, fmt=MISTRAL, **options) -> list:
    return read_events(text, fmt, **options)


def every_character(text: str, fmt=MISTRAL) -> list:
    """The raw machine's events (layout=False): every character of text as text or reasoning."""
    machine = Machine(fmt, layout=False)
    return merge_deltas(machine.feed(text) + machine.close())


def streamed(text: str, pieces: list[str], fmt=MISTRAL, **options) -> list:
    tool_stream = ToolCallStream(fmt, **options)
    events = [event for piece in pieces for event in tool_stream.feed(piece)]
    return merge_deltas(events + tool_stream.close())


def outcome(read) -> tuple:
    try:
        return ("events", read())
    except UnparsedToolCall as error:
        return ("raises", str(error))


def random_pieces(text: str, rng: random.Random) -> list[str]:
    pieces, at = [], 0
    while at < len(text):
        size = rng.randint(1, 9)
        pieces.append(text[at : at + size])
        at += size
    return pieces


def calls_match(got: list[ParsedToolCall], expected: list[dict]) -> bool:
    return len(got) == len(expected) and all(
        call.name == want["name"] and same_json(call.arguments, want["arguments"]) for call, want in zip(got, expected)
    )


def test_the_fixtures_are_there():
    assert len(THINKING) >= 10, FIXTURE_DIR


# --- the conformance fixtures --------------------------------------------------------------------


@pytest.mark.parametrize("fixture", [f for f in FIXTURES if f["id"] not in GAPS.keys() | CUT], ids=lambda f: f["id"])
def test_each_fixture_reads_as_expected(fixture):
    expected = fixture.get("expected")
    result = outcome(lambda: read_tool_calls(fixture["raw_output"], "mistral", prefix=fixture["generation_prompt"]))
    if expected is None:  # a malformed reply: no call, or an error
        assert "no_tool_calls" in fixture["expected_error"]["accept"]
        assert result[0] == "raises" or not result[1].calls, result
        return
    assert result[0] == "events", result
    reply = result[1]
    assert reply.reasoning == (expected["reasoning_content"] or ""), fixture["id"]
    assert reply.content == (expected["content"] or ""), fixture["id"]
    assert calls_match(reply.calls, expected["tool_calls"]), (reply.calls, expected["tool_calls"])


@pytest.mark.parametrize("fixture", [f for f in FIXTURES if f["id"] in CUT], ids=lambda f: f["id"])
def test_a_fixture_cut_after_its_reasoning_keeps_the_reasoning_and_never_runs_the_cut_call(fixture):
    text, expected = fixture["raw_output"], fixture.get("expected") or {}
    tool_stream = ToolCallStream(MISTRAL)
    settled = merge_deltas(tool_stream.feed(text))
    reasoning = fixture["raw_output"][len(THINK) : text.index(END_THINK)]
    assert settled[0] == ReasoningDelta(reasoning)
    assert expected.get("reasoning_content") in (None, reasoning)
    result = outcome(tool_stream.close)
    assert result[0] == "raises" or not any(isinstance(e, ToolCallEvent) for e in result[1]), result
    # The production reader: the reasoning and the text before the cut, no call to run (or the strict error).
    result = outcome(lambda: read_tool_calls(text, "mistral", prefix=fixture["generation_prompt"]))
    if result[0] == "raises":
        assert "never closed" in result[1]
        return
    reply = result[1]
    assert (reply.reasoning, reply.calls) == (reasoning, [])
    if expected.get("content"):
        assert reply.content == expected["content"]


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f["id"])
def test_each_fixture_streams_like_the_whole_reply(fixture):
    text = fixture["raw_output"]
    expected = outcome(lambda: whole(text))
    for seed in range(4):
        assert outcome(lambda: streamed(text, random_pieces(text, random.Random(seed)))) == expected


@pytest.mark.parametrize("fixture", [f for f in THINKING if f["id"] not in GAPS.keys() | CUT], ids=lambda f: f["id"])
def test_the_v13_think_template_as_source_reads_the_fixture_the_same_way(fixture):
    require_corpus()
    source = (corpus.corpus_dir() / "templates" / "mistral-common-v13_think.jinja").read_text(encoding="utf-8")
    by_template = read_tool_calls(fixture["raw_output"], source, prefix=fixture["generation_prompt"])
    by_name = read_tool_calls(fixture["raw_output"], "mistral", prefix=fixture["generation_prompt"])
    assert by_template.format is MISTRAL
    assert by_template.events == by_name.events


# The response template closes a call at the next [TOOL_CALLS], one inside a string argument included.
TEMPLATE_CANNOT = {"mistral/v13think-marker-in-arguments"}


@pytest.mark.parametrize("fixture", [f for f in THINKING if f["id"] not in GAPS.keys() | CUT | TEMPLATE_CANNOT
                                     and "[ARGS]" in f["raw_output"]], ids=lambda f: f["id"])
def test_the_name_args_response_template_splits_reasoning_like_the_reader(fixture):
    text = fixture["raw_output"]
    with contextlib.redirect_stdout(io.StringIO()):  # transformers prints what it could not parse
        message = parse_response(text, ARGS_RESPONSE_TEMPLATE, prefix="")
    reply = read_tool_calls(text, "mistral")
    assert message.get("thinking", "") == reply.reasoning
    shipped = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
               for c in message.get("tool_calls", [])]
    assert calls_match(reply.calls, shipped), (message, reply.calls)


def test_magistral_2506_plain_text_think_is_reasoning():
    reply = read_tool_calls("<think>r</think>c", "mistral")
    assert (reply.reasoning, reply.content) == ("r", "c")


@pytest.mark.parametrize(("opener", "other_closer"), [("<think>", END_THINK), (THINK, "</think>")])
def test_a_block_ends_only_at_its_own_pair_s_closer(opener, other_closer):
    # The other pair's closer is reasoning text: nothing is lost, nothing is cut.
    reply = read_tool_calls(opener + "r" + other_closer + "c", "mistral")
    assert (reply.reasoning, reply.content, reply.calls) == ("r" + other_closer + "c", "", [])


# --- generated replies: what reasoning rehearses is never a call --------------------------------------

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
CALL_TEXTS = [sample.text for sample in MISTRAL.samples if sample.calls and not sample.text.startswith(THINK)]
# Pieces a model thinking about calls writes: markers, whole and cut calls, stray think tokens.
REHEARSAL = st.sampled_from(
    ["[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK", "/THINK]", "[/", "</s>", "[", "]", "{", "}", '"',
     "get_exchange_rate", " ", "\n", "Let me check. ", "<think>", "</think>", "[TOOL_CALLS]get_exchange_rate",
     "[TOOL_CALLS]get_exchange_rate[ARGS]{\"base\": \"EU", *CALL_TEXTS]
)
# Filtered: the first [/THINK] of inner + [/THINK] must be the one that closes the block.
INNER = st.lists(st.one_of(REHEARSAL, st.text(max_size=6)), max_size=8).map("".join).filter(
    lambda inner: (inner + END_THINK).find(END_THINK) == len(inner))
AFTER = st.sampled_from(["", "Hello!", "One euro is 162 yen.", "\n\n", *CALL_TEXTS,
                         *("Checking. " + text for text in CALL_TEXTS)])


def reasoning_then(inner: str, after_events: list, fmt=MISTRAL) -> list:
    """The events of a block holding inner then the raw after_events, with the layout taken out.

    An empty block is still a block: the text after it touches it (the
    oracle's merge drops an empty delta, so that edge is taken here).
    """
    events = laid_out(([ReasoningDelta(inner)] if inner else []) + after_events, fmt.spacing)
    if not inner and events and type(events[0]) is TextDelta:
        rest = events[0].text.lstrip(fmt.spacing)
        events = ([TextDelta(rest)] if rest else []) + events[1:]
    return events


@SETTINGS
@given(inner=INNER, after=AFTER, seed=st.integers(0, 2**16))
def test_calls_rehearsed_in_reasoning_are_reasoning_whole_or_streamed(inner, after, seed):
    text = THINK + inner + END_THINK + after
    expected = reasoning_then(inner, every_character(after))
    assert whole(text) == expected
    assert streamed(text, random_pieces(text, random.Random(seed))) == expected
    # The prompt opened the block (reasoning_open): the same reading, without the opener.
    rest = inner + END_THINK + after
    assert streamed(rest, random_pieces(rest, random.Random(seed)), reasoning_open=True) == expected


@SETTINGS
@given(inner=INNER, seed=st.integers(0, 2**16))
def test_a_reply_cut_inside_reasoning_is_all_reasoning_and_never_raises(inner, seed):
    text = THINK + inner
    expected = reasoning_then(inner, [])
    assert whole(text) == expected
    assert streamed(text, random_pieces(text, random.Random(seed))) == expected


@pytest.mark.parametrize("lead", ["Sure. ", "x", "\u200bOk.", "Ok [TOOL_CALLS]"])
def test_a_think_token_after_text_opens_no_reasoning(lead):
    # The block is read only at the start; later, [THINK] is text and calls after it are read.
    text = lead + THINK + "Plan." + END_THINK + CALL_TEXTS[0]
    result = outcome(lambda: whole(text))
    if result[0] == "events":
        assert not any(isinstance(event, ReasoningDelta) for event in result[1])
        assert [e.call for e in result[1] if isinstance(e, ToolCallEvent)] == [CALL]


def test_a_call_rehearsed_in_reasoning_then_written_reads_one_call_not_two():
    text = THINK + "Maybe [TOOL_CALLS]get_exchange_rate[ARGS]{} first." + END_THINK + CALL_TEXTS[0]
    assert whole(text) == [ReasoningDelta("Maybe [TOOL_CALLS]get_exchange_rate[ARGS]{} first."), ToolCallEvent(CALL)]


def test_a_prefix_ending_in_think_opens_the_block():
    assert MISTRAL.reasoning_opened_by("[INST]hi[/INST][THINK]")
    assert not MISTRAL.reasoning_opened_by("[INST]hi[/INST]")
    reply = read_tool_calls("Plan [TOOL_CALLS]x[/THINK]" + CALL_TEXTS[0], "mistral", prefix="[INST]hi[/INST][THINK]")
    assert (reply.reasoning, reply.content, reply.calls) == ("Plan [TOOL_CALLS]x", "", [CALL])


# --- every format with a reasoning block: calls inside it are reasoning -------------------------------

REASONING_FORMATS = [name for name, fmt in FORMATS.items() if fmt.reasoning is not None]
EVERY_CALL_TEXT = sorted({sample.text for fmt in FORMATS.values() for sample in fmt.samples if sample.calls})


def after_block(fmt) -> str:
    """What a sample of fmt writes after its reasoning block, or a call sample when none opens with one."""
    opener, closer = fmt.reasoning
    for sample in fmt.samples:
        if sample.text.startswith(opener) and closer in sample.text:
            return sample.text[sample.text.index(closer, len(opener)) + len(closer) :]
    return next(s.text for s in fmt.samples if s.calls and opener not in s.text)


@pytest.mark.parametrize("name", REASONING_FORMATS)
def test_no_call_marker_inside_an_open_reasoning_block_is_read_as_a_call(name):
    fmt = FORMATS[name]
    opener, closer = fmt.reasoning
    ends_at_call = fmt.wire.reasoning.ends_at_call
    tail = after_block(fmt)
    tail_events = every_character(tail, fmt)
    pieces = st.one_of(st.sampled_from(EVERY_CALL_TEXT), st.sampled_from(EVERY_CALL_TEXT).flatmap(
        lambda text: st.integers(1, len(text)).map(lambda cut: text[:cut])), st.text(max_size=4))

    @SETTINGS
    @given(parts=st.lists(pieces, max_size=4), seed=st.integers(0, 2**16), closed=st.booleans())
    def check(parts, seed, closed):
        inner = "".join(parts)
        if (inner + closer).find(closer) != len(inner):
            return  # the closer is written inside: the block ends there
        text = opener + inner + (closer + tail if closed else "")
        if not closed and ends_at_call and any(inner.startswith(m) or "\n" + m in inner for m in fmt.markers):
            # A block never closed with a call at a line start may end there
            # (Reasoning.ends_at_call: tests/test_reasoning_pairs.py): only stream = whole here.
            rest = text[len(opener) :]
            assert outcome(lambda: streamed(text, random_pieces(text, random.Random(seed)), fmt)) == outcome(
                lambda: whole(text, fmt))
            # Read from after the opener, an error names offsets in that shorter text.
            assert outcome(lambda: streamed(rest, random_pieces(rest, random.Random(seed)), fmt,
                                            reasoning_open=True)) == outcome(lambda: whole(rest, fmt, reasoning_open=True))
            return
        expected = reasoning_then(inner, tail_events if closed else [], fmt)
        assert whole(text, fmt) == expected
        assert streamed(text, random_pieces(text, random.Random(seed)), fmt) == expected
        rest = text[len(opener) :]
        if any(rest.startswith(literal) for literal in fmt.reasoning_skipped_by):
            return  # after a prompt that opened the block, this start says the reply skipped it (Kimi K3)
        assert streamed(rest, random_pieces(rest, random.Random(seed)), fmt, reasoning_open=True) == expected

    check()


# --- the corpus' think templates: what they render reads back -----------------------------------------

REASONING_TEXT = st.lists(st.one_of(REHEARSAL, st.text(st.characters(codec="utf-8"), max_size=8)), min_size=1,
                          max_size=6).map("".join).filter(lambda s: "[/THINK]" not in s and s.strip() == s and s)
CONTENT_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="[<"), max_size=20)
ARGUMENTS = st.dictionaries(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6),
                            st.one_of(st.integers(-10**6, 10**6), st.text(max_size=8), st.booleans(), st.none()),
                            max_size=3)
NAMES = st.sampled_from(["get_exchange_rate", "search", "write_file"])


def rendered_reply(template: ChatTemplate, message: dict) -> str:
    text = template.render([{"role": "user", "content": "Rate?"}, message])
    return text[text.rindex("[/INST]") + len("[/INST]") :]


@pytest.mark.parametrize("name", ["mistral-common-v13_think", "mistral-common-v15_think"])
def test_an_assistant_turn_the_think_template_renders_reads_back(name):
    require_corpus()
    template = ChatTemplate.from_file(corpus.corpus_dir() / "templates" / f"{name}.jinja")

    @settings(SETTINGS, max_examples=40)
    @given(reasoning=REASONING_TEXT, content=CONTENT_TEXT, calls=st.lists(st.tuples(NAMES, ARGUMENTS), max_size=2))
    def check(reasoning, content, calls):
        if not content and not calls:
            content = "Hello."
        message = {"role": "assistant", "content": content, "reasoning_content": reasoning}
        if calls:
            message["tool_calls"] = [{"id": f"call{i:05d}", "type": "function",
                                      "function": {"name": n, "arguments": a}} for i, (n, a) in enumerate(calls)]
        reply = rendered_reply(template, message)
        assert reply.startswith(THINK + reasoning + END_THINK), reply
        read = read_tool_calls(reply, "mistral", prefix="[INST]Rate?[/INST]")
        # The content touches the block, and the calls when there are any: whitespace there is layout.
        shown = content.lstrip(MISTRAL.spacing)
        assert (read.reasoning, read.content) == (reasoning, shown.rstrip(MISTRAL.spacing) if calls else shown), reply
        assert calls_match(read.calls, [{"name": n, "arguments": a} for n, a in calls]), reply

    check()


def test_an_assistant_turn_the_v11_think_template_renders_reads_back():
    require_corpus()
    template = ChatTemplate.from_file(corpus.corpus_dir() / "templates" / "mistral-common-v11_think.jinja")
    reply = rendered_reply(template, {
        "role": "assistant", "content": "", "reasoning_content": "Maybe [TOOL_CALLS]search[ARGS]{} first.",
        "tool_calls": [{"id": "abcdefghi", "type": "function",
                        "function": {"name": "get_exchange_rate", "arguments": {"base": "EUR"}}}],
    })
    read = read_tool_calls(reply, "mistral")
    assert read.reasoning == "Maybe [TOOL_CALLS]search[ARGS]{} first."
    assert [call.name for call in read.calls] == ["get_exchange_rate"]


def test_an_unclosed_block_read_from_after_its_opener_names_offsets_in_that_text():
    """The case hypothesis found: a call cut at its opening inside a block the prompt opened."""
    qwen = FORMATS["qwen-xml"]
    rest = "<tool_call>\n<function="
    streamed_outcome = outcome(lambda: streamed(rest, [rest[:5], rest[5:]], qwen, reasoning_open=True))
    assert streamed_outcome == outcome(lambda: whole(rest, qwen, reasoning_open=True))
    assert streamed_outcome[0] == "raises" and "at offset 0 was never closed" in streamed_outcome[1]
