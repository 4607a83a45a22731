"""GLM, gpt-oss (harmony), MiniMax M2, Seed-OSS, Command R7B and Granite 3: what their readers promise.

The registry tests (tests/test_registry.py, tests/test_reading_properties.py)
hold these formats to every rule; this file checks what is particular to
them: each published template probes as its format and its wire is read by
that format alone, each response template reads the format's samples to the
calls the reader reads (through transformers' ``parse_response``), the
formats that share a literal (``<tool_call>`` with Hermes and Qwen3-Coder,
``<function=`` with Qwen3-Coder) refuse each other's calls, and the framing
and reasoning of harmony and Command R7B come back as content and reasoning.
"""

from __future__ import annotations

import contextlib
import io

import pytest
from transformers.utils.chat_parsing.response_parser import parse_response

from corpus_guard import require_corpus

from templatestudio import corpus
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import TextDelta, ToolCallEvent
from templatestudio.formats import FORMATS
from templatestudio.probe import PROBE_NAME, PROBE_QUESTION, PROBE_TOOL, probe_template
from templatestudio.reader import read_tool_calls
from templatestudio.templates import ChatTemplate
from oracle import same_json  # the tests' own comparison, not the package's
from format_relations import covers  # a format whose declaration reads another's calls (Llama 3 reads Phi-4-mini's)

NAMES = ("glm-xml", "harmony", "minimax-xml", "seed-oss", "command-r7b", "granite")
TEMPLATES = {
    "glm4moe": "glm-xml",
    "GLM-4.7-Flash": "glm-xml",
    "openai-gpt-oss-120b": "harmony",
    "MiniMax-M2": "minimax-xml",
    "ByteDance-Seed-OSS": "seed-oss",
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": "command-r7b",
    "tool_chat_template_granite": "granite",
}
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})


def calls(text: str, name: str, **options) -> list[ParsedToolCall]:
    return [e.call for e in read_events(text, FORMATS[name], **options) if isinstance(e, ToolCallEvent)]


def same(left: list[ParsedToolCall], right: list[ParsedToolCall]) -> bool:
    return len(left) == len(right) and all(
        a.name == b.name and same_json(a.arguments, b.arguments) for a, b in zip(left, right)
    )


# --- detection ------------------------------------------------------------------------------


@pytest.mark.parametrize("template_name", sorted(TEMPLATES))
def test_each_published_template_probes_as_its_format_and_only_that_format_reads_it(template_name):
    require_corpus()
    template = ChatTemplate.from_file(corpus.corpus_dir() / "templates" / f"{template_name}.jinja")
    probe = probe_template(template)
    assert probe.format is FORMATS[TEMPLATES[template_name]], probe.reason
    assert TEMPLATES[template_name] in {fmt for label, fmt in corpus.LABEL_FORMATS.items()
                                        if label == corpus.load_labels()[template_name]["format"]}
    for other in FORMATS.values():
        if other is not probe.format:
            with pytest.raises(UnparsedToolCall):
                read_events(probe.wire, other)


def test_text_valued_formats_say_which_probe_values_came_back_as_text():
    require_corpus()
    for template_name in ("glm4moe", "GLM-4.7-Flash", "MiniMax-M2", "ByteDance-Seed-OSS"):
        template = ChatTemplate.from_file(corpus.corpus_dir() / "templates" / f"{template_name}.jinja")
        probe = probe_template(template)
        assert probe.format.string_arguments
        # Every value but the string is written as text (JSON, or Python's spelling for Seed-OSS).
        assert set(probe.text_values) == {"count", "ratio", "enabled", "missing", "tags", "nested"}, template_name


# --- response templates read what the readers read -----------------------------------------------


RESPONSE_CASES = [(name, index) for name in NAMES for index, sample in enumerate(FORMATS[name].samples) if sample.calls]
# Samples the reader reads and the response template's language cannot (each module's docstring says why).
RESPONSE_GAPS = {("granite", 2): "text after the list: the JSON region runs to <|end_of_text|>"}


def shipped_calls(text: str, template: dict) -> list[ParsedToolCall]:
    with contextlib.redirect_stdout(io.StringIO()):  # transformers prints what it could not parse
        message = parse_response(text, template, prefix="")
    return [ParsedToolCall(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls", [])]


@pytest.mark.parametrize(("name", "index"), RESPONSE_CASES, ids=[f"{n}-{i}" for n, i in RESPONSE_CASES])
def test_the_response_template_reads_each_sample_as_the_reader_does(name, index):
    fmt = FORMATS[name]
    sample = fmt.samples[index]
    if (name, index) in RESPONSE_GAPS:
        # A declared gap must still be one: the day the template reads it, drop it from the list.
        try:
            assert not same(shipped_calls(sample.text, fmt.response_template), calls(sample.text, name))
        except ValueError:
            pass
        return
    assert same(shipped_calls(sample.text, fmt.response_template), calls(sample.text, name)), sample.text


@pytest.mark.parametrize("template_name", sorted(TEMPLATES))
def test_the_response_template_reads_each_published_templates_call_with_its_prompt(template_name):
    """The reply as the model writes it after the real prompt: read by both, the same calls, values as written."""
    require_corpus()
    template = ChatTemplate.from_file(corpus.corpus_dir() / "templates" / f"{template_name}.jinja")
    fmt = FORMATS[TEMPLATES[template_name]]
    prompt = template.render([PROBE_QUESTION], tools=[PROBE_TOOL], add_generation_prompt=True)
    reply = probe_template(template).wire
    if fmt.reasoning_opened_by(prompt) and fmt.reasoning[1] not in reply:
        reply = "Thinking." + fmt.reasoning[1] + reply  # the history turn drops the block the prompt opened
    read = read_tool_calls(reply, fmt, prefix=prompt)
    with contextlib.redirect_stdout(io.StringIO()):
        message = parse_response(reply, fmt.response_template, prefix=prompt)
    shipped = [ParsedToolCall(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls", [])]
    assert same(shipped, read.calls) and [call.name for call in read.calls] == [PROBE_NAME], (reply, message)


def test_response_templates_split_reasoning_and_content_like_the_reader():
    harmony = FORMATS["harmony"]
    # reasoning, then a final answer
    text = [sample.text for sample in harmony.samples if sample.text.endswith("The rate is 160.<|return|>")][-1]
    message = parse_response(text, harmony.response_template, prefix="")
    reply = read_tool_calls(text, "harmony")
    assert (message["thinking"], message["content"]) == (reply.reasoning, reply.content) == (
        "The user wants a rate.", "The rate is 160.")
    r7b = FORMATS["command-r7b"]
    text = "<|START_THINKING|>Plan.<|END_THINKING|><|START_RESPONSE|>Hi.<|END_RESPONSE|>"
    message = parse_response(text, r7b.response_template, prefix="")
    reply = read_tool_calls(text, "command-r7b")
    assert (message["thinking"], message["content"]) == (reply.reasoning, reply.content) == ("Plan.", "Hi.")


def test_minimax_response_template_keeps_the_text_around_the_block_and_drops_its_tags():
    fmt = FORMATS["minimax-xml"]
    text = fmt.samples[3].text + "\nDone."
    message = parse_response(text, fmt.response_template, prefix="")
    reply = read_tool_calls(text, fmt)
    # The newlines on either side of the block are layout: the reader now
    # drops them as the response template does; the prose's own space stays.
    assert message["content"] == reply.content == "Let me check.Done."
    assert [type(event) for event in reply.events] == [TextDelta, ToolCallEvent, TextDelta]
    assert (reply.events[0].text, reply.events[-1].text) == ("Let me check.", "Done.")


# --- shared literals: each reader refuses the others' calls ------------------------------------------


def _sharing() -> dict[str, list[str]]:
    """Each format that opens with a literal another format also opens with -> those other formats."""
    by_literal: dict[str, set[str]] = {}
    for name, fmt in FORMATS.items():
        for marker in fmt.markers:
            by_literal.setdefault(marker, set()).add(name)
    others: dict[str, set[str]] = {}
    for names in by_literal.values():
        for name in names:
            if len(names) > 1:
                others.setdefault(name, set()).update(names - {name})
    return {name: sorted(rest) for name, rest in sorted(others.items())}


SHARING = _sharing()
SHARED_CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR"})


def test_the_formats_known_to_share_a_literal_are_among_those_found():
    # The search above must find at least the pairs the module docstring names.
    assert {"glm-xml", "qwen-xml"} <= set(SHARING["hermes"])
    assert "functionary-v3.1" in SHARING["qwen-xml"]


@pytest.mark.parametrize("writer", sorted(SHARING))
def test_formats_sharing_a_literal_read_their_own_calls_and_refuse_the_others(writer):
    text = FORMATS[writer].write_call(SHARED_CALL)
    assert same(calls(text, writer), [SHARED_CALL])
    for reader in SHARING[writer]:
        if covers(FORMATS[reader], FORMATS[writer]):  # the wider reader reads the same call
            assert same(calls(text, reader), [SHARED_CALL]), reader
            continue
        with pytest.raises(UnparsedToolCall, match=f"opens a call in the {writer} format$"):
            read_events(text, FORMATS[reader])


def test_qwen_xml_bare_function_and_seed_blocks_refuse_each_other():
    bare = "<function=ping>\n<parameter=n>\n1\n</parameter>\n</function>"
    assert calls(bare, "qwen-xml") == [ParsedToolCall("ping", {"n": "1"})]
    with pytest.raises(UnparsedToolCall, match="opens a call in the qwen-xml format$"):
        read_events(bare, FORMATS["seed-oss"])
    # Inside a Seed block the bare <function= is not looked for: one call, not two.
    seed = FORMATS["seed-oss"].write_call(SHARED_CALL)
    assert "<function=" in seed
    assert len(calls(seed, "seed-oss")) == 1


# --- reasoning, framing and ids -----------------------------------------------------------------------


def test_harmony_reads_reasoning_preamble_and_final_answer():
    text = ("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>commentary<|message|>"
            "Checking.<|end|><|start|>assistant<|channel|>commentary to=functions.get_exchange_rate "
            '<|constrain|>json<|message|>{"base": "EUR", "quote": "JPY"}<|call|>')
    reply = read_tool_calls(text, "harmony")
    assert (reply.reasoning, reply.content) == ("Think.", "Checking.")
    assert same(reply.calls, [CALL])
    final = read_tool_calls("<|channel|>final<|message|>160 yen.<|return|>", "harmony")
    assert (final.calls, final.content, final.reasoning) == ([], "160 yen.", "")


def test_harmony_analysis_after_a_preamble_stays_text_as_documented():
    # The engine reads reasoning only at the start of the reply: a later
    # analysis message is shown, header and all (harmony's docstring says so).
    text = ("<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant<|channel|>analysis<|message|>"
            "Later thought.<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>")
    reply = read_tool_calls(text, "harmony")
    assert reply.reasoning == ""
    assert reply.content == "Checking.<|channel|>analysis<|message|>Later thought.Done."


@pytest.mark.parametrize(("text", "reason"), [
    ('<|channel|>commentary to=browser.search <|constrain|>json<|message|>{"q": "x"}<|call|>',
     "the recipient 'browser.search' is not a function"),
    ("<|channel|>commentary to=functions.f code<|message|>{}<|call|>", "content type 'code' after 'functions.f' is not json"),
    ("<|channel|>commentary to=functions.f json<|message|>[1]<|call|>", "the arguments of 'f' must be a JSON object"),
    ("<|channel|>final to=functions.f json<|message|>{}<|call|>", "a call on the 'final' channel"),
])
def test_harmony_refusals_name_the_reason(text, reason):
    with pytest.raises(UnparsedToolCall, match=reason.replace("(", r"\(").replace(".", r"\.")):
        read_events(text, FORMATS["harmony"])


def test_minimax_reads_after_its_open_think_prompt():
    reply_text = "The user wants a rate.\n</think>\n\n" + FORMATS["minimax-xml"].samples[0].text.lstrip()
    reply = read_tool_calls(reply_text, "minimax-xml", prefix="]~b]user\nRate?[e~[\n]~b]ai\n<think>\n")
    assert reply.reasoning == "The user wants a rate."  # the newline before </think> is layout
    assert same(reply.calls, [CALL])


def test_command_r7b_returns_its_ids_and_drops_its_response_framing():
    fmt = FORMATS["command-r7b"]
    reply = read_tool_calls(fmt.samples[2].text, fmt)
    assert reply.ids == ["0", "1"]
    assert read_tool_calls("<|START_RESPONSE|>Hello.<|END_RESPONSE|>", fmt).content == "Hello."
    # Another reader shows the framing as text: it is no call.
    assert read_tool_calls("<|START_RESPONSE|>Hello.<|END_RESPONSE|>", "hermes").content == (
        "<|START_RESPONSE|>Hello.<|END_RESPONSE|>")


@pytest.mark.parametrize(("name", "text", "reason"), [
    ("glm-xml", "<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value><arg_key>x</arg_key><arg_value>2</arg_value>"
     "</tool_call>", "the key 'x' is given twice"),
    ("minimax-xml", '<minimax:tool_call><invoke name="a"></invoke>x</minimax:tool_call>',
     "expected another invoke or </minimax:tool_call>"),
    ("seed-oss", "<seed:tool_call><function=a></function><function=b></function></seed:tool_call>",
     "one function per block"),
    ("command-r7b", '<|START_ACTION|>{"tool_name": "a", "parameters": {}}<|END_ACTION|>',
     "must hold a JSON list of calls, not a dict"),
    ("granite", "<|tool_call|>[]", "an empty list of calls"),
])
def test_refusals_say_why(name, text, reason):
    with pytest.raises(UnparsedToolCall, match=reason):
        read_events(text, FORMATS[name])
