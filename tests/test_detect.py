"""Choosing a format: probe_template, detect_format and resolve_format.

Small inline templates exercise each path of the probe (every call shape
in ``CALL_SHAPES``, every reason a template has no format, two formats that
both read the probe back); the course's tokenizers from the Hugging Face
cache check it on published templates. ``detect_format`` and
``resolve_format`` probe in the sandbox by default (``deadline=
DEFAULT_DEADLINE``); ``probe_template`` runs in-process unless given a
deadline.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from samples import FENCED_CALL, GEMMA4_CALL, QWEN3_CALL
from templatestudio.calls import NoToolCallFormat, ParsedToolCall, UnparsedToolCall
from templatestudio.detect import AmbiguousFormat, detect_format, resolve_format
from templatestudio.families import COURSE_FAMILIES, LLAMA31
from templatestudio.formats import FORMATS, UnknownFormat
from templatestudio.probe import TemplateProbeError, _probe, _probe_sandboxed, probe_template
from templatestudio.probe_call import CALL_SHAPES, PROBE_ARGUMENTS, PROBE_NAME, CallShape, Content
from templatestudio.reader import read_tool_calls
from templatestudio.sandbox import DEFAULT_DEADLINE
from templatestudio.templates import ChatTemplate, load_chat_templates
from templatestudio.template_errors import advice_for

EUR_JPY = [ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})]

HERMES_CALL = (
    '<tool_call>{"name": "{{ call.function.name }}", '
    '"arguments": {{ call.function.arguments | tojson }}}</tool_call>'
)
LLAMA3_CALL = (
    '{"name": "{{ call.function.name }}", "parameters": {{ call.function.arguments | tojson }}}'
)
# Every value written as its Python text, inside a JSON string.
STRINGIFIED_CALL = (
    '<tool_call>{"name": "{{ call.function.name }}", "arguments": {{ "{" }}'
    "{% for key, value in call.function.arguments.items() %}"
    '"{{ key }}": {{ (value | string) | tojson }}{% if not loop.last %}, {% endif %}'
    '{% endfor %}{{ "}" }}}</tool_call>'
)
FIRST_ARGUMENT_ONLY = (
    '<tool_call>{"name": "{{ call.function.name }}", "arguments": {"note": '
    '{{ call.function.arguments.note | tojson }}}}</tool_call>'
)
UNREAD_GRAMMAR = "<<CALL {{ call.function.name }} {{ call.function.arguments | tojson }}>>"


def mini_template(
    call_block: str,
    *,
    tools: bool = True,
    end: str = "<|end|>",
    generation_prompt: str = "<|assistant|>",
    checks: str = "",
) -> str:
    """A tiny chat template: tools listed first, one line per turn."""
    tools_part = (
        "{%- if tools %}<|tools|>{% for tool in tools %}{{ tool.function.name }} {% endfor %}"
        + end
        + "{% endif -%}"
        if tools
        else ""
    )
    return (
        tools_part
        + "{%- for message in messages -%}<|{{ message.role }}|>"
        + "{%- if message.tool_calls -%}"
        + checks
        + "{%- for call in message.tool_calls -%}"
        + call_block
        + "{%- endfor -%}"
        + "{%- else -%}{{ message.content }}{%- endif -%}"
        + end
        + "{%- endfor -%}"
        + "{%- if add_generation_prompt %}"
        + generation_prompt
        + "{% endif -%}"
    )


NEEDS_CONTENT = (
    "{%- if message.content is not defined -%}"
    "{{ raise_exception('an assistant turn needs string content') }}{%- endif -%}"
)
NEEDS_NINE_CHAR_IDS = (
    "{%- for call in message.tool_calls -%}{%- if call.id is not defined or call.id | length != 9 -%}"
    "{{ raise_exception('Tool call IDs should be alphanumeric strings with length 9!') }}"
    "{%- endif -%}{%- endfor -%}"
)


def test_the_probe_call_is_distinctive_and_typed():
    assert PROBE_NAME.isidentifier()
    kinds = {type(value) for value in PROBE_ARGUMENTS.values()}
    assert kinds == {str, int, float, bool, type(None), list, dict}
    assert " " in PROBE_ARGUMENTS["note"]


NO_CONTENT = CallShape(string_arguments=False, content=Content.ABSENT)


def test_call_shapes_cover_every_combination_once():
    assert len(set(CALL_SHAPES)) == len(CALL_SHAPES) == 2 * 3 * 2
    assert CALL_SHAPES[0] == NO_CONTENT
    written = {Content.EMPTY: "", Content.NONE: None}
    for shape in CALL_SHAPES:
        message = shape.message()
        (call,) = message["tool_calls"]
        assert isinstance(call["function"]["arguments"], str) == shape.string_arguments
        arguments = call["function"]["arguments"]
        assert (json.loads(arguments) if shape.string_arguments else arguments) == PROBE_ARGUMENTS
        assert len(call.get("id", "")) == (shape.id_length or 0), (shape, call)
        assert shape.id_length in (None, 9)
        if shape.content is Content.ABSENT:
            assert "content" not in message
        else:
            assert message["content"] == written[shape.content]  # "" and None differ under ==


def test_a_call_shape_is_a_typed_value_that_prints_the_old_label():
    labels = [str(shape) for shape in CALL_SHAPES]
    assert labels[:3] == ["dict arguments, no content", "dict arguments, no content, 9-char id", "dict arguments, empty content"]
    assert labels[-1] == "string arguments, content None, 9-char id"
    assert len(set(labels)) == len(labels)
    assert CallShape(True, Content.NONE, 9).message() == CallShape(True, Content.NONE, 9).message()
    assert CallShape(True, Content.NONE, 9).message() is not CallShape(True, Content.NONE, 9).message()
    with pytest.raises(dataclasses.FrozenInstanceError):
        NO_CONTENT.id_length = 9


def test_hermes_template_is_detected_and_the_turn_is_cut_at_its_end():
    probe = probe_template(mini_template(HERMES_CALL))
    assert probe.format is FORMATS["hermes"]
    assert probe.wire.startswith("<tool_call>") and probe.wire.endswith("</tool_call>")
    assert (probe.renders_tools, probe.call_survives, probe.shape) == (True, True, NO_CONTENT)
    assert probe.text_values == () and probe.ambiguous == ()
    assert probe.reason == f"hermes: {FORMATS['hermes'].description}"


def test_a_whole_reply_format_is_cut_at_the_eos_token():
    source = mini_template(LLAMA3_CALL, end="{{ eos_token }}")
    template = ChatTemplate("llama-ish", source, (("bos_token", ""), ("eos_token", "<|eot|>")))
    probe = probe_template(template)
    assert probe.format is FORMATS["llama3-json"]
    assert probe.wire == json.dumps({"name": PROBE_NAME, "parameters": PROBE_ARGUMENTS})


def test_values_written_as_text_still_read_back_and_are_listed():
    probe = probe_template(mini_template(STRINGIFIED_CALL))
    assert probe.format is FORMATS["hermes"]
    assert probe.text_values == ("count", "ratio", "enabled", "missing", "tags", "nested")


def test_a_call_that_loses_arguments_is_no_format():
    probe = probe_template(mini_template(FIRST_ARGUMENT_ONLY))
    assert (probe.format, probe.call_survives) == (None, True)
    assert probe.reason == "writes the call in a grammar no registered parser reads"


def test_an_unknown_grammar_is_no_format():
    probe = probe_template(mini_template(UNREAD_GRAMMAR))
    assert probe.format is None and probe.call_survives
    assert detect_format(mini_template(UNREAD_GRAMMAR)) is None
    with pytest.raises(NoToolCallFormat, match=r"^template: no tool-call format found in its chat template "
                       r"\(writes the call in a grammar no registered parser reads; none derived: the arguments' "
                       r"object follows the name after ' ': no one closing literal\)$"):
        resolve_format(mini_template(UNREAD_GRAMMAR))


def test_a_template_without_tools_still_has_the_format_its_calls_are_written_in():
    # DeepSeek V3 and V3.1 list no tools (they go in a system message) but write calls.
    probe = probe_template(mini_template(HERMES_CALL, tools=False))
    assert (probe.format, probe.renders_tools, probe.call_survives) == (FORMATS["hermes"], False, True)
    assert probe.reason == (f"hermes: {FORMATS['hermes'].description}; the template lists no tools "
                            "(describe them in a system message)")
    assert probe_template(mini_template("", tools=False)).reason == "renders no tools"


def test_a_template_that_drops_calls_is_no_format():
    probe = probe_template(mini_template(""))
    assert (probe.format, probe.renders_tools, probe.call_survives) == (None, True, False)
    assert probe.reason == "drops the assistant's tool call"


def test_a_template_needing_string_content_is_retried_with_it():
    probe = probe_template(mini_template(HERMES_CALL, checks=NEEDS_CONTENT))
    assert (probe.format, probe.shape) == (FORMATS["hermes"], CallShape(False, Content.EMPTY))


def test_a_template_needing_nine_character_ids_is_retried_with_them():
    probe = probe_template(mini_template(HERMES_CALL, checks=NEEDS_NINE_CHAR_IDS))
    assert (probe.format, probe.shape) == (FORMATS["hermes"], CallShape(False, Content.ABSENT, id_length=9))


def test_a_template_needing_string_arguments_is_retried_with_them():
    # DeepSeek V3's habit: the call is written only when arguments are a JSON string.
    as_string = HERMES_CALL.replace("{{ call.function.arguments | tojson }}", "{{ call.function.arguments }}")
    checks = "{%- if message.tool_calls[0].function.arguments is not string -%}{{ raise_exception('want a string') }}{%- endif -%}"
    probe = probe_template(mini_template(as_string, checks=checks))
    assert (probe.format, probe.shape) == (FORMATS["hermes"], CallShape(True, Content.ABSENT))


def test_a_template_that_always_raises_reports_its_own_error():
    source = mini_template(HERMES_CALL, checks="{{ raise_exception('no tool calls here, ever') }}")
    probe = probe_template(source)
    assert probe.error == "TemplateError: no tool calls here, ever"
    assert probe.reason == f"template error: TemplateError: no tool calls here, ever — {advice_for(probe.errors)}"
    for deadline in (None, DEFAULT_DEADLINE):  # in-process and sandboxed say the same
        with pytest.raises(TemplateProbeError) as caught:
            detect_format(source, deadline=deadline)
        assert str(caught.value) == (
            "template: the template cannot render the probe conversation: "
            "TemplateError: no tool calls here, ever"
        )
        assert caught.value.template_error == "TemplateError: no tool calls here, ever"


def test_different_errors_per_shape_are_all_reported():
    checks = NEEDS_CONTENT + "{{ raise_exception('and it refuses anyway') }}"
    probe = probe_template(mini_template(HERMES_CALL, checks=checks))
    assert probe.error == (
        "TemplateError: an assistant turn needs string content / TemplateError: and it refuses anyway"
    )


def test_a_generation_prompt_that_pre_writes_a_block_is_cut_before_the_call():
    # The prompt opens an empty reasoning channel that history turns do not have.
    source = mini_template(HERMES_CALL, generation_prompt="<|assistant|><|think|><think|>")
    probe = probe_template(source)
    assert probe.format is FORMATS["hermes"]
    assert probe.wire.startswith("<tool_call>")


def test_probes_are_cached_per_template():
    template = ChatTemplate("cached", mini_template(HERMES_CALL))
    assert probe_template(template) is probe_template(ChatTemplate("cached", template.source))


def test_detect_format_rejects_other_inputs():
    with pytest.raises(TypeError, match="expected a template source str, a ChatTemplate or a tokenizer"):
        detect_format(42)


def test_detect_format_probes_in_the_sandbox_by_default():
    template = ChatTemplate("sandboxed-by-default", mini_template(HERMES_CALL))
    _probe.cache_clear()
    _probe_sandboxed.cache_clear()
    assert detect_format(template) is FORMATS["hermes"]  # the registry's object, not an unpickled copy
    assert _probe.cache_info().currsize == 0  # nothing was probed in this process
    assert _probe_sandboxed.cache_info().currsize == 1
    assert detect_format(template, deadline=None) is FORMATS["hermes"]
    assert _probe.cache_info().currsize == 1  # the documented in-process path


# --- two formats that read the same call ---------------------------------------------------------


@pytest.fixture
def duplicate_hermes(monkeypatch):
    """A second registered format that reads exactly what hermes reads."""
    twin = dataclasses.replace(FORMATS["hermes"], name="hermes-twin")
    monkeypatch.setitem(FORMATS, twin.name, twin)
    _probe.cache_clear()
    _probe_sandboxed.cache_clear()
    yield twin
    _probe.cache_clear()  # no probe made against the doubled registry outlives it
    _probe_sandboxed.cache_clear()


def test_two_formats_reading_the_probe_back_are_ambiguous_never_none(duplicate_hermes):
    source = mini_template(HERMES_CALL)
    probe = probe_template(source)
    assert probe.format is None and probe.ambiguous == ("hermes", "hermes-twin")
    assert probe.reason == "ambiguous: the probe call is read back by hermes, hermes-twin"
    message = (
        "^template: ambiguous: the probe call is read back by hermes, hermes-twin; name the format explicitly$"
    )
    for deadline in (None, DEFAULT_DEADLINE):  # the child inherits the doubled registry through fork
        with pytest.raises(AmbiguousFormat, match=message):
            detect_format(source, deadline=deadline)
    with pytest.raises(AmbiguousFormat, match=message):
        resolve_format(source)
    assert issubclass(AmbiguousFormat, NoToolCallFormat)  # callers catching "no format" still catch it
    # Naming the format is the way out.
    assert resolve_format("hermes-twin") is duplicate_hermes


# --- resolve_format ------------------------------------------------------------------------------


def test_resolve_format_takes_formats_names_and_templates():
    hermes = FORMATS["hermes"]
    assert resolve_format(hermes) is hermes
    assert all(resolve_format(name) is fmt for name, fmt in FORMATS.items())
    assert resolve_format(mini_template(HERMES_CALL)) is hermes
    assert resolve_format(ChatTemplate("t", mini_template(HERMES_CALL))) is hermes


def test_resolve_format_lists_the_known_names_for_an_unknown_one():
    known = ", ".join(FORMATS)
    with pytest.raises(UnknownFormat, match=f"^unknown tool-call format 'hermes3'; known formats: {known}$"):
        resolve_format("hermes3")


def test_a_format_is_resolved_once_above_the_stream_and_never_per_served_reply(monkeypatch, qwen3):
    import templatestudio.reader
    from templatestudio.integrations import served

    hermes = FORMATS["hermes"]
    detected = served.detect_served_format(qwen3)  # start-up: the one probe
    assert detected.format is hermes and detected.call_shape == NO_CONTENT

    def resolve(*args, **kwargs):
        raise AssertionError("a served reply resolved its format again")

    monkeypatch.setattr(templatestudio.reader, "resolve_format", resolve)
    text = "Sure, checking. " + hermes.samples[0].text
    content, calls = served.read_reply(text, detected.format)
    # The space touching the call is the template's layout; the prose's own space is kept.
    # The plugin's content is the reply's own text minus its calls (no layout taken out).
    assert content == "Sure, checking. " and [call.name for call, _ in calls] == [hermes.samples[0].calls[0].name]
    stream = served.ReplyStream(detected.format)
    pieces = [stream.feed(character) for character in text] + [stream.close()]
    assert "".join(piece for piece, _ in pieces) == content
    # Whole calls are (call, id) pairs; the pieces of a call still being written are ArgumentsDelta.
    assert [item[0] for _, got in pieces for item in got if isinstance(item, tuple)] == [call for call, _ in calls]
    # A name or a tokenizer does go through the reader's one resolution.
    with pytest.raises(AssertionError, match="resolved its format again"):
        read_tool_calls(text, qwen3)


# --- loading templates -----------------------------------------------------------------------


def test_from_config_prefers_the_tool_use_template_and_reads_added_tokens():
    config = {
        "chat_template": [
            {"name": "default", "template": mini_template(HERMES_CALL, tools=False)},
            {"name": "tool_use", "template": mini_template(HERMES_CALL)},
        ],
        "eos_token": {"content": "<|end|>", "special": True},
        "bos_token": "<s>",
    }
    template = ChatTemplate.from_config("two-templates", config)
    assert template.source == mini_template(HERMES_CALL)
    assert dict(template.special_tokens) == {"bos_token": "<s>", "eos_token": "<|end|>"}
    assert detect_format(template) is FORMATS["hermes"]


def test_from_config_without_a_template_says_so():
    with pytest.raises(NoToolCallFormat, match="^bare: no chat template in its tokenizer config$"):
        ChatTemplate.from_config("bare", {"eos_token": "</s>"})


def test_load_chat_templates_reads_files_model_folders_and_template_folders(tmp_path):
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|end|>"}))
    (model / "chat_template.jinja").write_text(mini_template(HERMES_CALL))
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "b_plain.jinja").write_text(mini_template(HERMES_CALL, tools=False))
    (templates / "a_hermes.jinja").write_text(mini_template(HERMES_CALL))

    (from_folder,) = load_chat_templates(model)
    assert from_folder.name == "my-model" and ("eos_token", "<|end|>") in from_folder.special_tokens
    (from_config_file,) = load_chat_templates(model / "tokenizer_config.json")
    assert from_config_file == from_folder
    assert [t.name for t in load_chat_templates(templates)] == ["a_hermes", "b_plain"]
    (single,) = load_chat_templates(templates / "a_hermes.jinja")
    assert single.name == "a_hermes" and single.special_tokens == (("bos_token", ""), ("eos_token", ""))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no tokenizer_config.json or .jinja files"):
        load_chat_templates(empty)


def test_hub_templates_read_only_the_config():
    template = ChatTemplate.from_hub("Qwen/Qwen3-0.6B")
    assert template.name == "Qwen/Qwen3-0.6B" and len(template.source) == 4168
    assert dict(template.special_tokens)["eos_token"] == "<|im_end|>"


# --- the course's tokenizers ----------------------------------------------------------------


@pytest.fixture(scope="module")
def llama31():
    from templatestudio.render import load_tokenizer

    return load_tokenizer(LLAMA31)


@pytest.mark.parametrize("declared", COURSE_FAMILIES, ids=[declared.name for declared in COURSE_FAMILIES])
def test_detection_on_the_course_tokenizers(declared):
    from templatestudio.render import load_tokenizer

    tokenizer = load_tokenizer(declared.repo_id)
    found = detect_format(tokenizer)  # sandboxed, the default
    assert (found.name if found else None) == declared.call_format
    probe = probe_template(tokenizer)
    assert probe.format is found
    assert (probe.renders_tools, probe.call_survives) == (declared.renders_tools, declared.call_survives)
    if declared.call_format is None:  # Llama 3 and Gemma 3 list no tools at all
        assert probe.reason == "renders no tools"
    else:
        assert probe.shape == NO_CONTENT and probe.text_values == ()


def test_qwen3_writes_an_empty_thinking_block_before_the_call(qwen3):
    probe = probe_template(qwen3)
    assert probe.wire.startswith("<think>\n\n</think>\n\n<tool_call>\n")


def test_llama31_is_llama3_json(llama31):
    assert detect_format(llama31) is FORMATS["llama3-json"]
    assert resolve_format(llama31) is FORMATS["llama3-json"]
    assert probe_template(llama31).wire.startswith('{"name": "studio_probe_lookup", "parameters": ')


def test_a_tokenizer_and_its_hub_config_probe_the_same(tokenizers, llama31):
    for repo_id, tokenizer in (
        ("Qwen/Qwen3-0.6B", tokenizers["qwen3"]),
        ("google/gemma-4-E2B-it", tokenizers["gemma4"]),
        (LLAMA31, llama31),
    ):
        by_tokenizer = probe_template(tokenizer)
        by_config = probe_template(ChatTemplate.from_hub(repo_id))
        assert (by_config.format, by_config.wire) == (by_tokenizer.format, by_tokenizer.wire)


@pytest.mark.parametrize("family", ["llama3", "gemma3"])
def test_resolve_format_names_the_model_when_there_is_no_format(tokenizers, family):
    tokenizer = tokenizers[family]
    with pytest.raises(NoToolCallFormat) as caught:
        resolve_format(tokenizer)
    assert str(caught.value) == (
        f"{tokenizer.name_or_path}: no tool-call format found in its chat template (renders no tools)"
    )


def test_the_reader_reads_with_the_detected_format(qwen3, gemma4, tokenizers):
    assert read_tool_calls(QWEN3_CALL, qwen3).calls == EUR_JPY
    assert read_tool_calls(QWEN3_CALL, qwen3).format is FORMATS["hermes"]
    leak = "^the hermes format left a tool call unread: '```json' at offset 0 opens a call in the fenced-json format$"
    with pytest.raises(UnparsedToolCall, match=leak):
        read_tool_calls(FENCED_CALL, qwen3)
    mixed = QWEN3_CALL + "\n" + GEMMA4_CALL  # one call read, one left behind
    with pytest.raises(UnparsedToolCall, match=r"'<\|tool_call>' at offset 101 opens a call in the gemma4"):
        read_tool_calls(mixed, qwen3)
    # Gemma 4 ships a response template: it reads, and the detected format checks it.
    assert read_tool_calls(GEMMA4_CALL, gemma4).calls == EUR_JPY
    with pytest.raises(NoToolCallFormat, match="renders no tools"):
        read_tool_calls(QWEN3_CALL, tokenizers["llama3"])
