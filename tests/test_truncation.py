"""A reply cut short (``max_tokens``) loses nothing: issue 22's truncation outcome, for every format.

For every registered format a reply is built with the format's own writer:
its reasoning block (when it has one), text, a complete call, then a second
call, and the reply is cut at every character. Read without ``strict``,
each cut gives the complete calls exactly (compared with ``oracle``), the
reasoning and text before the cut, and the call the cut fell in as a
``CutToolCall`` whose ``raw`` is the rest of the reply, or, while what
was cut cannot yet be told from text, that text as content: every
character of the reply is accounted for (by the raw machine, ``layout=False``;
the reader gives the same events with the layout whitespace taken out,
compared with ``layout_oracle.laid_out``). Read strictly, the same cut raises
the error the earlier tests pin. A stream in random chunks gives the same
events, strict or not. The registry's samples with two calls are cut the
same way (sections and lists of calls).
"""

from __future__ import annotations

import logging
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import templatestudio
from templatestudio import ArgumentsDelta, CutToolCall, ParsedToolCall, Reply, UnparsedToolCall, read_tool_calls
from templatestudio.engine import Machine, read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.integrations.served import ReplyStream, read_reply
from templatestudio.render import load_tokenizer
from templatestudio.stream import ToolCallStream
from templatestudio.wire.base import Format
from layout_oracle import laid_out
from oracle import same_json  # the tests' own comparison, not the package's
from test_reading_properties import alphabet_text, random_pieces, split_at

CUT = "the reply ended inside a tool call: "
SECOND = ParsedToolCall("second_tool", {"text": "a longer value", "unit": "EUR"})
THINKING = "weighing it"


def same_calls(left: list[ParsedToolCall], right: list[ParsedToolCall]) -> bool:
    return len(left) == len(right) and all(
        a.name == b.name and same_json(a.arguments, b.arguments) for a, b in zip(left, right))


def calls_in(events: list) -> list[ParsedToolCall]:
    return [event.call for event in events if isinstance(event, ToolCallEvent)]


def cuts_in(events: list) -> list[CutToolCall]:
    return [event for event in events if isinstance(event, CutToolCall)]


def texts(events: list, kind: type = TextDelta) -> str:
    return "".join(event.text for event in events if isinstance(event, kind))


def literals(fmt: Format) -> list[str]:
    return [*fmt.closers, *fmt.markers]


def closer_piece(fmt: Format, cut: CutToolCall) -> bool:
    """Whether all the cut holds is the start of a closer (then no call was cut, only a section)."""
    return any(closer.startswith(cut.raw.strip()) for closer in fmt.closers)


def outcome(read) -> tuple:
    try:
        return ("events", read())
    except UnparsedToolCall as error:
        return ("raises", str(error))


def every_character(text: str, fmt: Format) -> list:
    """The raw machine's events, not strict (layout=False): every character as text, reasoning, a call or the cut."""
    machine = Machine(fmt, strict=False, layout=False)
    return merge_deltas(machine.feed(text) + machine.close())


def streamed(fmt: Format, text: str, rng: random.Random, *, strict: bool) -> list:
    stream = ToolCallStream(fmt, strict=strict)
    events, at = [], 0
    while at < len(text):
        size = rng.randint(1, 9)
        events += stream.feed(text[at : at + size])
        at += size
    return merge_deltas(events + stream.close())


class Built:
    """A reply of fmt's writer: reasoning, lead text, call a, separator, call b; and where each part ends."""

    def __init__(self, fmt: Format, lead: str, separator: str) -> None:
        self.first = next(call for sample in fmt.samples for call in sample.calls)
        think = f"{fmt.reasoning[0]}{THINKING}{fmt.reasoning[1]}" if fmt.reasoning else ""
        self.reasoning_end = len(think)
        self.a_start = len(think) + len(lead)
        self.a_end = self.a_start + len(fmt.write_call(self.first))
        self.b_start = self.a_end + len(separator)
        self.separator = separator
        self.text = think + lead + fmt.write_call(self.first) + separator + fmt.write_call(SECOND)
        self.lead = lead
        self.calls = calls_in(read_events(self.text, fmt))  # as the format reads them (text values stay text)


def build(fmt: Format) -> Built | None:
    """The first construction whose whole reply reads as the two calls written, with nothing else shown."""
    separators = dict.fromkeys((getattr(fmt.wire, "separator", "\n"), "\n", ""))
    for lead in ("Checking. ", ""):
        for separator in separators:
            try:
                built = Built(fmt, lead, separator)
            except UnparsedToolCall:
                continue
            if [call.name for call in built.calls] == [built.first.name, SECOND.name]:
                return built
    return None


BUILT = {name: build(fmt) for name, fmt in FORMATS.items()}


def test_almost_every_format_writes_a_reply_of_two_calls_to_cut():
    # A bare list that must open the reply (pythonic) cannot follow text or a first list.
    assert [name for name, built in BUILT.items() if built is None] == ["pythonic"]


def check_cut(fmt: Format, built: Built, k: int, rng: random.Random) -> str:
    """Every rule for the reply cut after k characters; the kind of outcome, for the tally."""
    prefix = built.text[:k]
    # The rules below hold for every character (the raw machine); the reader
    # returns the same events with only the layout whitespace taken out.
    events = every_character(prefix, fmt)
    read = read_events(prefix, fmt, strict=False)
    calls, cuts = calls_in(events), cuts_in(events)
    where = (fmt.name, k, prefix[-40:], events[-3:], read[-3:])
    assert read == laid_out(events, fmt.spacing), where
    # At most one cut call, the last event, holding the rest of the reply exactly.
    assert len(cuts) <= 1, where
    cut = cuts[0] if cuts else None
    if cut is not None:
        assert events[-1] is cut and cut.raw == prefix[cut.offset :] and cut.end == k and cut.raw, where
        # A name is never guessed: it is the name of the call the cut fell in.
        assert cut.name in (None, built.first.name if cut.offset < built.a_end else SECOND.name), where
    # The complete calls, exactly, and the first one never lost once written.
    assert same_calls(calls, built.calls[: len(calls)]), where
    assert len(calls) >= (k >= built.a_end) + (k == len(built.text)), where
    # The reasoning, and every other character: shown, a call, or the cut call's raw.
    rest = cut.raw if cut is not None else ""
    if k < built.reasoning_end:
        opener = fmt.reasoning[0]
        if k >= len(opener):
            assert texts(events, ReasoningDelta) == prefix[len(opener) :] and not texts(events) and not cut, where
        else:
            assert texts(events) == prefix and not cut, where
    else:
        assert texts(events, ReasoningDelta) == (THINKING if fmt.reasoning else ""), where
        first = next((i for i, event in enumerate(events) if isinstance(event, ToolCallEvent)), len(events))
        before, after = texts(events[:first]), texts(events[first:])
        if not calls:
            assert before + rest == prefix[built.reasoning_end :], where
        else:
            assert before == built.lead, where
            if k < built.a_end:
                # Cut in the first call's closer, the call reads whole (a closer a
                # stop string removed) and nothing of the closer is shown, or
                # what is left of a section's closer is the cut.
                assert len(calls) == 1 and not after.strip(), where
                assert cut is None or cut.offset >= built.a_start and cut.name is None, where
            elif len(calls) == 1:
                # After the first call: text, then the cut call. A reader whose
                # closer is optional takes the start of one at the reply's end
                # into the call's region (``wire.optional_closer``): that start
                # of a literal is all that may be missing. Before it may stand the
                # separator the writer puts between calls when the format shows
                # nothing for it alone (Inkling's <|message_model|>, framing): a
                # message cut in its kind token may yet be an answer.
                unshown = prefix[built.a_end : k - len(after + rest)]
                if built.separator and unshown.startswith(built.separator) \
                        and not read_events(built.separator, fmt, strict=False):
                    unshown = unshown[len(built.separator) :]
                assert prefix.endswith(after + rest), where
                assert not unshown or any(literal.startswith(unshown) for literal in literals(fmt)), where
            else:
                # Both calls whole; at most the start of a section's closer is cut.
                assert k > built.b_start and (cut is None or cut.name is None and closer_piece(fmt, cut)), where
    # Deep inside a call the cut is always reported as a cut call; it starts at the
    # call, or at the separator before it when that also opens a call (Inkling's
    # <|message_model|> starts the block whose header names the tool).
    opens = getattr(getattr(fmt.wire, "call", None), "also_opens", ()) or ()
    lead_in = len(built.separator) if built.separator in opens else 0
    for start, end, earliest in ((built.a_start, built.a_end, built.a_start),
                                 (built.b_start, len(built.text), built.b_start - lead_in)):
        if k == (start + end) // 2:
            assert cut is not None and cut.offset >= earliest, where
    # Strictly, the same cut raises the pinned error; a reply not cut reads the same.
    events = read
    strict = outcome(lambda: read_events(prefix, fmt))
    if cut is not None:
        assert strict[0] == "raises" and strict[1].startswith(CUT) and "was never closed" in strict[1], where
    else:
        assert strict == ("events", events), where
    # The production reader says the same, and so does a stream in random chunks.
    reply = read_tool_calls(prefix, fmt)
    assert reply.calls == calls and reply.cut == cut and reply.events == events, where
    assert reply.content == texts(events) and reply.reasoning == texts(events, ReasoningDelta), where
    assert outcome(lambda: read_tool_calls(prefix, fmt, strict=True).events) == strict, where
    assert streamed(fmt, prefix, rng, strict=False) == events, where
    if k % 5 == 0:
        assert outcome(lambda: streamed(fmt, prefix, rng, strict=True)) == strict, where
    return "cut" if cut is not None else f"{len(calls)} call(s)"


@pytest.mark.parametrize("name", [name for name, built in BUILT.items() if built is not None])
def test_a_reply_cut_anywhere_loses_nothing(name):
    fmt, built = FORMATS[name], BUILT[name]
    rng = random.Random(name)
    tally: dict[str, int] = {}
    for k in range(len(built.text) + 1):
        kind = check_cut(fmt, built, k, rng)
        tally[kind] = tally.get(kind, 0) + 1
    print(f"{name}: {tally}")
    assert tally.get("cut") and tally.get("1 call(s)") and tally.get("2 call(s)"), tally


MULTI = [(name, index) for name, fmt in FORMATS.items() for index, sample in enumerate(fmt.samples)
         if len(sample.calls) >= 2]


@pytest.mark.parametrize(("name", "index"), MULTI, ids=[f"{n}-{i}" for n, i in MULTI])
def test_a_sample_of_several_calls_cut_anywhere_keeps_the_calls_before_the_cut(name, index):
    fmt = FORMATS[name]
    text = fmt.samples[index].text
    whole = calls_in(read_events(text, fmt))
    rng = random.Random(f"{name}-{index}")
    deepest_cut_calls = None  # the calls of the longest prefix cut inside a call
    for k in range(len(text) + 1):
        prefix = text[:k]
        events = read_events(prefix, fmt, strict=False)
        calls, cuts = calls_in(events), cuts_in(events)
        where = (name, index, k, prefix[-40:], events[-3:])
        assert same_calls(calls, whole[: len(calls)]), where
        assert len(cuts) <= 1 and all(events[-1] is cut and cut.raw == prefix[cut.offset :] for cut in cuts), where
        strict = outcome(lambda: read_events(prefix, fmt))
        assert (strict[0] == "raises" and strict[1].startswith(CUT)) if cuts else strict == ("events", events), where
        assert streamed(fmt, prefix, rng, strict=False) == events, where
        if cuts and not closer_piece(fmt, cuts[0]):
            deepest_cut_calls = calls
    # Cut inside its last call, a reply keeps every call before it as a call
    # (in a section or a JSON list too: the calls that closed are read). A list
    # of Python calls (a section opened by "[", pythonic's) is one expression:
    # cut before its "]" it keeps none, the whole list is the cut call.
    python_list = fmt.wire.section is not None and fmt.wire.section.open == "["
    kept = 0 if python_list else len(whole) - 1
    assert deepest_cut_calls is not None and len(deepest_cut_calls) == kept, (name, index, deepest_cut_calls)


@pytest.mark.parametrize("name", list(FORMATS))
def test_any_text_reads_the_same_whole_and_streamed_when_not_strict(name):
    """The soup of test_reading_properties, read not strictly: stream == whole, and strict differs only at a cut."""
    fmt = FORMATS[name]

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(text=alphabet_text(fmt), cuts=st.lists(st.integers(0, 400), max_size=8), seed=st.integers(0, 2**16))
    def agree(text, cuts, seed):
        loose = outcome(lambda: read_events(text, fmt, strict=False))
        for pieces in (list(text), split_at(text, cuts), random_pieces(text, random.Random(seed))):
            stream = ToolCallStream(fmt, strict=False)
            assert outcome(lambda: merge_deltas([e for p in pieces for e in stream.feed(p)] + stream.close())) == loose
        strict = outcome(lambda: read_events(text, fmt))
        if loose[0] == "events" and cuts_in(loose[1]):
            assert strict[0] == "raises" and strict[1].startswith(CUT), (text, strict)
            (cut,) = cuts_in(loose[1])
            assert loose[1][-1] is cut and cut.raw == text[cut.offset :] and cut.raw, (text, cut)
        else:
            assert strict == loose, text

    agree()


# --- the reported cases -------------------------------------------------------------------------


def test_a_cut_inside_a_second_parallel_call_keeps_the_first():
    fmt = FORMATS["hermes"]
    first = fmt.write_call(ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"}))
    text = "<think>\nTwo rates:\n EUR, JPY.\n</think>\n\n" + first + "\n" + '<tool_call>\n{"name": "get_exchange_rate", "argu'
    reply = read_tool_calls(text, fmt)
    assert same_calls(reply.calls, [ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})])
    # The whitespace around the block and between the calls is layout; inside the thought it is kept.
    assert reply.reasoning == "Two rates:\n EUR, JPY." and reply.content == ""
    assert reply.cut == CutToolCall("get_exchange_rate", '<tool_call>\n{"name": "get_exchange_rate", "argu',
                                    text.rindex("<tool_call>"))
    assert reply.cut.end == len(text) and reply.events[-1] is reply.cut
    with pytest.raises(UnparsedToolCall, match=r"^the reply ended inside a tool call: '<tool_call>\\n\{\"name\": \"ge' "
                                               r"at offset \d+ was never closed"):
        read_tool_calls(text, fmt, strict=True)


def test_a_cut_at_a_calls_opener_keeps_the_reasoning():
    text = "<think>\nI will call\tthe tool.\n</think>\n\n<tool_call>"
    reply = read_tool_calls(text, "hermes")
    assert reply.reasoning == "I will call\tthe tool." and reply.content == "" and reply.calls == []
    assert reply.cut == CutToolCall(None, "<tool_call>", text.index("<tool_call>"))


def test_a_cut_inside_a_section_keeps_the_sections_first_call():
    for name in ("deepseek-v3", "deepseek-dsml", "kimi-k2", "minimax-xml"):
        fmt = FORMATS[name]
        sample = next(sample for sample in fmt.samples if len(sample.calls) >= 2)
        text = sample.text[: len(sample.text) - 30]
        reply = read_tool_calls(text, fmt)
        assert same_calls(reply.calls, list(sample.calls[:1])), (name, reply)
        assert reply.cut is not None and text.endswith(reply.cut.raw) and reply.cut.name in (None, sample.calls[1].name)


def test_a_cut_inside_a_list_of_calls_keeps_the_lists_first_call():
    text = '<|tool_call|>[{"name": "a", "arguments": {"x": [1, {"y": 2}]}}, {"name": "b", "arguments": {"x": [1'
    reply = read_tool_calls(text, "granite")
    assert same_calls(reply.calls, [ParsedToolCall("a", {"x": [1, {"y": 2}]})]) and reply.content == ""
    assert reply.cut == CutToolCall("b", ', {"name": "b", "arguments": {"x": [1', text.index(', {"name": "b"'))


def test_a_stream_not_strict_gives_the_cut_call_at_close():
    call = ParsedToolCall("get_exchange_rate", {"base": "EUR"})
    first = FORMATS["hermes"].write_call(call)
    stream = ToolCallStream("hermes", strict=False)
    # The space before the call and the newline between the calls are layout; the one inside "Ok,  one" is not.
    assert stream.feed("Ok,  one. " + first) == [TextDelta("Ok,  one."), ToolCallEvent(call)]
    assert stream.feed('\n<tool_call>\n{"name": "get_') == []
    offset = len("Ok,  one. " + first + "\n")
    assert stream.close() == [CutToolCall(None, '<tool_call>\n{"name": "get_', offset)]
    strict = ToolCallStream("hermes")
    strict.feed("Ok,  one. " + first + '\n<tool_call>\n{"name": "get_')
    with pytest.raises(UnparsedToolCall, match=rf"^{CUT}.* at offset {offset} was never closed"):
        strict.close()


def test_a_reply_not_cut_says_so():
    reply = read_tool_calls(FORMATS["hermes"].samples[0].text, "hermes")
    assert isinstance(reply, Reply) and reply.cut is None and reply.calls


def test_the_cut_call_is_public_and_never_text():
    assert templatestudio.CutToolCall is CutToolCall and "CutToolCall" in templatestudio.__all__
    cut = CutToolCall("f", "<tool_call>", 3)
    assert not hasattr(cut, "text") and cut.end == 14
    # Merging never joins it to text around it, and keeps it as it is.
    assert merge_deltas([TextDelta("a"), cut, TextDelta("b")]) == [TextDelta("a"), cut, TextDelta("b")]
    with pytest.raises(AttributeError):
        cut.name = "g"  # frozen


def test_a_leaked_call_in_another_format_still_raises_when_cut():
    # A cut call of the machine's own format is a CutToolCall; one in another format is a leak.
    with pytest.raises(UnparsedToolCall, match=r"the hermes format left a tool call unread"):
        read_tool_calls("Sure. <|tool_call>call:f{a:<|\"|>x", "hermes")


# --- the vLLM plugin's answer -------------------------------------------------------------------


def test_the_served_reply_sends_the_complete_calls_and_not_the_cut_one(caplog):
    fmt = FORMATS["hermes"]
    first = fmt.write_call(ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"}))
    text = "Checking\tnow. " + first + "\n" + '<tool_call>\n{"name": "get_exchange_rate", "arguments": {"ba'
    with caplog.at_level(logging.WARNING, logger="vllm.templatestudio"):
        content, calls = read_reply(text, fmt)
    # The plugin's content is the reply's own text minus its calls (no layout taken out), up to the cut.
    assert content == "Checking\tnow. " + "\n" and [call.name for call, _ in calls] == ["get_exchange_rate"]
    assert "ended inside a tool call to get_exchange_rate" in caplog.text
    for strict in (False, True):  # a cut is no leak: strict mode does not fail the request
        stream = ReplyStream(fmt, strict=strict, deltas=True)
        pieces = [stream.feed(text[at : at + 7]) for at in range(0, len(text), 7)] + [stream.close()]
        assert "".join(piece for piece, _ in pieces) == content
        whole = [item[0].name for _, sent in pieces for item in sent if isinstance(item, tuple)]
        assert whole == ["get_exchange_rate"]
        assert not stream.leaked
        # The cut call's arguments went out in pieces (index 1) and never got their last one.
        cut = [item for _, sent in pieces for item in sent if isinstance(item, ArgumentsDelta) and item.index == 1]
        assert cut and not any(item.final for item in cut) and '{"ba'.startswith("".join(i.text for i in cut))
        assert "the call is not sent; its arguments, streamed as tool call 1, stay unfinished" in caplog.text


SHARED_AT_START = sorted({
    (fmt.name, other.name, opener.literal)
    for fmt in FORMATS.values() for other in FORMATS.values() if other is not fmt
    for opener in other.openers if opener.start_only
    and any(own.literal == opener.literal and not own.start_only for own in fmt.openers)
})


def test_some_format_shares_a_literal_with_another_format_s_start_only_opener():
    assert SHARED_AT_START, "no pair of formats to check below: the check checks nothing"


@pytest.mark.parametrize(("name", "other", "literal"), SHARED_AT_START)
def test_a_reply_that_starts_in_its_own_call_cut_short_is_its_own_cut_call(name, other, literal):
    """At the reply's start a literal of the format's own openers is decided by its own openers first.

    Another format's start-only opener for the same literal (qwen-xml's bare
    <function=, functionary's call) must not turn the format's own call, cut
    anywhere, into a leak of that format: it is a call, a cut call of its own
    (strict: the cut's error), or text the format's own opener left as prose.
    """
    fmt = FORMATS[name]
    for sample in fmt.samples:
        if not sample.text.startswith(literal):
            continue
        for k in range(len(literal), len(sample.text) + 1):
            prefix = sample.text[:k]
            events = read_events(prefix, fmt, strict=False)
            cuts = cuts_in(events)
            # A cut at the very start: nothing before it is shown, and it holds the whole prefix.
            assert not cuts or events[-1] is cuts[0] and cuts[0].raw == prefix[cuts[0].offset :], (name, prefix, events)
            strict = outcome(lambda: read_events(prefix, fmt))
            assert strict[0] == "events" or strict[1].startswith(CUT), (name, prefix, strict)


def test_a_reply_cut_anywhere_is_read_through_a_shipped_response_template_too():
    # Gemma 4's tokenizer ships a response template, which reads whole replies
    # only: cut inside a call, the reader checks it up to the cut call and
    # keeps the cut; nothing transformers raises ever comes out raw.
    tokenizer = load_tokenizer("google/gemma-4-E2B-it")
    assert tokenizer.response_template is not None
    fmt = FORMATS["gemma4"]
    for sample in fmt.samples:
        for end in range(len(sample.text) + 1):
            text = sample.text[:end]
            try:
                by_format = read_tool_calls(text, fmt)
            except UnparsedToolCall:
                with pytest.raises(UnparsedToolCall):
                    read_tool_calls(text, tokenizer)
                continue
            try:
                shipped = read_tool_calls(text, tokenizer)
            except UnparsedToolCall as error:
                # The two readings disagree (the response template's own limits): named, not lost.
                assert "response template" in str(error), text
                continue
            assert [call.name for call in shipped.calls] == [call.name for call in by_format.calls], text
            assert all(same_json(a.arguments, b.arguments) for a, b in zip(shipped.calls, by_format.calls)), text
            assert shipped.cut == by_format.cut, text


@settings(max_examples=150, deadline=None)
@given(name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True),
       call_id=st.one_of(st.none(), st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True),
                         st.text(st.sampled_from("ab1 -_]["), min_size=1, max_size=5)),
       rest=st.sampled_from(["", "{", '{"city": "Pa']))
def test_a_mistral_call_cut_after_its_name_names_it_only_as_the_declaration_writes_it(name, call_id, rest):
    # NAME[CALL_ID]ID[ARGS]: the name comes back only when the id is one the declaration allows
    # (letters and digits); with any other id nothing is guessed.
    written = "[TOOL_CALLS]" + name + ("" if call_id is None else "[CALL_ID]" + call_id) + "[ARGS]" + rest
    fine = call_id is None or call_id.isascii() and call_id.isalnum()
    stream = ToolCallStream("mistral", strict=False)
    try:
        events = stream.feed(written) + stream.close()
    except UnparsedToolCall:
        assert not fine, written  # a spoiled id may make the call malformed, never a guessed name
        return
    cuts = [event for event in events if isinstance(event, CutToolCall)]
    assert len(cuts) == 1 and cuts[0].raw == written, events
    assert cuts[0].name == (name if fine else None), written
