"""A format's reasoning block in several spellings, and a block that ends at a call (issue 22).

Two rules of the declaration (``wire.shape.Reasoning``):

- ``also``: further (open, close) pairs a block may be written with, read
  and never written. Mistral declares Magistral 2506's plain-text
  ``<think>…</think>`` beside ``[THINK]…[/THINK]``: either opens a block at
  the reply's start (or in the prompt), and a block ends only at its own
  pair's closer. A ``<think>`` for a format that declares none is text.
- ``ends_at_call``: a block the reply never closes ends where a whole call
  opening of the format stands at a line start inside it (the newline
  before it is layout), and the rest is read as a reply; a closed block is
  all reasoning, a call rehearsed in it included. Qwen3-Coder XML
  (``qwen-xml``) declares it: Qwen3.5 starts ``<tool_call>`` inside the
  ``<think>`` its prompt opened.

Replies are generated (reasoning lines, calls written by the format's own
writer at a line start or mid-line, closed or not, the block opened by the
reply or by the prompt) and every one is read whole and in random chunks;
the expected events are built here from the parts (``laid_out`` for the
layout, the raw machine for the part read as a reply), the calls compared
with the tests' own ``oracle``.
"""

from __future__ import annotations

import json
import random
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layout_oracle import laid_out
from oracle import same_json  # the tests' own comparison, not the package's
from templatestudio import read_tool_calls
from templatestudio.calls import ParsedToolCall
from templatestudio.engine import Machine, read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.integrations.served import ReplyStream, read_reply
from templatestudio.stream import ToolCallStream
from templatestudio.wire.shape import Call, JsonArguments, NameKey, Reasoning, ShapeError, WireShape

SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
MISTRAL, QWEN, HERMES = FORMATS["mistral"], FORMATS["qwen-xml"], FORMATS["hermes"]
THINK_PAIRS = [("[THINK]", "[/THINK]"), ("<think>", "</think>")]
FIXTURES = resources.files("canitoolcall") / "_data" / "fixtures"


def raw(text: str, fmt, **options) -> list:
    """The raw machine's events (layout=False): text read as a reply, every character kept."""
    machine = Machine(fmt, layout=False, **options)
    return merge_deltas(machine.feed(text) + machine.close())


def whole(text: str, fmt, **options) -> list:
    return read_events(text, fmt, **options)


def streamed(text: str, fmt, seed: int, **options) -> list:
    rng, tool_stream, events, at = random.Random(seed), ToolCallStream(fmt, **options), [], 0
    while at < len(text):
        size = rng.randint(1, 9)
        events += tool_stream.feed(text[at : at + size])
        at += size
    return merge_deltas(events + tool_stream.close())


def calls_of(events: list) -> list[ParsedToolCall]:
    return [event.call for event in events if isinstance(event, ToolCallEvent)]


def same_calls(got: list[ParsedToolCall], want: list[ParsedToolCall]) -> bool:
    return len(got) == len(want) and all(
        a.name == b.name and same_json(a.arguments, b.arguments) for a, b in zip(got, want))


def fixture(family: str, fixture_id: str) -> dict:
    for path in (FIXTURES / family).iterdir():
        if path.name.endswith(".jsonl"):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip() and json.loads(line)["id"] == fixture_id:
                    return json.loads(line)
    raise LookupError(fixture_id)


# --- the declaration ---------------------------------------------------------------------------------


def test_mistral_declares_both_pairs_and_writes_the_first():
    assert MISTRAL.reasoning == ("[THINK]", "[/THINK]")
    assert MISTRAL.reasoning_pairs == tuple(THINK_PAIRS)
    assert {"[THINK]", "[/THINK]", "<think>", "</think>"} <= set(MISTRAL.holdback)
    assert "'[THINK]' … '[/THINK]' or '<think>' … '</think>'" in MISTRAL.wire.describe()
    assert HERMES.reasoning_pairs == (("<think>", "</think>"),)
    assert "ends at a call" in QWEN.wire.describe() and "ends at a call" not in HERMES.wire.describe()


@pytest.mark.parametrize(("declaration", "message"), [
    (lambda: Reasoning("<think>", ""), "both non-empty"),
    (lambda: Reasoning("<think>", "</think>", also=(("", "x"),)), "both non-empty"),
    (lambda: Reasoning("<think>", "</think>", also=(("<think", "</t>", "?"),)), "an opener and a closer"),
    (lambda: Reasoning("<think>", "</think>", also=(("<think>x", "</x>"),)), "start alike"),
    (lambda: Reasoning("<t>", "</t>", also=(("[T]", "[/T]"), ("<t", ">"))), "start alike"),
])
def test_a_reasoning_declaration_that_cannot_be_read_is_refused(declaration, message):
    with pytest.raises(ShapeError, match=message):
        declaration()


def test_a_declared_shape_holds_every_pair_s_delimiters_back():
    shape = WireShape(call=Call("<c>", "</c>"), name=NameKey(), arguments=JsonArguments(),
                      reasoning=Reasoning("<t>", "</t>", also=(("[T]", "[/T]"),)))
    assert shape.reasoning_pairs == (("<t>", "</t>"), ("[T]", "[/T]"))
    assert shape.holdback == ("<c>", "<t>", "</t>", "[T]", "[/T]")


@pytest.mark.parametrize(("prompt", "pair"), [
    ("[INST]hi[/INST][THINK]", ("[THINK]", "[/THINK]")),
    ("[INST]hi[/INST]<think>\n", ("<think>", "</think>")),
    ("[INST]hi[/INST][THINK]x[/THINK]<think>", ("<think>", "</think>")),
    ("[INST]hi[/INST]<think>x</think>[THINK] ", ("[THINK]", "[/THINK]")),
    ("[INST]hi[/INST]<think>x</think>", None),
    ("[INST]hi[/INST]<think>x", None),
    ("[INST]hi[/INST]", None),
    ("", None),
    (None, None),
])
def test_the_pair_a_prompt_opened(prompt, pair):
    assert MISTRAL.opened_reasoning(prompt) == pair
    assert MISTRAL.reasoning_opened_by(prompt) is (pair is not None)


def test_a_machine_refuses_a_pair_its_format_does_not_declare():
    # A pair mixed from two declared ones is neither.
    with pytest.raises(ValueError, match=r"^reasoning_open=\('<think>', '\[/THINK\]'\) is not a reasoning pair of "
                                         r"mistral: \[\('\[THINK\]', '\[/THINK\]'\), \('<think>', '</think>'\)\]$"):
        Machine(MISTRAL, reasoning_open=("<think>", "[/THINK]"))
    with pytest.raises(ValueError, match="is not a reasoning pair of gemma4"):
        Machine(FORMATS["gemma4"], reasoning_open=("<think>", "</think>"))


# --- mistral: either pair, whole or in chunks --------------------------------------------------------

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
MISTRAL_CALL_TEXTS = [s.text for s in MISTRAL.samples if s.calls and not s.text.startswith("[THINK]")]
REHEARSAL = st.sampled_from(["[TOOL_CALLS]", "[ARGS]", "[THINK]", "<think>", "[/THINK", "</think", "/think>",
                             "Let me check. ", "\n", " ", "{", "}", *MISTRAL_CALL_TEXTS])
AFTER = st.sampled_from(["", "Hello!", "One euro is 162 yen.", "\n\n", *MISTRAL_CALL_TEXTS,
                         *("Checking. " + text for text in MISTRAL_CALL_TEXTS)])


@SETTINGS
@given(pair=st.sampled_from(THINK_PAIRS), parts=st.lists(st.one_of(REHEARSAL, st.text(max_size=5)), max_size=8),
       after=AFTER, seed=st.integers(0, 2**16))
def test_either_mistral_pair_reads_whole_and_in_chunks(pair, parts, after, seed):
    opener, closer = pair
    inner = "".join(parts)
    if (inner + closer).find(closer) != len(inner):
        return  # the closer is written inside: the block ends there
    text = opener + inner + closer + after
    # An empty block is still a block to the layout: the oracle lays the reply out
    # with a stand-in reasoning in it, then takes the stand-in out again.
    expected = laid_out([ReasoningDelta(inner or "x")] + raw(after, MISTRAL), MISTRAL.spacing)
    if not inner:
        expected = [event for event in expected if type(event) is not ReasoningDelta]
    assert whole(text, MISTRAL) == expected
    assert streamed(text, MISTRAL, seed) == expected
    # The prompt opened the block: the pair it opened, read off the prompt.
    rest = text[len(opener) :]
    opened = MISTRAL.opened_reasoning("[INST]Rate?[/INST]" + opener)
    assert opened == pair
    assert streamed(rest, MISTRAL, seed, reasoning_open=opened) == expected
    reply = read_tool_calls(rest, "mistral", prefix="[INST]Rate?[/INST]" + opener)
    assert reply.events == expected


@pytest.mark.parametrize("pair", THINK_PAIRS)
def test_a_mistral_block_cut_inside_is_all_reasoning(pair):
    text = pair[0] + "Maybe [TOOL_CALLS]get_exchange_rate[ARGS]{\"base\": \"EU"
    expected = [ReasoningDelta(text[len(pair[0]) :])]
    assert whole(text, MISTRAL) == expected
    for seed in range(6):
        assert streamed(text, MISTRAL, seed) == expected


def test_the_magistral_2506_fixture():
    case = fixture("mistral", "mistral/vllm-v11-think-text")
    reply = read_tool_calls(case["raw_output"], "mistral", prefix=case["generation_prompt"])
    assert (reply.reasoning, reply.content, reply.calls) == ("r", "c", [])


# --- a <think> a format does not declare is text -----------------------------------------------------

UNDECLARED_THINK = [name for name, fmt in FORMATS.items() if all(o != "<think>" for o, _ in fmt.reasoning_pairs)]
UNDECLARED_BRACKET = [name for name, fmt in FORMATS.items() if all(o != "[THINK]" for o, _ in fmt.reasoning_pairs)]


def test_the_undeclared_lists_are_not_empty():
    assert {"gemma4", "harmony", "pythonic"} <= set(UNDECLARED_THINK)
    assert {"hermes", "qwen-xml"} <= set(UNDECLARED_BRACKET) and "mistral" not in UNDECLARED_BRACKET


@pytest.mark.parametrize("name", UNDECLARED_THINK)
@pytest.mark.parametrize("block", ["<think>r</think>c", "<think>\nLet me think.\n</think>\n\nThe answer is 4."])
def test_a_think_block_a_format_does_not_declare_is_text(name, block):
    fmt = FORMATS[name]
    assert whole(block, fmt) == [TextDelta(block)]
    for seed in range(3):
        assert streamed(block, fmt, seed) == [TextDelta(block)]


@pytest.mark.parametrize("name", UNDECLARED_BRACKET)
def test_a_bracket_think_block_a_format_does_not_declare_is_text(name):
    block = "[THINK]r[/THINK]c"
    assert whole(block, FORMATS[name]) == [TextDelta(block)]


# --- qwen-xml: a block never closed ends at a call at a line start --------------------------------------

# Reasoning prose: words and punctuation, no markup (so nothing in it is a marker of any format).
WORDS = st.lists(st.sampled_from(["Need", "to", "inspect", "the", "directory.", "I", "should", "call", "it", "now",
                                  "maybe", "tool_call", "function=", "<", ">", "=", "42", "—"]),
                 min_size=1, max_size=6).map(" ".join)
VALUES = st.text(st.characters(codec="utf-8", exclude_characters="<\r", exclude_categories=("Cs",)),
                 min_size=1, max_size=8).filter(lambda v: v.strip("\n") == v)
QWEN_CALLS = st.builds(ParsedToolCall, st.sampled_from(["run_in_terminal", "search", "get_weather"]),
                       st.dictionaries(st.sampled_from(["command", "city", "q"]), VALUES, max_size=2))
# How a call stands in the block: alone on its line (opening a line), after text on its line, or
# alone on its line without its <tool_call> wrapper (a bare <function=NAME>: plain text where
# <tool_call> is Qwen3.5's special token, so it ends no block; a reply after the block reads it).
LINE_START, MID_LINE, BARE_LINE = "line start", "mid-line", "bare at a line start"
BARE = st.booleans()


def written(call: ParsedToolCall, bare: bool) -> str:
    text = QWEN.write_call(call)
    if bare:  # the wrapper-less shape: <function=NAME>…</function>
        text = text[len("<tool_call>\n") : -len("\n</tool_call>")]
    return text


LINE = st.one_of(
    WORDS.map(lambda words: ("prose", words, None)),
    st.tuples(QWEN_CALLS, BARE).map(lambda cb: (BARE_LINE if cb[1] else LINE_START, written(*cb), cb[0])),
    st.tuples(WORDS, st.sampled_from([" ", "", "  "]), QWEN_CALLS, BARE).map(
        lambda w: (MID_LINE, w[0] + w[1] + written(w[2], w[3]), w[2])),
)


def split_at_first_call(lines: list[tuple]) -> int | None:
    """The index of the first line a call opens (the rule's line start), if any."""
    return next((index for index, (kind, _, _) in enumerate(lines) if kind == LINE_START), None)


def expected_unclosed(lines: list[tuple]) -> list:
    """The tests' own reading of a block never closed: reasoning to the first line-start call, then a reply."""
    first = split_at_first_call(lines)
    texts = [text for _, text, _ in lines]
    if first is None:
        return laid_out([ReasoningDelta("\n".join(texts))], QWEN.spacing)
    before = "\n".join(texts[:first]) + ("\n" if first else "")
    return laid_out(([ReasoningDelta(before)] if before else []) + raw("\n".join(texts[first:]), QWEN), QWEN.spacing)


@SETTINGS
@given(lines=st.lists(LINE, min_size=1, max_size=5), closed=st.booleans(), after=st.sampled_from(
    ["", "Done.", "\n\n<tool_call>\n<function=ping>\n</function>\n</tool_call>"]), by_prompt=st.booleans(),
       seed=st.integers(0, 2**16))
def test_a_block_never_closed_ends_at_the_first_call_at_a_line_start(lines, closed, after, by_prompt, seed):
    inner = "\n".join(text for _, text, _ in lines)
    if closed:
        rest = inner + "\n</think>\n\n" + after
        expected = laid_out([ReasoningDelta(inner)] + raw(after, QWEN), QWEN.spacing)
    else:
        rest = inner
        expected = expected_unclosed(lines)
    # The prompt opened the block (Qwen3.5's "<think>\n"), or the reply does.
    text, options = (rest, {"reasoning_open": True}) if by_prompt else ("<think>\n" + rest, {})
    assert whole(text, QWEN, **options) == expected
    assert streamed(text, QWEN, seed, **options) == expected
    first = split_at_first_call(lines)
    if closed:  # the calls rehearsed inside are reasoning; only the one after the block is read
        wanted = [ParsedToolCall("ping", {})] if "<tool_call>" in after else []
    elif first is None:  # no whole opening at a line start: all of it is reasoning
        wanted = []
        assert all(isinstance(event, ReasoningDelta) for event in expected)
    else:
        # The calls read are the ones written from the first line-start call on (mid-line and bare
        # ones too: after the block they are a reply's calls).
        wanted = [call for _, _, call in lines[first:] if call is not None]
    assert same_calls(calls_of(expected), wanted)
    if by_prompt:
        reply = read_tool_calls(text, "qwen-xml", prefix="<|im_start|>assistant\n<think>\n")
        assert reply.events == expected


def test_the_qwen35_fixture_reads_the_call_and_the_reasoning_before_it():
    case = fixture("qwen3-xml", "qwen3-xml/llamacpp-q35-call-inside-think")
    reply = read_tool_calls(case["raw_output"], "qwen-xml", prefix=case["generation_prompt"])
    want = [ParsedToolCall(c["name"], c["arguments"]) for c in case["expected"]["tool_calls"]]
    assert (reply.reasoning, reply.content) == (case["expected"]["reasoning_content"], "")
    assert same_calls(reply.calls, want)


PLAN = "Need the directory."
A_CALL = "<tool_call>\n<function=run>\n<parameter=cmd>\npwd\n</parameter>\n</function>\n</tool_call>"
RUN = ParsedToolCall("run", {"cmd": "pwd"})


@pytest.mark.parametrize(("text", "events"), [
    # Whole openings at a line start, never closed: the call is read.
    (PLAN + "\n" + A_CALL, [ReasoningDelta(PLAN), ToolCallEvent(RUN)]),
    (A_CALL, [ToolCallEvent(RUN)]),  # the block's first character starts a line
    (PLAN + "\n\n" + A_CALL + "\nThen read it.",
     [ReasoningDelta(PLAN), ToolCallEvent(RUN), TextDelta("Then read it.")]),
    # The same closed: reasoning, whatever comes after.
    (PLAN + "\n" + A_CALL + "\n</think>\n\nOk.", [ReasoningDelta(PLAN + "\n" + A_CALL), TextDelta("Ok.")]),
    (PLAN + "\n" + A_CALL + "</think>", [ReasoningDelta(PLAN + "\n" + A_CALL)]),
    # Near misses, never closed: not a whole opening at a line start, so all reasoning.
    (PLAN + " " + A_CALL, [ReasoningDelta(PLAN + " " + A_CALL)]),
    (PLAN + "\n  " + A_CALL, [ReasoningDelta(PLAN + "\n  " + A_CALL)]),
    (PLAN + "\n<tool_call>", [ReasoningDelta(PLAN + "\n<tool_call>")]),
    (PLAN + "\n<tool_call> is the tag.", [ReasoningDelta(PLAN + "\n<tool_call> is the tag.")]),
    (PLAN + "\n<function=run> names it.", [ReasoningDelta(PLAN + "\n<function=run> names it.")]),
    (PLAN + "\n<function=run>\n<parameter=cmd>\npwd\n</parameter>\n</function>",
     [ReasoningDelta(PLAN + "\n<function=run>\n<parameter=cmd>\npwd\n</parameter>\n</function>")]),
    (PLAN + "\n<tool_call >\n<function=run>", [ReasoningDelta(PLAN + "\n<tool_call >\n<function=run>")]),
])
def test_a_block_the_prompt_opened(text, events):
    assert whole(text, QWEN, reasoning_open=True) == events
    for seed in range(8):
        assert streamed(text, QWEN, seed, reasoning_open=True) == events


def test_a_whole_opening_cut_after_it_is_a_cut_call_after_the_reasoning():
    text = PLAN + "\n<tool_call>\n<function=run>\n<parameter=cmd>\npw"
    reply = read_tool_calls(text, "qwen-xml", prefix="<|im_start|>assistant\n<think>\n")
    assert (reply.reasoning, reply.content, reply.calls) == (PLAN, "", [])
    assert reply.cut is not None and reply.cut.raw == text[len(PLAN) + 1 :]


def test_a_stream_holds_the_block_from_a_call_at_a_line_start_until_the_closer_or_the_end():
    # The cost of the rule: reasoning after such an opening arrives only with the closer or the end.
    tool_stream = ToolCallStream(QWEN, reasoning_open=True)
    assert tool_stream.feed(PLAN + "\n") == [ReasoningDelta(PLAN)]
    assert tool_stream.feed(A_CALL + "\nOr maybe not; ") == []
    assert tool_stream.feed("let me think more.") == []
    assert merge_deltas(tool_stream.feed("</think>\n\nOk.")) == [ReasoningDelta("\n" + A_CALL + "\nOr maybe not; "
                                                                                   "let me think more."),
                                                                    TextDelta("Ok.")]
    # The same text never closed: the call, and what followed it as content.
    tool_stream = ToolCallStream(QWEN, reasoning_open=True)
    events = tool_stream.feed(PLAN + "\n" + A_CALL + "\nOr maybe not.")
    assert events == [ReasoningDelta(PLAN)]
    assert tool_stream.close() == [ToolCallEvent(RUN), TextDelta("Or maybe not.")]


def test_prose_in_a_block_is_not_held():
    tool_stream = ToolCallStream(QWEN, reasoning_open=True)
    assert tool_stream.feed("I mention <tool_call> mid-line") == [ReasoningDelta("I mention <tool_call> mid-line")]
    assert tool_stream.feed("\n<tool_call> is a tag") == [ReasoningDelta("\n<tool_call> is a tag")]


@pytest.mark.parametrize("name", ["hermes", "deepseek-v3", "glm-xml", "minimax-xml"])
def test_a_format_that_does_not_declare_it_keeps_a_call_in_an_unclosed_block_as_reasoning(name):
    fmt = FORMATS[name]
    opener = fmt.reasoning[0]
    call = next(s.text for s in fmt.samples if s.calls and opener not in s.text)
    text = opener + PLAN + "\n" + call
    assert whole(text, fmt) == [ReasoningDelta(PLAN + "\n" + call)]
    assert not fmt.wire.reasoning.ends_at_call


# --- the served content (no reasoning parser): each block's own tags, no closer invented ------------------


def test_served_content_keeps_each_block_s_own_tags_and_invents_no_closer():
    assert read_reply("<think>r</think>c", MISTRAL) == ("<think>r</think>c", [])
    assert read_reply("[THINK]r[/THINK]c", MISTRAL) == ("[THINK]r[/THINK]c", [])
    assert read_reply("<think></think>[THINK][/THINK]hi", MISTRAL) == ("<think></think>[THINK][/THINK]hi", [])
    # The block ended at the call: the content is the text before it, as written, and no </think>.
    content, calls = read_reply("<think>" + PLAN + "\n" + A_CALL, QWEN)
    assert (content, [call for call, _ in calls]) == ("<think>" + PLAN + "\n", [RUN])
    served = ReplyStream(QWEN)
    sent = [served.feed(piece) for piece in ("<think>" + PLAN, "\n" + A_CALL[:20], A_CALL[20:])] + [served.close()]
    assert ("".join(c for c, _ in sent), [call for _, calls in sent for call, _ in calls]) == (content, [RUN])
