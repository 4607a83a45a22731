"""The vLLM plugin in-process, against vLLM's own ToolParser and Parser machinery.

For every registered format (a template that writes it, detected as vLLM
would at start-up) and every reply the format's samples and near misses
give, plus those replies truncated, joined to leaks, and opened with
reasoning: ``extract_tool_calls`` must answer what ``read_tool_calls``
reads from the same text with ``layout=False`` (the plugin takes no
whitespace out), or, where the reader refuses, return the text unchanged;
a reply the reader says ended inside a call sends the calls before the cut
and the cut one as neither call nor content, with a warning, strict or
not. ``extract_tool_calls_streaming`` fed any chunking of it must stream
the same answer. Formats no corpus template writes (``NO_CORPUS_TEMPLATE``)
cannot be served by the plugin; the core it runs is tested for them.
Runs under ``.venv-vllm`` (``make vllm-test``).
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

from templatestudio.call_preview import preview_refusal
from templatestudio.calls import NoToolCallFormat, ParsedToolCall, UnparsedToolCall
from templatestudio.formats import FORMATS
from templatestudio.integrations import plugin_path
from templatestudio.integrations.served import (
    DELTAS_VARIABLE,
    STRICT_VARIABLE,
    LeakedToolCall,
    ReplyStream,
    deltas_from_environment,
    read_reply,
    strict_from_environment,
)
from templatestudio.integrations.vllm import TemplateStudioToolParser
from tests.vllm.parsers import StubTokenizer, without_reasoning_parser
from templatestudio.reader import read_tool_calls

TOOL = {"type": "function", "function": {"name": "get_exchange_rate", "parameters": {"type": "object"}}}
# Our own Qwen2.5-Coder-style template: no template in the corpus writes fenced-json.
FENCED_TEMPLATE = (
    "{%- if tools -%}{{ '<|im_start|>system\\n' + (tools | tojson) + '<|im_end|>\\n' }}{%- endif -%}"
    "{%- for m in messages -%}{{ '<|im_start|>' + m.role + '\\n' }}"
    "{%- if m.tool_calls -%}{%- for c in m.tool_calls -%}"
    "{{ '```json\\n' }}{\"name\": \"{{ c.function.name }}\", \"arguments\": {{ c.function.arguments | tojson }}}{{ '\\n```' }}"
    "{%- endfor -%}{%- else -%}{{ m.content }}{%- endif -%}{{ '<|im_end|>\\n' }}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}"
)


def template_writing(fmt) -> StubTokenizer:
    """The first corpus template labelled with one of fmt's corpus labels that the detector reads as fmt."""
    from templatestudio.corpus import corpus_dir, label_key, load_labels
    from templatestudio.detect import detect_format

    if fmt.name == "fenced-json":
        return StubTokenizer("fenced-json-mini", FENCED_TEMPLATE)
    labels = load_labels()
    for name in sorted(name for name, label in labels.items() if label_key(label) in fmt.corpus_labels):
        source = (corpus_dir() / "templates" / f"{name}.jinja").read_text(encoding="utf-8")
        tokenizer = StubTokenizer(name, source)
        if detect_format(tokenizer, deadline=None) is fmt:
            return tokenizer
    raise AssertionError(f"no corpus template labelled {fmt.name} is detected as {fmt.name}")


# Formats no chat template in the shared corpus writes: the detecting parser has no
# template to probe for them, so they are served by naming them (templatestudio-NAME,
# tests/vllm/test_reasoning_plugin.py). The core it runs (read_reply, ReplyStream, given
# the format) is tested for them below; test_formats_without_a_template_have_none_in_the_corpus
# fails as soon as a template arrives, so the set cannot outlive its reason.
NO_CORPUS_TEMPLATE = {
    "deepseek-v4.1": "no DeepSeek-V4.1 chat template exists in /work/shared/corpus",
    "kimi-k3": "no Kimi-K3 chat template exists in /work/shared/corpus",
    # The wires written from vLLM's documentation of its parsers (issue 23) claim no corpus label.
    **{name: "read from vLLM's documentation: no corpus template writes it" for name, fmt in FORMATS.items()
       if not fmt.corpus_labels},
}
SERVED = [name for name in FORMATS if name not in NO_CORPUS_TEMPLATE]



@pytest.fixture(scope="module", params=SERVED, ids=SERVED)
def parser_maker(request):
    """(format, make): make() builds a fresh parser for a template that writes the format."""
    fmt = FORMATS[request.param]
    tokenizer = template_writing(fmt)

    def make() -> TemplateStudioToolParser:
        return without_reasoning_parser(tokenizer)

    parser = make()
    assert parser.format is fmt, f"{tokenizer.name_or_path} detected as {parser.format.name}, not {fmt.name}"
    return fmt, make


class Captured(logging.Handler):
    """The plugin's log lines (vLLM's logger does not pass them to the root logger)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> Captured:
        self.logger = logging.getLogger("vllm.templatestudio")
        self.level = self.logger.level
        self.logger.setLevel(logging.INFO)
        self.logger.addHandler(self)
        return self

    def __exit__(self, *exc) -> None:
        self.logger.removeHandler(self)
        self.logger.setLevel(self.level)


def chat_request(**extra) -> ChatCompletionRequest:
    return ChatCompletionRequest(
        model="stand-in", messages=[{"role": "user", "content": "Rate?"}], tools=[TOOL], **extra
    )


def replies(fmt) -> list[str]:
    """Every reply a test reads: samples, near misses, and what can go wrong with them."""
    texts = [sample.text for sample in fmt.samples] + [miss.text for miss in fmt.near_misses]
    texts.append("Plain text, no call at all.")
    for sample in fmt.samples:
        text = sample.text
        texts += [text[:cut] for cut in range(1, len(text), max(1, len(text) // 9))]  # truncated
        texts += [text + " " + miss.text for miss in fmt.near_misses if miss.raises]  # then a leak
        if fmt.reasoning:
            opener, closer = fmt.reasoning
            texts += [
                f"{opener}thinking {text}{closer}\n\n{text}",  # a call rehearsed while thinking
                f"{opener}a{closer}{opener}b{closer}{text}",  # two blocks back to back
                f"{opener}still thinking",  # the reply ended inside reasoning
                f"{opener}done{closer}",  # and right after it
                f"{opener}{closer}{text}",  # an empty block (no event at all) right before the call
                f" {opener}{closer}",  # nothing but an empty block
            ]
            texts += [f"{opener}a{closer}{miss.text}" for miss in fmt.near_misses if miss.raises]
    return list(dict.fromkeys(texts))


def plugin_answer(parser, text):
    info = parser.extract_tool_calls(text, chat_request())
    calls = [(c.function.name, json.loads(c.function.arguments), c.id) for c in info.tool_calls]
    assert info.tools_called == bool(calls)
    assert all(call_id for _, _, call_id in calls), "every call the plugin sends has an id"
    return info.content or "", calls


def answerer(make):
    """answer(text) -> (content, [(name, arguments, id)]): a fresh parser's whole-reply answer."""
    return lambda text: plugin_answer(make(), text)


def core_answer(fmt):
    """The same answer from the core the plugin runs (read_reply), given the format itself."""

    def answer(text):
        try:
            content, calls = read_reply(text, fmt)
        except UnparsedToolCall:
            return text, []
        return content, [(call.name, call.arguments, written) for call, written in calls]

    return answer


def named(calls) -> list:
    return [(name, arguments) for name, arguments, _ in calls]


def reading(text: str, fmt):
    """The reader's raw reading, as the plugin reads (every character kept), or None where it refuses."""
    try:
        return read_tool_calls(text, fmt, reasoning_open=False, layout=False)
    except UnparsedToolCall:
        return None


def cut_call(text: str, fmt):
    """The call the reader says text ended inside (``Reply.cut``), or None."""
    reply = reading(text, fmt)
    return None if reply is None else reply.cut


def check_against_reader(fmt, text, content, calls):
    """The plugin's answer is the reader's raw reading of the same text.

    Calls and written ids equal the reader's; the content is the text less
    its calls, reasoning kept with its tags (no reasoning parser is set
    here): cut by hand, its reasoning and the rest are the reader's read
    with layout=False (the plugin takes no whitespace out). A reply the
    reader refuses comes back unchanged with no calls. A reply that ended
    inside a call sends the calls the reader read before it, and as content
    only text from before the cut call's offset: the cut call is neither.
    """
    reply = reading(text, fmt)
    if reply is None:
        assert (content, calls) == (text, [])
        return
    assert named(calls) == [(c.name, c.arguments) for c in reply.calls]
    for (_, _, got_id), written in zip(calls, reply.ids):
        if written:
            assert got_id == written
    assert leading_reasoning(content, fmt, text) == (reply.reasoning, reply.content)
    if reply.cut is not None:
        assert text[reply.cut.offset :] == reply.cut.raw, "the cut call runs to the end of the reply"
        assert subsequence(content, text[: reply.cut.offset]), f"{text!r}: nothing from the cut on is content"
    elif not calls and not any(marker in text for marker in fmt.markers if len(marker) > 1):
        assert content == text, "a reply without a call comes back exactly as written"


def subsequence(part: str, whole: str) -> bool:
    """Whether part is whole with some characters left out, in order."""
    rest = iter(whole)
    return all(char in rest for char in part)


def check_warnings(fmt, text: str, log: Captured) -> None:
    """What one answer logged: the reader's refusal, or the call the reply ended inside, or nothing."""
    warnings = [r.getMessage() for r in log.records if r.levelno >= logging.WARNING]
    try:
        reply = read_tool_calls(text, fmt, reasoning_open=False, layout=False)
    except UnparsedToolCall as refused:
        (line,) = warnings
        assert str(refused) in line, "the reader's words: marker and offset"
        return
    if reply.cut is None:
        assert warnings == [], text
        return
    (line,) = warnings
    assert "ended inside a tool call" in line and "not sent" in line, line
    assert f"at offset {reply.cut.offset} ({len(reply.cut.raw)} characters" in line, line
    if reply.cut.name is not None:
        assert f"to {reply.cut.name} " in line, line


def leading_reasoning(content: str, fmt, text: str) -> tuple[str, str]:
    """(reasoning, the rest) of content, cutting the reasoning blocks that open it by hand.

    text is the reply content came from: content has its calls taken out, so
    a block written after a call can open the content; only as many blocks
    as open text itself are cut.
    """
    return _cut_blocks(content, fmt, _cut_blocks(text, fmt, None)[2])[:2]


def _cut_blocks(content: str, fmt, most: int | None) -> tuple[str, str, int]:
    """(reasoning, the rest, blocks cut) of content, cutting at most most blocks off its start."""
    # Every pair the format declares it reads (K2 Horizon's <ifm|think_fast> and
    # <ifm|think_faster> beside <ifm|think>), not only the one it writes.
    pairs = fmt.reasoning_pairs
    inside, outside, position = [], [], 0
    while most is None or len(inside) < most:
        start = position + len(content[position:]) - len(content[position:].lstrip())
        pair = next(((o, c) for o, c in pairs if content.startswith(o, start)), None)
        if pair is None:
            break
        opener, closer = pair
        outside.append(content[position:start])
        end = content.find(closer, start + len(opener))
        inside.append(content[start + len(opener) : end if end != -1 else len(content)])
        position = len(content) if end == -1 else end + len(closer)
    return "".join(inside), "".join(outside) + content[position:], len(inside)


def stream(parser, text: str, cuts: list[int], request=None):
    """Feed text cut at cuts, then finish: (joined content, [(name, arguments, id)], messages)."""
    request = request or chat_request()
    bounds = [0, *sorted(set(cuts)), len(text)]
    messages = []
    for start, end in zip(bounds, bounds[1:]):
        message = parser.extract_tool_calls_streaming("", "", text[start:end], [], [], [], request)
        if message is not None:
            messages.append(message)
    final = parser.finish_streaming()
    if final is not None:
        messages.append(final)
    content = "".join(m.content or "" for m in messages)
    calls: dict[int, list] = {}
    for message in messages:
        for delta in message.tool_calls:
            entry = calls.setdefault(delta.index, [None, "", None])
            if delta.function and delta.function.name:
                assert entry[0] is None and not entry[1], "the name comes first, once"
                entry[0], entry[2] = delta.function.name, delta.id
            if delta.function and delta.function.arguments:
                assert entry[0] is not None, "argument fragments follow the name"
                entry[1] += delta.function.arguments
    # A call whose arguments went out in pieces and that then proved no call (argument_deltas' rule)
    # keeps arguments that never parse: the client's sign that it is not a call. It is left out here,
    # so what is left must equal the whole reply's calls.
    joined = [(name, _parsed(arguments), call_id) for name, arguments, call_id in calls.values()]
    return content, [call for call in joined if call[1] is not _UNFINISHED], messages


_UNFINISHED = object()


def _parsed(arguments: str):
    try:
        return json.loads(arguments)
    except ValueError:
        return _UNFINISHED


def test_every_format_is_detected_from_a_template_that_writes_it(parser_maker):
    fmt, make = parser_maker
    assert make().detected.format is fmt


def test_non_streaming_answers_what_the_reader_reads(parser_maker):
    fmt, make = parser_maker
    parser = make()
    for text in replies(fmt):
        with Captured() as log:
            content, calls = plugin_answer(parser, text)
        check_against_reader(fmt, text, content, calls)
        check_warnings(fmt, text, log)


def test_the_vllm_parser_answers_what_the_core_notebook_21_runs_answers(parser_maker):
    # Notebook 21 (through tests/vllm/served_view.py) runs templatestudio.integrations.served
    # where vLLM is not installed.
    fmt, make = parser_maker
    for text in replies(fmt):
        try:
            core_content, core_calls = read_reply(text, fmt)
        except UnparsedToolCall:
            core_content, core_calls = text, []
        content, calls = plugin_answer(make(), text)
        assert (content, [(n, a) for n, a, _ in calls]) == (core_content, [(c.name, c.arguments) for c, _ in core_calls])
        core = ReplyStream(fmt)
        pieces = [core.feed(text[i : i + 4]) for i in range(0, len(text), 4)] + [core.close()]
        streamed, _, _ = stream(make(), text, list(range(0, len(text), 4)))
        assert "".join(piece for piece, _ in pieces) == streamed


def test_every_sample_is_read_with_its_calls(parser_maker):
    fmt, make = parser_maker
    for sample in fmt.samples:
        _, calls = plugin_answer(make(), sample.text)
        assert [(n, a) for n, a, _ in calls] == [(c.name, c.arguments) for c in sample.calls], sample.text


def check_stream(answer, fmt, text: str, content: str, calls: list) -> None:
    """A stream of text answers what the whole reply answers, or, if the reader refuses it, loses nothing.

    answer(text): the whole-reply answer (``answerer``, ``core_answer``).
    When the reader refuses the reply, what was sent before the refusal
    stays sent and the text from there on follows as content: so some
    prefix of the reply, read whole, gives exactly the calls sent and the
    content sent before the rest.
    """
    sent = named(calls)
    if reading(text, fmt) is None:
        for end in range(len(text), -1, -1):
            rest = text[end:]
            if not content.endswith(rest):
                continue
            before, before_calls = answer(text[:end])
            if before + rest == content and named(before_calls) == sent:
                return
        raise AssertionError(f"the stream lost text: {text!r} streamed as {content!r} and calls {sent}")
    whole_content, whole_calls = answer(text)
    assert (content, sent) == (whole_content, named(whole_calls))


@settings(max_examples=30)
@given(data=st.data())
def test_streaming_any_chunking_equals_the_whole_reply(parser_maker, data):
    fmt, make = parser_maker
    text = data.draw(st.sampled_from(replies(fmt)))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    content, calls, _ = stream(make(), text, cuts)
    check_stream(answerer(make), fmt, text, content, calls)


@settings(max_examples=30)
@given(data=st.data())
def test_with_argument_pieces_any_chunking_still_equals_the_whole_reply(parser_maker, data):
    """TEMPLATESTUDIO_VLLM_ARGUMENT_DELTAS=1: the pieces join to the whole reply's calls.

    A call the reader then refuses keeps a slot whose arguments never parse
    (``stream`` leaves those out: the client's sign that it was no call), and
    its text goes on as content, as without pieces.
    """
    fmt, make = parser_maker
    text = data.draw(st.sampled_from(replies(fmt)))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    with mock.patch.dict(os.environ, {DELTAS_VARIABLE: "1"}):  # the parser reads it when built
        parser = make()
    content, calls, messages = stream(parser, text, cuts)
    check_stream(answerer(make), fmt, text, content, calls)
    if preview_refusal(fmt.wire) is not None:  # no pieces: every call's arguments in one fragment
        fragments = [d for m in messages for d in m.tool_calls if d.function and d.function.arguments]
        assert len(fragments) == len(calls)


@pytest.mark.parametrize("name", [name for name in SERVED if preview_refusal(FORMATS[name].wire) is None])
def test_with_argument_pieces_a_long_argument_arrives_in_many(name, monkeypatch):
    fmt = FORMATS[name]
    make = lambda: without_reasoning_parser(template_writing(fmt))  # noqa: E731
    monkeypatch.setenv(DELTAS_VARIABLE, "1")
    body = "a line of the file\n" * 200
    text = fmt.write_call(ParsedToolCall("write_file", {"path": "a.txt", "content": body}))
    content, calls, messages = stream(make(), text, list(range(0, len(text), 8)))
    assert named(calls) == [("write_file", {"path": "a.txt", "content": body})]
    fragments = [d for m in messages for d in m.tool_calls if d.function and d.function.arguments]
    assert len(fragments) > len(text) // 8 - 20  # one piece for almost every 8 characters written


def test_streaming_one_character_at_a_time(parser_maker):
    # Content deltas never hold part of a marker: joined, they equal the whole reply's content.
    fmt, make = parser_maker
    for sample in fmt.samples:
        content, calls, _ = stream(make(), sample.text, list(range(len(sample.text))))
        assert [(n, a) for n, a, _ in calls] == [(c.name, c.arguments) for c in sample.calls]
        check_stream(answerer(make), fmt, sample.text, content, calls)


def reasoning_prefixes(fmt) -> list[str]:
    """Reasoning blocks a reply can open with: empty, filled, between newlines, two back to back.

    None for a format that declares no reasoning block (dots, granite-20b-fc).
    """
    if fmt.reasoning is None:
        return []
    opener, closer = fmt.reasoning
    return [f"{opener}{closer}", f"{opener}a{closer}", f"\n{opener}{closer}\n", f"{opener}x{closer}{opener}{closer}"]


@pytest.mark.parametrize("name", [name for name in SERVED if FORMATS[name].reasoning])
def test_reasoning_before_a_reply_stays_in_its_content_word_for_word(name):
    fmt = FORMATS[name]
    tokenizer = template_writing(fmt)
    for sample in fmt.samples:
        content, calls = plugin_answer(without_reasoning_parser(tokenizer), sample.text)
        for prefix in reasoning_prefixes(fmt):
            text = prefix + sample.text
            got_content, got_calls = plugin_answer(without_reasoning_parser(tokenizer), text)
            assert (got_content, [c[:2] for c in got_calls]) == (prefix + content, [c[:2] for c in calls]), text
            streamed, streamed_calls, _ = stream(without_reasoning_parser(tokenizer), text, list(range(0, len(text), 3)))
            assert (streamed, [c[:2] for c in streamed_calls]) == (prefix + content, [c[:2] for c in calls]), text


@pytest.mark.parametrize("name", [name for name in SERVED if FORMATS[name].reasoning])
def test_a_leak_right_after_reasoning_loses_no_tag_whatever_the_cut(name):
    fmt = FORMATS[name]
    tokenizer = template_writing(fmt)

    def make():
        return without_reasoning_parser(tokenizer)

    opener, closer = fmt.reasoning
    for miss in [m for m in fmt.near_misses if m.raises]:
        text = f"{opener}a{closer}{miss.text}"
        for cut in range(len(text) + 1):
            content, calls, _ = stream(make(), text, [cut])
            check_stream(answerer(make), fmt, text, content, calls)
            assert content.startswith(f"{opener}a{closer}"), cut


def test_tool_ids_follow_the_reply_the_template_or_vllm(parser_maker):
    fmt, make = parser_maker
    parser = make()
    if fmt.name == "mistral":  # its templates render a call only with a 9-character id
        assert parser.detected.call_shape.id_length == 9
    for sample in fmt.samples:
        _, calls = plugin_answer(parser, sample.text)
        for (_, _, got), written in zip(calls, sample.ids or [None] * len(calls)):
            if written:
                assert got == written
            elif parser.detected.call_shape.id_length is not None:
                assert re.fullmatch(r"[A-Za-z0-9]{9}", got), got
            else:
                assert got.startswith("chatcmpl-tool-"), got


def malformed(fmt) -> list[str]:
    """The near misses the reader refuses: a marker it did not consume, a call written wrong."""
    return [miss.text for miss in fmt.near_misses if miss.raises and cut_call(miss.text, fmt) is None]


def cut_short(fmt) -> list[str]:
    """Near misses and replies (samples cut, samples then a cut call) that end inside a call, by the reader."""
    return [text for text in replies(fmt) if cut_call(text, fmt) is not None]


@pytest.mark.parametrize("name", list(FORMATS))
def test_near_misses_that_raise_are_malformed_or_cut(name):
    # A near miss that raises either is refused by the reader, or ended inside a call:
    # what the reader says of it decides which test below holds it, no list by hand.
    fmt = FORMATS[name]
    for miss in [m for m in fmt.near_misses if m.raises]:
        reply = reading(miss.text, fmt)
        assert reply is None or reply.cut is not None, f"{miss.text!r} raises nowhere: {miss.why}"
        if reply is not None:  # the strict reader refuses it, in its own words
            with pytest.raises(UnparsedToolCall, match="ended inside a tool call"):
                read_tool_calls(miss.text, fmt, reasoning_open=False, strict=True)


def test_a_leak_is_logged_with_marker_and_offset_and_returned_unchanged(parser_maker):
    fmt, make = parser_maker
    leaks = malformed(fmt)
    assert leaks, f"{fmt.name} has no near miss the reader refuses"
    for text in leaks:
        with pytest.raises(UnparsedToolCall) as refused:
            read_tool_calls(text, fmt, reasoning_open=False, layout=False)
        with Captured() as log:
            info = make().extract_tool_calls(text, chat_request())
        assert (info.tools_called, info.tool_calls, info.content) == (False, [], text)
        (record,) = [r for r in log.records if r.levelno == logging.WARNING]
        assert str(refused.value) in record.getMessage()  # the reader's words: marker and offset
        assert re.search(r"offset \d+ \(?'", record.getMessage()) or re.search(r"'.+' at offset \d+", record.getMessage())
        with Captured() as log:
            content, calls, _ = stream(make(), text, list(range(0, len(text), 5)))
        check_stream(answerer(make), fmt, text, content, calls)
        assert [r.levelno for r in log.records] == [logging.WARNING]


def test_a_reply_cut_inside_a_call_sends_the_calls_before_it_and_logs_the_cut(parser_maker, monkeypatch):
    # Issue 22's truncation outcome: the calls closed before the cut go out as calls,
    # the cut call as neither a call nor content, with one warning; never a refusal.
    fmt, make = parser_maker
    texts = cut_short(fmt)
    assert any(reading(text, fmt).calls for text in texts), f"no reply of {fmt.name} has a call, then a cut one"
    for strict in ("0", "1"):  # strict mode fails leaks, not replies cut short
        monkeypatch.setenv(STRICT_VARIABLE, strict)
        for text in texts:
            with Captured() as log:
                content, calls = plugin_answer(make(), text)
            check_against_reader(fmt, text, content, calls)
            check_warnings(fmt, text, log)
            for cuts in (list(range(0, len(text), 5)), list(range(len(text)))):
                with Captured() as log:
                    streamed, streamed_calls, _ = stream(make(), text, cuts)
                assert (streamed, named(streamed_calls)) == (content, named(calls)), text
                check_warnings(fmt, text, log)


def test_strict_mode_fails_the_request_instead(parser_maker, monkeypatch):
    fmt, make = parser_maker
    monkeypatch.setenv(STRICT_VARIABLE, "1")
    for text in malformed(fmt):
        with pytest.raises(LeakedToolCall, match=f"{STRICT_VARIABLE}=1.*{re.escape(fmt.name)} reader"):
            make().extract_tool_calls(text, chat_request())
        with pytest.raises(LeakedToolCall):
            stream(make(), text, [len(text) // 2])
    for sample in fmt.samples:  # strict changes nothing for replies that read
        calls = plugin_answer(make(), sample.text)[1]
        assert named(calls) == [(c.name, c.arguments) for c in sample.calls]


def core_stream(fmt, text: str, cuts: list[int], *, strict: bool = False):
    """ReplyStream fed text cut at cuts, then closed: (joined content, [(name, arguments, id)])."""
    core = ReplyStream(fmt, strict=strict)
    bounds = [0, *sorted(set(cuts)), len(text)]
    pieces = [core.feed(text[start:end]) for start, end in zip(bounds, bounds[1:])] + [core.close()]
    # Whole calls; the pieces of calls still being written (ArgumentsDelta) are the vLLM parser's to send.
    calls = [(item[0].name, item[0].arguments, item[1]) for _, sent in pieces for item in sent if isinstance(item, tuple)]
    return "".join(content for content, _ in pieces), calls


def test_formats_without_a_template_have_none_in_the_corpus():
    # The reason NO_CORPUS_TEMPLATE gives: once a template is labelled with one of these
    # formats, this fails, and the format goes back to being served through the plugin.
    from templatestudio.corpus import label_key, load_labels

    labels = {label_key(label) for label in load_labels().values()}
    for name in NO_CORPUS_TEMPLATE:
        assert not labels & set(FORMATS[name].corpus_labels), f"{name} has a corpus template now"
        with pytest.raises(AssertionError, match=f"no corpus template labelled {re.escape(name)}"):
            template_writing(FORMATS[name])


@pytest.mark.parametrize("name", sorted(NO_CORPUS_TEMPLATE))
def test_formats_without_a_template_are_served_by_the_core_as_the_reader_reads(name):
    # No template, so no parser: the core the parser runs with the format it detected
    # (read_reply, ReplyStream) is given the format itself, and held to the same answers.
    fmt = FORMATS[name]
    answer = core_answer(fmt)
    rng = random.Random(22)
    for text in replies(fmt):
        with Captured() as log:
            content, calls = answer(text)
        check_against_reader(fmt, text, content, calls)
        if reading(text, fmt) is not None:  # a refusal is the caller's to log (leak), not read_reply's
            check_warnings(fmt, text, log)
        chunkings = (range(len(text)), range(0, len(text), 4), rng.sample(range(len(text) + 1), k=min(len(text), 6)))
        for cuts in map(list, chunkings):
            with Captured() as log:
                streamed, streamed_calls = core_stream(fmt, text, cuts)
            check_stream(answer, fmt, text, streamed, streamed_calls)
            check_warnings(fmt, text, log)
    for sample in fmt.samples:  # reasoning before a reply stays in its content, word for word
        content, calls = answer(sample.text)
        for prefix in reasoning_prefixes(fmt):
            text = prefix + sample.text
            got, got_calls = answer(text)
            assert (got, named(got_calls)) == (prefix + content, named(calls)), text
            streamed, streamed_calls = core_stream(fmt, text, list(range(0, len(text), 3)))
            assert (streamed, named(streamed_calls)) == (prefix + content, named(calls)), text
    for text in malformed(fmt):  # strict fails leaks
        with pytest.raises(LeakedToolCall, match=f"{STRICT_VARIABLE}=1.*{re.escape(fmt.name)} reader"):
            core_stream(fmt, text, [len(text) // 2], strict=True)
    for text in cut_short(fmt):  # and not replies cut short
        half = [len(text) // 2]
        assert core_stream(fmt, text, half, strict=True) == core_stream(fmt, text, half)


def test_tool_choice_none_passes_text_through(parser_maker):
    fmt, make = parser_maker
    text = fmt.samples[0].text
    request = chat_request(tool_choice="none")
    assert make().extract_tool_calls(text, request).content == text
    content, calls, _ = stream(make(), text, [3, 9], request)
    assert (content, calls) == (text, [])


def test_requests_on_one_parser_keep_their_own_streams(parser_maker):
    fmt, make = parser_maker
    parser = make()
    first, second = fmt.samples[0].text, "Just text."
    one, two = chat_request(), chat_request()
    assert one.request_id != two.request_id
    got = {one.request_id: "", two.request_id: ""}
    for index in range(max(len(first), len(second))):
        for request, text in ((one, first), (two, second)):
            message = parser.extract_tool_calls_streaming("", "", text[index : index + 1], [], [], [], request)
            if message and message.content:
                got[request.request_id] += message.content
    assert got[two.request_id] == second


def test_special_tokens_are_kept_for_requests_with_tools(parser_maker):
    _, make = parser_maker
    assert make().adjust_request(chat_request()).skip_special_tokens is False
    # Without tools in play the request keeps vLLM's own default (True in 0.32, None in 0.33: decided later).
    untouched = chat_request(tool_choice="none").skip_special_tokens
    assert make().adjust_request(chat_request(tool_choice="none")).skip_special_tokens is untouched


# --- start-up, the plugin file, settings ---------------------------------------------


def test_a_template_without_a_format_fails_at_start_up_through_vllm(tokenizers_by_vllm):
    from vllm.parser.parser_manager import ParserManager

    gemma3 = tokenizers_by_vllm("unsloth/gemma-3-1b-it")
    with pytest.raises(TypeError) as failed:
        ParserManager.get_parser(
            tool_parser_name="templatestudio", enable_auto_tools=True, model_name="gemma3", tokenizer=gemma3
        )
    message = str(failed.value)
    assert "--tool-call-parser templatestudio cannot be used" in message
    assert "writes no tool-call format templatestudio reads" in message
    assert "choose vLLM's --tool-call-parser for this model by hand" in message


def test_no_chat_template_and_a_template_that_cannot_render_say_so():
    with pytest.raises(NoToolCallFormat, match="has no chat template"):
        without_reasoning_parser(StubTokenizer("bare", None))
    with pytest.raises(NoToolCallFormat, match="cannot render a tool call"):
        without_reasoning_parser(StubTokenizer("broken", "{{ raise_exception('no tools here') }}"))


def test_the_format_is_logged_once_per_template():
    with Captured() as log:
        tokenizer = StubTokenizer("logged-once", FENCED_TEMPLATE)
        for _ in range(3):
            without_reasoning_parser(tokenizer)
    lines = [r.getMessage() for r in log.records]
    assert lines == [lines[0]] and "fenced-json format" in lines[0] and "arguments typed as written" in lines[0]


def test_the_argument_pieces_setting_reads_only_clear_values():
    assert deltas_from_environment({}) is False
    assert deltas_from_environment({DELTAS_VARIABLE: "on"}) is True
    with pytest.raises(ValueError, match=f"{DELTAS_VARIABLE} must be 1 \\(send an open call's arguments in pieces\\)"):
        deltas_from_environment({DELTAS_VARIABLE: "2"})


def test_strict_setting_reads_only_clear_values():
    assert strict_from_environment({}) is False
    assert strict_from_environment({STRICT_VARIABLE: "1"}) is True
    assert strict_from_environment({STRICT_VARIABLE: "0"}) is False
    with pytest.raises(ValueError, match=f"{STRICT_VARIABLE} must be 1"):
        strict_from_environment({STRICT_VARIABLE: "sometimes"})


def test_the_cli_prints_a_plugin_path_vllm_loads_by_itself():
    printed = subprocess.run(
        [sys.executable, "-m", "templatestudio", "vllm-plugin"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert Path(printed) == plugin_path() and Path(printed).is_file()
    assert Path(printed).stem != "vllm", "vLLM imports a plugin file under its stem"
    check = (
        "from vllm.tool_parsers import ToolParserManager\n"
        f"ToolParserManager.import_tool_parser({printed!r})\n"
        "print(ToolParserManager.get_tool_parser('templatestudio').__name__)\n"
        "import vllm.entrypoints.openai.api_server\n"  # vLLM itself still imports
    )
    loaded = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip().endswith("TemplateStudioToolParser")


# --- reasoning: vLLM's --reasoning-parser composed with ours --------------------------


@pytest.fixture(scope="module")
def tokenizers_by_vllm():
    from vllm.tokenizers import get_tokenizer

    loaded = {}

    def load(repo: str):
        if repo not in loaded:
            loaded[repo] = get_tokenizer(repo)
        return loaded[repo]

    return load


QWEN3_REPLY = (
    "<think>\nThe get_exchange_rate tool answers this.\n</think>\n\n"
    '<tool_call>\n{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}\n</tool_call>'
)
# A call rehearsed while thinking, then the real one.
REHEARSED = (
    "<think>\nI might write <tool_call>\n{\"name\": \"nope\", \"arguments\": {}}\n</tool_call> here.\n</think>\n\n"
    '<tool_call>\n{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}\n</tool_call>'
)
EUR_JPY = [("get_exchange_rate", {"base": "EUR", "quote": "JPY"})]


@pytest.fixture(scope="module")
def qwen3_with_reasoning_parser(tokenizers_by_vllm):
    """vLLM's own Parser for --reasoning-parser qwen3 --tool-call-parser templatestudio."""
    from vllm.parser.parser_manager import ParserManager

    qwen3 = tokenizers_by_vllm("Qwen/Qwen3-0.6B")
    parser_cls = ParserManager.get_parser(
        tool_parser_name="templatestudio", reasoning_parser_name="qwen3", enable_auto_tools=True,
        model_name="qwen3", tokenizer=qwen3,
    )
    return qwen3, parser_cls


def test_with_vllms_reasoning_parser_reasoning_is_split_and_the_call_read(qwen3_with_reasoning_parser):
    qwen3, parser_cls = qwen3_with_reasoning_parser
    request = chat_request()
    reasoning, content, calls = parser_cls(qwen3, request.tools).parse(QWEN3_REPLY, request, enable_auto_tools=True)
    assert reasoning == "\nThe get_exchange_rate tool answers this.\n" and not (content or "").strip()
    assert [(c.name, json.loads(c.arguments)) for c in calls] == EUR_JPY
    streamed = parser_cls(qwen3, request.tools)
    ids = qwen3(QWEN3_REPLY, add_special_tokens=False)["input_ids"]
    pieces, names, arguments = [], [], ""
    for index, token in enumerate(ids):
        delta = streamed.parse_delta(qwen3.decode([token]), [token], request, finished=index == len(ids) - 1)
        if delta is None:
            continue
        pieces.append(delta.reasoning or "")
        names += [d.function.name for d in delta.tool_calls if d.function and d.function.name]
        arguments += "".join(d.function.arguments for d in delta.tool_calls if d.function and d.function.arguments)
    assert "".join(pieces) == reasoning
    assert names == ["get_exchange_rate"] and json.loads(arguments) == EUR_JPY[0][1]


def test_with_a_reasoning_parser_we_read_exactly_what_it_leaves(qwen3_with_reasoning_parser):
    # vLLM's qwen3 reasoning parser ends the reasoning at the first <tool_call>, even one
    # rehearsed inside <think>: that call then reaches us as content, and is read as a call.
    qwen3, parser_cls = qwen3_with_reasoning_parser
    request = chat_request()
    parser = parser_cls(qwen3, request.tools)
    _, left = parser.extract_reasoning(REHEARSED, request)
    _, _, calls = parser.parse(REHEARSED, request, enable_auto_tools=True)
    read = read_tool_calls(left, FORMATS["hermes"], reasoning_open=False)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [(c.name, c.arguments) for c in read.calls]
    assert [c.name for c in calls] == ["nope", "get_exchange_rate"]


def test_without_a_reasoning_parser_thinking_stays_content_and_its_call_is_not_a_call(tokenizers_by_vllm):
    parser = without_reasoning_parser(tokenizers_by_vllm("Qwen/Qwen3-0.6B"))
    info = parser.extract_tool_calls(REHEARSED, chat_request())
    assert [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls] == EUR_JPY
    assert info.content == REHEARSED.split("</think>")[0] + "</think>\n\n"


def test_random_chunkings_of_a_long_reply_stay_equal(parser_maker):
    fmt, make = parser_maker
    # Formats whose call is the whole reply take their longest sample; the others all of them.
    texts = [sample.text for sample in fmt.samples]
    text = max(texts, key=len) if fmt.start_only else "\nThen: ".join(texts)
    rng = random.Random(15)
    for _ in range(5):
        cuts = sorted(rng.sample(range(len(text)), k=min(len(text) - 1, 40)))
        content, calls, _ = stream(make(), text, cuts)
        check_stream(answerer(make), fmt, text, content, calls)
