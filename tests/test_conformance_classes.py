"""Failure classes the conformance suite found in four formats, each tested as a class.

The CanIToolCall fixtures of Llama 3, gpt-oss (harmony), Gemma 4 and Kimi K2
pointed at these classes; the tests here generate their members (and the
near misses around them) instead of replaying the fixtures:

- Gemma 4: bare keys are written verbatim by the template, spaces included,
  and models put whitespace after ``,`` and ``:``;
- Kimi K2: text between a calls section's tokens is a malformed section,
  refused with the reason, never a section passed through as text;
- harmony: after ``<|call|>`` (a server that did not stop there) the next
  message's ``<|start|>assistant`` is framing, so later calls and a final
  answer read; the space of ``<|start|>assistant to=…`` is the header's;
- Llama 3: ``{"name", "arguments"}`` reads as ``parameters`` does (vLLM and
  SGLang read both; Meta writes ``parameters``), bare or after
  ``<|python_tag|>``; both keys at once raise (more in
  ``test_llama_kimi_classes``).

Every case is also streamed in random chunks, which must give the whole read.
Arguments are compared with ``oracle.same_json``.
"""

from __future__ import annotations

import json
import random
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio import ParsedToolCall, ToolCallStream, UnparsedToolCall, merge_deltas, read_tool_calls
from templatestudio.engine import read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent
from templatestudio.formats import FORMATS
from layout_oracle import laid_out
from oracle import same_json  # the tests' own comparison, not the package's

GEMMA, KIMI, HARMONY, LLAMA = (FORMATS[name] for name in ("gemma4", "kimi-k2", "harmony", "llama3-json"))
QUOTE = '<|"|>'
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- reading helpers ----------------------------------------------------------------------------

def outcome(fmt, pieces: list[str], *, reasoning_open: bool = False):
    """("events", merged events) or ("raises", exception type) for a reply fed in pieces."""
    stream = ToolCallStream(fmt, reasoning_open=reasoning_open)
    events = []
    try:
        for piece in pieces:
            events += stream.feed(piece)
        events += stream.close()
    except UnparsedToolCall as error:
        return "raises", type(error)
    return "events", merge_deltas(events)


def whole(fmt, text: str, *, reasoning_open: bool = False):
    try:
        return "events", merge_deltas(read_events(text, fmt, reasoning_open=reasoning_open))
    except UnparsedToolCall as error:
        return "raises", type(error)


def chunks(text: str, seed: int) -> list[str]:
    rng, pieces, at = random.Random(seed), [], 0
    while at < len(text):
        size = rng.randint(1, 9)
        pieces.append(text[at : at + size])
        at += size
    return pieces


def same_outcome(left, right) -> bool:
    if left[0] != right[0]:
        return False
    if left[0] == "raises":
        return left[1] is right[1]
    if len(left[1]) != len(right[1]):
        return False
    for a, b in zip(left[1], right[1]):
        if type(a) is not type(b):
            return False
        if isinstance(a, ToolCallEvent):
            if a.call.name != b.call.name or not same_json(a.call.arguments, b.call.arguments) or a.id != b.id:
                return False
        elif a.text != b.text:
            return False
    return True


def assert_streams_like_whole(fmt, text: str, seeds=range(6), **kwargs) -> None:
    expected = whole(fmt, text, **kwargs)
    for seed in seeds:
        assert same_outcome(outcome(fmt, chunks(text, seed), **kwargs), expected), (seed, text)
    assert same_outcome(outcome(fmt, list(text), **kwargs), expected), text


def parts(events) -> tuple[list, str, str]:
    calls = [event.call for event in events if isinstance(event, ToolCallEvent)]
    text = "".join(event.text for event in events if isinstance(event, TextDelta))
    reasoning = "".join(event.text for event in events if isinstance(event, ReasoningDelta))
    return calls, text, reasoning


def assert_calls(calls, expected: list[tuple[str, dict]]) -> None:
    assert [call.name for call in calls] == [name for name, _ in expected]
    for call, (_, arguments) in zip(calls, expected):
        assert same_json(call.arguments, arguments), (call.arguments, arguments)


# --- generated values ---------------------------------------------------------------------------

names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
scalars = st.one_of(
    st.integers(-10**6, 10**6), st.booleans(), st.none(),
    st.text(string.ascii_letters + " ,:{}[]\"'é漢", max_size=10),
)
# A Gemma 4 bare key as the template writes it: anything up to its ":", spaces
# inside, none of : , { } [ ] < and no leading whitespace.
gemma_keys = st.from_regex(r"[A-Za-z0-9_éß()./\-][A-Za-z0-9_éß()./\- ]{0,14}", fullmatch=True)
json_keys = st.text(string.ascii_letters + " _", min_size=1, max_size=8)


def objects(keys):
    values = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)), max_leaves=8)
    return st.dictionaries(keys, values, max_size=4)


# --- Gemma 4: verbatim keys and whitespace --------------------------------------------------------

def gemma_value(value, rng: random.Random) -> str:
    """value in Gemma 4's grammar, with random whitespace where models put it (after , and :)."""
    space = lambda: rng.choice(["", "", " ", "  ", "\n"])  # noqa: E731
    if isinstance(value, str):
        return QUOTE + value + QUOTE
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return rng.choice(["null", "None"])
    if isinstance(value, dict):
        return "{" + ("," + space()).join(f"{key}:{space()}{gemma_value(item, rng)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ("," + space()).join(gemma_value(item, rng) for item in value) + "]"
    return str(value)


@SETTINGS
@given(name=names, arguments=objects(gemma_keys), seed=st.integers(0, 1000))
def test_gemma4_reads_verbatim_keys_and_spaced_punctuation(name, arguments, seed):
    text = f"<|tool_call>call:{name}{gemma_value(arguments, random.Random(seed))}<tool_call|>"
    calls, shown, _ = parts(read_events(text, GEMMA))
    assert_calls(calls, [(name, arguments)])
    assert shown == ""
    assert_streams_like_whole(GEMMA, text, seeds=[seed])


@SETTINGS
@given(name=names, arguments=objects(gemma_keys))
def test_gemma4_writer_output_with_spaced_keys_reads_back(name, arguments):
    from_writer = GEMMA.write_call(ParsedToolCall(name, arguments))
    calls, _, _ = parts(read_events(from_writer, GEMMA))
    assert_calls(calls, [(name, arguments)])
    assert not GEMMA.limits_for(arguments)


@pytest.mark.parametrize(("body", "reason"), [
    ("{k:1,,j:2}", "no key"),
    ("{a:b:1}", "no value"),
    ("{n:1 2}", "expected , or }"),
    ("{k:1,k:2}", "given twice"),
    ("{ :1}", "no key"),
    ("{a{b:1}", "expected : after key"),
    ("{a b}", "expected : after key"),
    ("{a:[1,,2]}", "no value"),
])
def test_gemma4_near_misses_of_the_key_and_space_class_raise_with_the_reason(body, reason):
    text = f"<|tool_call>call:f{body}<tool_call|>"
    with pytest.raises(UnparsedToolCall, match=reason.replace("{", r"\{").replace("}", r"\}")):
        read_tool_calls(text, "gemma4")
    assert_streams_like_whole(GEMMA, text)


def test_gemma4_a_key_it_cannot_write_bare_is_a_declared_limit():
    for key in ("a:b", " lead", "x,y", "br{ace", "lt<", ""):
        assert GEMMA.limits_for({key: 1}), key
    for key in ("Basic LLM Chain", "größe (cm)", "1st", "a.b-c"):
        assert not GEMMA.limits_for({key: 1}), key


# --- Kimi K2: text inside a section --------------------------------------------------------------

SECTION, SECTION_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
CALL_BEGIN, ARGS, CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
noise = st.text(string.ascii_letters + " .,;!?\n", min_size=1, max_size=20).filter(lambda s: s.strip())
spaces = st.sampled_from(["", " ", "\n", "  \n "])


def kimi_call(name: str, index: int, arguments: dict, space: str = "") -> str:
    return (f"{CALL_BEGIN}{space}functions.{name}:{index}{space}{ARGS}{space}"
            f"{json.dumps(arguments, ensure_ascii=False)}{space}{CALL_END}")


@SETTINGS
@given(before=st.text(string.ascii_letters + " .", max_size=12), stray=noise, name=names, arguments=objects(json_keys))
def test_kimi_text_before_the_first_call_of_a_section_raises_with_the_text(before, stray, name, arguments):
    text = f"{before}{SECTION}{stray}{kimi_call(name, 0, arguments)}{SECTION_END}"
    with pytest.raises(UnparsedToolCall, match="outside any call") as raised:
        read_tool_calls(text, "kimi-k2")
    assert repr(stray.lstrip(" \t\n\r")[:40]) in str(raised.value)
    assert_streams_like_whole(KIMI, text, seeds=[len(text)])


@SETTINGS
@given(stray=noise, name=names, arguments=objects(json_keys), where=st.sampled_from(["between", "after"]))
def test_kimi_text_between_or_after_calls_of_a_section_raises(stray, name, arguments, where):
    first, second = kimi_call(name, 0, arguments), kimi_call(name, 1, {})
    inside = f"{first}{stray}{second}" if where == "between" else f"{first}{second}{stray}"
    text = f"{SECTION}{inside}{SECTION_END}"
    with pytest.raises(UnparsedToolCall, match="expected"):
        read_tool_calls(text, "kimi-k2")
    assert_streams_like_whole(KIMI, text, seeds=[len(text)])


@SETTINGS
@given(calls=st.lists(st.tuples(names, objects(json_keys)), min_size=0, max_size=3), space=spaces,
       before=st.text(string.ascii_letters + " .", max_size=12))
def test_kimi_whitespace_between_the_tokens_is_no_noise(calls, space, before):
    body = space.join(kimi_call(name, index, arguments, space) for index, (name, arguments) in enumerate(calls))
    text = f"{before}{SECTION}{space}{body}{space}{SECTION_END}"
    reply = read_tool_calls(text, "kimi-k2")
    assert_calls(reply.calls, calls)
    assert reply.ids == [f"functions.{name}:{index}" for index, (name, _) in enumerate(calls)]
    # Whitespace touching a call is layout; an empty section is no call, so the text before it is kept whole.
    assert reply.content == (before.rstrip(KIMI.spacing) if calls else before)
    assert_streams_like_whole(KIMI, text, seeds=[len(text)])


@pytest.mark.parametrize("text", [
    f"Kimi writes {SECTION} first, then {SECTION_END}.",
    f"The tokens are {SECTION} <b>bold</b> and so on.",
    f"{SECTION} means a section; {CALL_END} ends a call.",
])
def test_kimi_prose_naming_the_section_token_without_a_call_after_it_stays_text(text):
    reply = read_tool_calls(text, "kimi-k2")
    assert reply.calls == [] and reply.content == text
    assert_streams_like_whole(KIMI, text)


def test_kimi_a_reply_ending_in_text_after_the_section_token_is_a_cut_section():
    # The section may still be arriving (text, then a call): the reply ended inside it.
    text = f"Done. {SECTION} and then"
    with pytest.raises(UnparsedToolCall, match="ended inside a tool call"):
        read_events(text, KIMI)
    assert_streams_like_whole(KIMI, text)


# --- harmony: messages after <|call|>, the header's space --------------------------------------

START, CHANNEL, MESSAGE, CALL, CONSTRAIN = "<|start|>assistant", "<|channel|>", "<|message|>", "<|call|>", "<|constrain|>"
THINK = f"{CHANNEL}analysis{MESSAGE}Thinking it over.<|end|>{START}"


def harmony_call(name: str, arguments: dict, style: int) -> str:
    """One call message as gpt-oss writes it: recipient in the channel, or in the role (after a space)."""
    body = json.dumps(arguments, ensure_ascii=False)
    if style == 0:
        return f"{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{body}"
    if style == 1:
        return f" to=functions.{name}{CHANNEL}commentary json{MESSAGE}{body}"
    return f" to=functions.{name}{CHANNEL}commentary{CONSTRAIN}json{MESSAGE}{body}"


@SETTINGS
@given(calls=st.lists(st.tuples(names, objects(json_keys), st.integers(0, 2)), min_size=1, max_size=4),
       final=st.one_of(st.none(), st.text(string.ascii_letters + " .{}\"", min_size=1, max_size=20)),
       closed=st.booleans())
def test_harmony_messages_after_call_read_as_anywhere_else(calls, final, closed):
    text = THINK + CALL.join(f"{START}" * (index > 0) + harmony_call(name, arguments, style)
                             for index, (name, arguments, style) in enumerate(calls))
    if final is not None:
        text += f"{CALL}{START}{CHANNEL}final{MESSAGE}{final}"
    elif closed:
        text += CALL
    kind, events = whole(HARMONY, text)
    assert kind == "events"
    got, shown, reasoning = parts(events)
    assert_calls(got, [(name, arguments) for name, arguments, _ in calls])
    assert reasoning == "Thinking it over."
    # The first call's role-recipient space lies between the reasoning block
    # and the call: layout, not returned. The final answer follows a call: its
    # leading whitespace is layout too, its trailing whitespace (the reply's end) is kept.
    raw = [ReasoningDelta("Thinking it over.")] + [TextDelta(" ")] * bool(calls[0][2]) \
        + [ToolCallEvent(call) for call in got] + [TextDelta(final)] * (final is not None)
    assert shown == "".join(event.text for event in laid_out(raw, HARMONY.spacing) if isinstance(event, TextDelta))
    assert shown == (final or "").lstrip(" \t\n\r")
    assert "<|start|>" not in shown
    assert_streams_like_whole(HARMONY, text, seeds=[len(text)])


@SETTINGS
@given(preamble=st.text(string.ascii_letters + " .,!", min_size=1, max_size=30), name=names,
       arguments=objects(json_keys), style=st.integers(0, 2))
def test_harmony_preamble_then_call_keeps_exactly_the_preamble(preamble, name, arguments, style):
    text = f"{CHANNEL}commentary{MESSAGE}{preamble}<|end|>{START}{harmony_call(name, arguments, style)}"
    reply = read_tool_calls(text, "harmony", prefix=START)
    assert_calls(reply.calls, [(name, arguments)])
    # The preamble opens the reply (its leading whitespace is kept) and touches the call (its trailing is not).
    assert reply.content == preamble.rstrip(HARMONY.spacing)
    assert_streams_like_whole(HARMONY, text, seeds=[len(text)])


@pytest.mark.parametrize(("after", "shown"), [
    # After <|call|>, <|start|>assistant (and one space) is the next message's framing, whatever follows.
    (f"{START} and then", "and then"),
    (f"{START}", ""),
    ("<|start|>assist", ""),  # the reply ended inside the framing
    # The whitespace touching the call is layout; the prose's own, and the reply's end, are kept.
    (f"{START}  two  spaces ", "two  spaces "),
    ("<|start|>user hi", "<|start|>user hi"),  # not the assistant's message: text, nothing dropped
    (" <|start|>assistant", "<|start|>assistant"),  # not right after <|call|>: text (its space touches the call)
    (f"{START}to=functions.g{CHANNEL}commentary{MESSAGE}{{}}", None),  # no space: to= opens as anywhere
])
def test_harmony_what_follows_a_call(after, shown):
    text = harmony_call("f", {"a": 1}, 0) + CALL + after
    kind, events = whole(HARMONY, text)
    assert kind == "events"
    calls, text_shown, _ = parts(events)
    assert calls[0].name == "f"
    if shown is not None:
        assert text_shown == shown and len(calls) == 1
    assert_streams_like_whole(HARMONY, text)


def test_harmony_a_reply_cut_inside_the_second_call_does_not_read_it():
    text = harmony_call("f", {"a": 1}, 0) + CALL + START + harmony_call("g", {"b": [1, 2]}, 1)[:-4]
    kind, events = whole(HARMONY, text)
    calls = [] if kind == "raises" else parts(events)[0]
    assert [call.name for call in calls] in ([], ["f"])
    assert_streams_like_whole(HARMONY, text)


def test_harmony_a_builtin_recipient_after_a_call_still_raises():
    text = harmony_call("f", {}, 0) + CALL + START + f"{CHANNEL}commentary to=python code{MESSAGE}print(1){CALL}"
    with pytest.raises(UnparsedToolCall, match="content type"):
        read_tool_calls(text, "harmony")


FINAL_JSON = (f"{THINK}{CHANNEL}final{MESSAGE}"
              '{"name": "get_weather", "arguments": {"city": "Paris"}}')


def test_harmony_final_json_is_content_when_bare_json_formats_are_not_guarded():
    guard = tuple(fmt for fmt in FORMATS.values() if all(o.literal.startswith(("<", "to=")) for o in fmt.openers))
    calls, shown, _ = parts(read_events(FINAL_JSON, HARMONY, guard=guard))
    assert calls == [] and shown == '{"name": "get_weather", "arguments": {"city": "Paris"}}'


def test_harmony_final_json_is_content_by_default():
    # harmony is an addressed format (WireShape.addressed): the default guard leaves bare-JSON formats out.
    reply = read_tool_calls(FINAL_JSON, "harmony")
    assert reply.calls == [] and reply.content.startswith("{")


# --- Llama 3: "parameters" or "arguments" reads, both at once are refused ---------------------------

TAG = "<|python_tag|>"
prose = st.text(string.ascii_letters + " .,!?", max_size=15)


@SETTINGS
@given(name=names, arguments=objects(json_keys), tag=st.booleans(), before=prose, typed=st.booleans())
def test_llama3_parameters_form_reads_bare_or_after_the_tag(name, arguments, tag, before, typed):
    call = {"type": "function"} if typed else {}
    call.update(name=name, parameters=arguments)
    text = f"{before}{TAG if tag else ''}{json.dumps(call, ensure_ascii=False)}"
    reply = read_tool_calls(text, "llama3-json")
    assert_calls(reply.calls, [(name, arguments)])
    assert reply.content == before.rstrip(LLAMA.spacing)  # the whitespace touching the call is layout
    assert_streams_like_whole(LLAMA, text, seeds=[len(text)])


@SETTINGS
@given(name=names, arguments=objects(json_keys), tag=st.booleans(), before=prose)
def test_llama3_arguments_form_reads_bare_or_after_the_tag(name, arguments, tag, before):
    text = f"{before}{TAG if tag else ''}{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}"
    reply = read_tool_calls(text, "llama3-json")
    assert_calls(reply.calls, [(name, arguments)])
    assert reply.content == before.rstrip(LLAMA.spacing)  # the whitespace touching the call is layout
    assert_streams_like_whole(LLAMA, text, seeds=[len(text)])


@pytest.mark.parametrize("text", [
    '{"name": "f", "parameters": {"a": 1}, "arguments": {"a": 1}}',  # both keys
    TAG + '{"name": "f"}',  # no arguments at all
    TAG + '{"name": "f", "parameters": {"a": 1}',  # never closed
    TAG + '{"name": "f", "arguments": {"a": 1}, "parameters": {"a": 1}}',  # both keys, after the tag
])
def test_llama3_near_misses_around_the_tag_raise(text):
    with pytest.raises(UnparsedToolCall):
        read_events(text, LLAMA)
    assert_streams_like_whole(LLAMA, text)
