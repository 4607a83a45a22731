"""Harmony (gpt-oss), issue 22: a message body is content, and a call message may end at ``<|end|>``.

1. Every harmony call is addressed by its header (``to=functions.NAME``,
   ``WireShape.addressed``), so a harmony reader's default guard leaves out
   the formats whose calls open on plain text (``{``, ``[``, a code fence, a
   bare word): any such format's call, written in a final message, a
   preamble or after a call, is content. Another format's marked call
   (``<tool_call>``, ``[TOOL_CALLS]``, ``<｜DSML｜…>``) there still raises as
   a leak, and so does the other addressed format's (Muse's ``to=NAME<|message|>
   <atem:function_calls>``: its plain-text ``to=`` opens a call only inside
   its header's tokens); a guard given explicitly is watched as given; no other format's
   default guard changes, and a format added to the registry takes its
   place in harmony's default guard by the same rule.
2. A call message ended by ``<|end|>`` instead of ``<|call|>`` is the call
   (OpenAI's reference parser ends a message at either; the recipient makes
   it a call): a reply reads the same with either terminator, and what
   ``<|end|>`` cannot end (``<|return|>``, trailing text, a non-object body)
   raises.

Every case is read whole and streamed (a character at a time, and in
random chunks), which must agree. Arguments are compared with the tests'
own ``oracle.same_json``; text with ``laid_out`` (``layout_oracle``).
"""

from __future__ import annotations

import json
import random
import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.calls import CallSpan, ParsedToolCall, UnparsedToolCall
from templatestudio.engine import Machine, read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.guards import guard_of, opens_on_plain_text
from templatestudio.resumable_match import chars, literal, run
from templatestudio.stream import ToolCallStream
from templatestudio.wire.base import CallSyntaxError, Format, Opener, opener_pattern
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import decode_at
from layout_oracle import laid_out
from oracle import same_json  # the tests' own comparison, not the package's

HARMONY = FORMATS["harmony"]
REGISTRY = tuple(FORMATS.values())
PLAIN = [fmt for fmt in REGISTRY if fmt is not HARMONY and opens_on_plain_text(fmt)]
ADDRESSED = [fmt for fmt in REGISTRY if fmt.wire is not None and fmt.wire.addressed]
LEFT_OUT = [fmt for fmt in PLAIN if fmt not in ADDRESSED]  # what an addressed format's default guard leaves out
MARKED = [fmt for fmt in REGISTRY if fmt is not HARMONY and not opens_on_plain_text(fmt)]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CHANNEL, MESSAGE, CALL_END, END, RETURN = "<|channel|>", "<|message|>", "<|call|>", "<|end|>", "<|return|>"
START, CONSTRAIN = "<|start|>assistant", "<|constrain|>"
THINK, THOUGHT = f"{CHANNEL}analysis{MESSAGE}Thinking it over.{END}{START}", "Thinking it over."
FINAL = f"{CHANNEL}final{MESSAGE}"
PREAMBLE = f"{CHANNEL}commentary{MESSAGE}"
CALLS = (ParsedToolCall("get_weather", {"city": "Paris"}), ParsedToolCall("ping", {}),
         ParsedToolCall("s", {"q": "a, b", "n": [1, 2.5, None], "o": {"k": "v"}}))


# --- reading helpers ----------------------------------------------------------------------------------

def outcome(read) -> tuple:
    try:
        return ("events", merge_deltas(read()))
    except UnparsedToolCall as error:
        return ("raises", str(error))


def pieces_of(text: str, seed: int) -> list[str]:
    rng, pieces, at = random.Random(seed), [], 0
    while at < len(text):
        size = rng.randint(1, 9)
        pieces.append(text[at : at + size])
        at += size
    return pieces


def read_all_ways(text: str, guard=None, *, stream_too: bool = True) -> tuple:
    """The whole read; streamed a character at a time and in chunks, a Machine and a ToolCallStream, the same."""
    expected = outcome(lambda: read_events(text, HARMONY, guard=guard))
    for pieces in (list(text), pieces_of(text, len(text))):
        machine = Machine(HARMONY, guard=guard)
        assert outcome(lambda: [e for piece in pieces for e in machine.feed(piece)] + machine.close()) == expected
        if stream_too:
            stream = ToolCallStream(HARMONY, guard=guard)
            assert outcome(lambda: [e for piece in pieces for e in stream.feed(piece)] + stream.close()) == expected
    return expected


def harmony_call(call: ParsedToolCall, style: int) -> str:
    """One call message's header and body, without its terminator, in the three header orders gpt-oss writes."""
    body = json.dumps(call.arguments, ensure_ascii=False)
    if style == 0:
        return f"{CHANNEL}commentary to=functions.{call.name} {CONSTRAIN}json{MESSAGE}{body}"
    if style == 1:
        return f" to=functions.{call.name}{CHANNEL}commentary json{MESSAGE}{body}"
    return f" to=functions.{call.name}{CHANNEL}commentary{MESSAGE}{body}"


def assert_calls(events, expected) -> None:
    got = [event.call for event in events if isinstance(event, ToolCallEvent)]
    assert [call.name for call in got] == [call.name for call in expected]
    for call, want in zip(got, expected):
        assert same_json(call.arguments, want.arguments), (call.arguments, want.arguments)


# --- 1. which formats open on plain text, and whose default guard leaves them out ----------------------

def test_the_formats_that_open_on_plain_text():
    # muse-atem's to=RECIPIENT header is plain text too (its own reader watches it first, as harmony's).
    assert {fmt.name for fmt in PLAIN} == {
        "fenced-json", "llama3-json", "pythonic", "command-r-plus", "firefunction-v2", "phi4-mini", "xlam",
        "muse-atem"}
    # Near misses of the rule: a bracketed token and a word followed by a token are markup.
    assert not opens_on_plain_text(FORMATS["mistral"])  # [TOOL_CALLS]
    assert "function call<|role_sep|>" in FORMATS["gigachat"].markers and not opens_on_plain_text(FORMATS["gigachat"])
    assert opens_on_plain_text(HARMONY)  # to= is its own: a harmony reader watches it first


def test_only_harmony_and_muse_address_their_calls():
    # Muse Spark's messages are addressed as harmony's are (to=NAME<|message|>).
    assert [name for name, fmt in FORMATS.items() if fmt.wire is not None and fmt.wire.addressed] == [
        "harmony", "muse-atem"]


def test_the_default_guard_of_harmony_leaves_out_the_plain_text_formats_and_no_other_changes():
    assert guard_of(None, HARMONY) == tuple(fmt for fmt in REGISTRY if fmt not in LEFT_OUT)
    assert FORMATS["muse-atem"] in guard_of(None, HARMONY) and HARMONY in guard_of(None, FORMATS["muse-atem"])
    assert Machine(HARMONY).guard == guard_of(None, HARMONY)
    assert guard_of(None) == REGISTRY
    for fmt in REGISTRY:
        if fmt in ADDRESSED:
            assert guard_of(None, fmt) == tuple(item for item in REGISTRY if item not in LEFT_OUT or item is fmt)
        elif fmt is not HARMONY:
            assert guard_of(None, fmt) == REGISTRY and Machine(fmt).guard == REGISTRY, fmt.name
    # A guard given explicitly is the guard, for harmony too.
    assert guard_of(REGISTRY, HARMONY) == REGISTRY and Machine(HARMONY, guard=REGISTRY).guard == REGISTRY
    with pytest.raises(TypeError, match="a guard is a tuple of Format, got str 'xlam'"):
        Machine(HARMONY, guard=("xlam",))


@pytest.mark.parametrize("call", CALLS, ids=range(len(CALLS)))
def test_the_other_addressed_formats_call_in_a_harmony_message_is_a_leak(call):
    # Muse's header and block are markup (to=NAME<|message|><atem:function_calls>): in a harmony
    # message body they are a leak, not an answer's prose, and harmony's call is one in Muse's.
    muse = FORMATS["muse-atem"]
    body = muse.write_call(call)
    for text, _ in places(body):
        kind, message = outcome(lambda: read_events(text, HARMONY))
        assert kind == "raises" and message.endswith("opens a call in the muse-atem format"), (text, message)
        assert read_all_ways(text)[0] == "raises", text
    kind, message = outcome(lambda: read_events(harmony_call(call, 0), muse))
    assert kind == "raises" and message.endswith("opens a call in the harmony format"), message


def plain_bodies() -> list[tuple[str, str]]:
    """(format, text) pairs: every plain-text format's samples with calls, and calls its writer writes.

    Not Muse's, addressed as harmony is: its call in a harmony message is a leak
    (``test_the_other_addressed_formats_call_in_a_harmony_message_is_a_leak``).
    """
    found = []
    for fmt in LEFT_OUT:
        found += [(fmt.name, sample.text) for sample in fmt.samples if sample.calls]
        found += [(fmt.name, fmt.write_call(call)) for call in CALLS]
    return found


PLAIN_BODIES = plain_bodies()


def places(body: str) -> list[tuple[str, list]]:
    """(reply, raw events: every character that is not harmony's framing) for body in each kind of message."""
    call = harmony_call(CALLS[1], 0)
    return [
        (FINAL + body, [TextDelta(body)]),
        (THINK + FINAL + body + RETURN, [ReasoningDelta(THOUGHT), TextDelta(body)]),
        (f"{PREAMBLE}{body}{END}{START}{call}{CALL_END}", [TextDelta(body), ToolCallEvent(CALLS[1])]),
        (f"{THINK}{call}{CALL_END}{START}{FINAL}{body}", [ReasoningDelta(THOUGHT), ToolCallEvent(CALLS[1]),
                                                        TextDelta(body)]),
    ]


@pytest.mark.parametrize(("name", "body"), PLAIN_BODIES, ids=[f"{name}-{index}" for index, (name, _) in
                                                               enumerate(PLAIN_BODIES)])
def test_a_plain_text_formats_call_in_a_harmony_message_is_content(name, body):
    assert find_call_markers(body, guard=(FORMATS[name],)), "the body opens a call of its own format"
    for text, raw in places(body):
        assert read_all_ways(text) == ("events", laid_out(raw, HARMONY.spacing)), text
        # Guarded against explicitly, the same text is that format's leak wherever its call opens there
        # (a start-only opening, pythonic's bare list, opens only a reply, not a message body).
        kind, message = outcome(lambda: read_events(text, HARMONY, guard=(FORMATS[name],)))
        opens = bool(find_call_markers(text, guard=(FORMATS[name],)))
        assert (kind == "raises" and f"opens a call in the {name} format" in message) == opens, (text, message)


def test_the_canitoolcall_final_json_lookalike_is_content():
    text = (f"{THINK}{FINAL}" '{"name": "get_weather", "arguments": {"city": "Paris"}}')
    expected = [ReasoningDelta(THOUGHT), TextDelta('{"name": "get_weather", "arguments": {"city": "Paris"}}')]
    assert read_all_ways(text) == ("events", expected)
    # Every registered format watched, as given: the object opens a call in the first that reads it.
    at = len(THINK + FINAL)
    assert outcome(lambda: read_events(text, HARMONY, guard=REGISTRY)) == (
        "raises", f"the harmony format left a tool call unread: '{{' at offset {at} opens a call in the llama3-json format")
    assert outcome(lambda: read_events(text, HARMONY, guard=(FORMATS["phi4-mini"],))) == (
        "raises", f"the harmony format left a tool call unread: '{{' at offset {at} opens a call in the phi4-mini format")


MARKED_BODIES = [(fmt.name, sample.text) for fmt in MARKED for sample in fmt.samples if sample.calls]


@pytest.mark.parametrize(("name", "body"), MARKED_BODIES, ids=[f"{name}-{index}" for index, (name, _) in
                                                                 enumerate(MARKED_BODIES)])
def test_a_marked_formats_call_in_a_harmony_message_is_still_a_leak(name, body):
    foreign = tuple(fmt for fmt in guard_of(None, HARMONY) if fmt is not HARMONY)
    for text, _ in places(body):
        first = find_call_markers(text, guard=foreign)[0]
        assert name in {item for marker in find_call_markers(text, guard=foreign) for item in marker.formats}
        assert read_all_ways(text, stream_too=False) == (
            "raises", f"the harmony format left a tool call unread: {first.text!r} at offset {first.offset} "
                      f"opens a call in the {first.formats[0]} format"), text


def test_a_hermes_call_in_a_final_answer_is_a_leak():
    text = THINK + FINAL + "Sure. " + FORMATS["hermes"].write_call(CALLS[0])
    assert read_all_ways(text) == ("raises", "the harmony format left a tool call unread: '<tool_call>' at offset "
                                             f"{len(THINK + FINAL) + 6} opens a call in the hermes format")


def _made_up(literal_text: str) -> Format:
    """A format no model writes: literal_text, a name, a space, a JSON object, then ``;``."""

    def read(region: str, opener: Opener, found) -> list[CallSpan]:
        name_end = region.find(" ", len(literal_text))
        arguments, stop = decode_at(region, name_end + 1, found)
        if not isinstance(arguments, dict) or region[stop:] != ";":
            raise CallSyntaxError("expected a JSON object, then ;")
        return [CallSpan(ParsedToolCall(region[len(literal_text) : name_end], arguments), 0, len(region))]

    return Format(
        name=f"made-up {literal_text}", description=f"{literal_text}NAME {{JSON}};, a format no model writes",
        openers=(Opener(literal_text, opener_pattern(literal_text, run(chars("[a-z_]"), at_least=1), literal(" {")),
                        lambda: TagExtent(len(literal_text), ";", "json")),),
        read_region=read, write_call=lambda call: f"{literal_text}{call.name} {json.dumps(call.arguments)};",
        closers=(";",), response_template=None, no_response_template="made up for this test", reasoning=None,
        samples=(), near_misses=(), wire_limits=(), corpus_labels=())


def test_a_format_added_to_the_registry_joins_harmonys_default_guard_by_the_same_rule(monkeypatch):
    plain, marked = _made_up("CALL "), _made_up("<call:zz>")
    monkeypatch.setitem(FORMATS, plain.name, plain)
    monkeypatch.setitem(FORMATS, marked.name, marked)
    assert guard_of(None, HARMONY) == (*(fmt for fmt in REGISTRY if fmt not in LEFT_OUT), marked)
    assert guard_of(None, FORMATS["hermes"]) == (*REGISTRY, plain, marked)
    for made_up in (plain, marked):
        text = THINK + FINAL + "Sure. " + made_up.write_call(CALLS[0])
        if made_up is plain:
            assert read_all_ways(text) == ("events", [ReasoningDelta(THOUGHT), TextDelta(text[len(THINK + FINAL):])])
        else:
            assert read_all_ways(text) == ("raises", "the harmony format left a tool call unread: '<call:zz>' at "
                                                     f"offset {len(THINK + FINAL) + 6} opens a call in the {marked.name} format")
        # A hermes reader's default guard is still the whole registry: both are leaks to it.
        with pytest.raises(UnparsedToolCall, match=f"opens a call in the {re.escape(made_up.name)} format"):
            read_events("Sure. " + made_up.write_call(CALLS[0]), FORMATS["hermes"])


# --- 2. a call message ended by <|end|> ----------------------------------------------------------------

names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
# Strings may hold harmony's own tokens: inside a JSON string they are text.
strings = st.text(string.ascii_letters + " ,:{}[]\"\\é", max_size=8) | st.sampled_from(
    [END, CALL_END, RETURN, f"a{END}{START}b", "<|end", "|>"])
values = st.recursive(st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.none(), strings),
                      lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(strings, inner, max_size=3)),
                      max_leaves=8)
calls = st.builds(ParsedToolCall, names, st.dictionaries(strings, values, max_size=4))


def reply(parts, ends, *, think: bool, preamble: str | None, final: str | None, tail: str) -> str:
    """Call messages (each with its header style), each ended by its terminator (<|end|> or <|call|>)."""
    text = THINK if think else ""
    if preamble is not None:
        text += f"{PREAMBLE}{preamble}{END}{START}"
    text += START.join(harmony_call(call, style) + end for (call, style), end in zip(parts, ends))
    if final is not None:
        return text + f"{START}{FINAL}{final}{RETURN}"
    return text + tail


@SETTINGS
@given(parts=st.lists(st.tuples(calls, st.integers(0, 2)), min_size=1, max_size=3),
       ends=st.lists(st.sampled_from([END, CALL_END]), min_size=3, max_size=3), think=st.booleans(),
       preamble=st.one_of(st.none(), st.text(string.ascii_letters + " .,!", min_size=1, max_size=20)),
       final=st.one_of(st.none(), st.text(string.ascii_letters + " .{}\"", min_size=1, max_size=20)),
       tail=st.sampled_from(["", START, "<|start|>assi", START + " "]))
def test_a_call_message_reads_the_same_ended_by_end_or_by_call(parts, ends, think, preamble, final, tail):
    text = reply(parts, ends, think=think, preamble=preamble, final=final, tail=tail)
    kind, events = read_all_ways(text)
    assert kind == "events", events
    assert_calls(events, [call for call, _ in parts])
    raw = [ReasoningDelta(THOUGHT)] * think + [TextDelta(preamble)] * (preamble is not None)
    raw += [TextDelta(" ") if style else TextDelta("") for _, style in parts[:1]]  # the role's space: layout
    raw += [ToolCallEvent(call) for call, _ in parts] + [TextDelta(final)] * (final is not None)
    assert [event for event in events if not isinstance(event, ToolCallEvent)] == [
        event for event in laid_out(raw, HARMONY.spacing) if not isinstance(event, ToolCallEvent)]
    # The same reply with every call ended by <|call|>: the same events.
    assert read_all_ways(reply(parts, [CALL_END] * 3, think=think, preamble=preamble, final=final, tail=tail),
                         stream_too=False) == (kind, events)


def test_the_canitoolcall_preamble_call_ended_by_end():
    text = (f"{PREAMBLE}Let me check the weather.{END}{START} to=functions.get_weather{CHANNEL}commentary{MESSAGE}"
            f'{{"location": "SF"}}{END}')
    kind, events = read_all_ways(text)
    assert kind == "events" and events[0] == TextDelta("Let me check the weather.") and len(events) == 2
    assert_calls(events, [ParsedToolCall("get_weather", {"location": "SF"})])


def test_end_inside_a_string_is_text_and_the_call_ends_at_the_end_after_the_object():
    text = harmony_call(ParsedToolCall("f", {}), 0)[: -2] + json.dumps({"a": f"x{END}y{CALL_END}"}) + END + " after"
    kind, events = read_all_ways(text)
    assert kind == "events" and events[-1] == TextDelta("after")
    assert_calls(events, [ParsedToolCall("f", {"a": f"x{END}y{CALL_END}"})])


HEADER = f"{CHANNEL}commentary to=functions.f json{MESSAGE}"


@pytest.mark.parametrize(("text", "message"), [
    (HEADER + "{}" + RETURN, "the reply ended inside a tool call: '<|channel|>commentary to' at offset 0 was never "
                             "closed (unexpected text after the JSON value at offset 54)"),
    (HEADER + "{} x" + END, "the harmony format cannot read the tool call at offset 0 ('<|channel|>'): "
                            "unexpected text after the JSON value at offset 54"),
    (HEADER + "[1]" + END, "the harmony format cannot read the tool call at offset 0 ('<|channel|>'): "
                           "the arguments of 'f' must be a JSON object"),
    (HEADER + '{"a": 1' + END, "the harmony format cannot read the tool call at offset 0 ('<|channel|>'): "
                               "invalid JSON at offset 59: Expecting ',' delimiter"),
    (f"{CHANNEL}commentary to=browser.search json{MESSAGE}{{}}{END}",
     "the harmony format cannot read the tool call at offset 0 ('<|channel|>'): the recipient 'browser.search' is "
     "not a function (gpt-oss's built-in tools are not read)"),
])
def test_what_end_does_not_make_a_call(text, message):
    assert read_all_ways(text) == ("raises", message)


def test_an_analysis_message_still_ends_at_end_as_reasoning():
    text = THINK + FINAL + "Done."
    assert read_all_ways(text) == ("events", [ReasoningDelta(THOUGHT), TextDelta("Done.")])


# --- 3. llama.cpp's stray header addressed to the assistant itself (llama.cpp #21286) ----------------------

STRAY = f"{CHANNEL}commentary to=assistant"


def test_the_canitoolcall_stray_header_before_the_analysis_is_framing_and_nothing_is_lost():
    text = (f"{STRAY}{CHANNEL}analysis{MESSAGE}I'm\nthinking{END}{START}{FINAL}Hello, world!\nWhat's up?")
    # The stray header before the analysis message at the reply's start opens the reasoning
    # block (harmony declares it as a second opener of the block): the thought is reasoning.
    assert read_all_ways(text) == ("events", [ReasoningDelta("I'm\nthinking"), TextDelta("Hello, world!\nWhat's up?")])


def stray_reply(messages: list[tuple[str, object]], before: set[int], think: bool) -> str:
    """Messages (final, preamble or call), the stray header before those whose index is in before."""
    text = THINK if think else ""
    for index, (kind, body) in enumerate(messages):
        stray = STRAY if index in before else ""
        if index:
            text += START
        if kind == "call":
            text += stray + harmony_call(body, 0) + CALL_END
        else:
            text += f"{stray}{FINAL if kind == 'final' else PREAMBLE}{body}{END}"
    return text


messages = st.lists(st.one_of(
    st.tuples(st.just("final"), st.text(string.ascii_letters + " .,!\n", min_size=1, max_size=15)),
    st.tuples(st.just("preamble"), st.text(string.ascii_letters + " .,!", min_size=1, max_size=15)),
    st.tuples(st.just("call"), calls)), min_size=1, max_size=4)


@SETTINGS
@given(messages=messages, before=st.sets(st.integers(0, 3), min_size=1), think=st.booleans())
def test_a_stray_header_before_any_message_changes_nothing(messages, before, think):
    with_stray = stray_reply(messages, before, think)
    kind, events = read_all_ways(with_stray)
    assert (kind, events) == read_all_ways(stray_reply(messages, set(), think), stream_too=False), with_stray
    assert kind == "events", events
    assert_calls(events, [body for kind_, body in messages if kind_ == "call"])


@pytest.mark.parametrize(("text", "message"), [
    # Addressed to the assistant with no header after it: a message to a recipient, not a function.
    (f"{STRAY}{MESSAGE}Hi{END}", "the harmony format cannot read the tool call at offset 0 ('<|channel|>'): the "
                                 "recipient 'assistant' is not a function (gpt-oss's built-in tools are not read)"),
    (f"{CHANNEL}commentary to=assistant.x{CHANNEL}final{MESSAGE}Hi{END}",
     "the harmony format cannot read the tool call at offset 0 ('<|channel|>'): the header of the call to "
     "'assistant.x' does not end with <|message|>"),
    (f"{CHANNEL}commentary to=assistants{CHANNEL}final{MESSAGE}Hi{END}",
     "the harmony format cannot read the tool call at offset 0 ('<|channel|>'): the header of the call to "
     "'assistants' does not end with <|message|>"),
    # Only the commentary channel's stray header is framing.
    (f"{CHANNEL}analysis to=assistant{CHANNEL}final{MESSAGE}Hi{END}",
     "the harmony format cannot read the tool call at offset 0 ('<|channel|>'): the header of the call to "
     "'assistant' does not end with <|message|>"),
    # Cut inside it: as a cut call header, as before.
    (STRAY, "the reply ended inside a tool call: '<|channel|>commentary to' at offset 0 was never closed (the "
            "header of the call to 'assistant' does not end with <|message|>)"),
])
def test_near_misses_of_the_stray_header_are_refused_as_before(text, message):
    assert read_all_ways(text) == ("raises", message)


def test_the_stray_header_then_a_call_reads_the_call():
    text = f"Sure.{STRAY}{harmony_call(CALLS[2], 0)}{CALL_END}"
    kind, events = read_all_ways(text)
    assert kind == "events" and events[0] == TextDelta("Sure.")
    assert_calls(events, [CALLS[2]])


@pytest.mark.parametrize("recipient", ["commentary", "functions.get_weather", "user"])
def test_a_reply_cut_in_a_muse_header_is_prose_to_muse_whatever_harmonys_to_would_say(recipient):
    # Both read to=: harmony counts a reply ending on "to=functions." or more as a cut call, Muse
    # reads a header cut short as prose (its openers' cut_after). In a Muse reader, with harmony
    # guarded against, the own format's verdict on its own literal decides; harmony's stays its own.
    muse = FORMATS["muse-atem"]
    text = f"Checking. to={recipient}"
    assert read_events(text, muse) == [TextDelta(text)]
    stream = ToolCallStream(muse)
    events = [event for chunk in (text[:12], text[12:]) for event in stream.feed(chunk)] + stream.close()
    assert merge_deltas(events) == [TextDelta(text)]
    kind, message = outcome(lambda: read_events(text, HARMONY))
    cut = len("to=" + recipient) >= len("to=functions.")
    assert (kind == "raises" and "ended inside a tool call" in message) if cut else kind == "events", message
