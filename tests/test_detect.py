"""detect_format, probe_template, parser_for and parse_tool_calls(fallback="auto").

Small inline templates exercise each path of the probe; the course's
tokenizers (from the Hugging Face cache) check it on published templates.
"""

from __future__ import annotations

import json

import pytest

from samples import FENCED_CALL, GEMMA4_CALL, QWEN3_CALL
from templatestudio.detect import (
    PROBE_ARGUMENTS,
    PROBE_NAME,
    ChatTemplate,
    NoToolCallFormat,
    ResponseTemplateParser,
    TemplateProbeError,
    detect_format,
    load_chat_templates,
    parser_for,
    probe_template,
)
from templatestudio.formats import FORMATS
from templatestudio.tools import HermesParser, ParsedToolCall, UnparsedToolCall, parse_tool_calls

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


def test_hermes_template_is_detected_and_the_turn_is_cut_at_its_end():
    probe = probe_template(mini_template(HERMES_CALL))
    assert probe.format is FORMATS["hermes"]
    assert probe.wire.startswith("<tool_call>") and probe.wire.endswith("</tool_call>")
    assert (probe.renders_tools, probe.call_survives, probe.shape) == (True, True, "no content")
    assert probe.text_values == ()
    assert probe.reason.startswith("hermes: ")


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


def test_a_template_without_tools_is_no_format():
    probe = probe_template(mini_template(HERMES_CALL, tools=False))
    assert (probe.format, probe.renders_tools, probe.reason) == (None, False, "renders no tools")


def test_a_template_that_drops_calls_is_no_format():
    probe = probe_template(mini_template(""))
    assert (probe.format, probe.renders_tools, probe.call_survives) == (None, True, False)
    assert probe.reason == "drops the assistant's tool call"


def test_a_template_needing_string_content_is_retried_with_it():
    probe = probe_template(mini_template(HERMES_CALL, checks=NEEDS_CONTENT))
    assert (probe.format, probe.shape) == (FORMATS["hermes"], "string content")


def test_a_template_needing_nine_character_ids_is_retried_with_them():
    probe = probe_template(mini_template(HERMES_CALL, checks=NEEDS_NINE_CHAR_IDS))
    assert (probe.format, probe.shape) == (FORMATS["hermes"], "string content, 9-char id")


def test_a_template_that_always_raises_reports_its_own_error():
    source = mini_template(HERMES_CALL, checks="{{ raise_exception('no tool calls here, ever') }}")
    probe = probe_template(source)
    assert probe.error == "TemplateError: no tool calls here, ever"
    assert probe.reason == "template error: TemplateError: no tool calls here, ever"
    with pytest.raises(TemplateProbeError) as caught:
        detect_format(source)
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

    return load_tokenizer("unsloth/Llama-3.1-8B-Instruct")


@pytest.mark.parametrize(
    ("family", "expected"),
    [("qwen3", "hermes"), ("gemma4", "gemma4"), ("llama3", None), ("gemma3", None)],
)
def test_detection_on_the_course_tokenizers(tokenizers, family, expected):
    found = detect_format(tokenizers[family])
    assert (found.name if found else None) == expected


def test_llama31_is_llama3_json(llama31):
    assert detect_format(llama31) is FORMATS["llama3-json"]
    assert probe_template(llama31).wire.startswith('{"name": "studio_probe_lookup", "parameters": ')


def test_a_tokenizer_and_its_hub_config_probe_the_same(tokenizers):
    for repo_id in ("Qwen/Qwen3-0.6B", "google/gemma-4-E2B-it"):
        family = "qwen3" if repo_id.startswith("Qwen") else "gemma4"
        by_tokenizer = probe_template(tokenizers[family])
        by_config = probe_template(ChatTemplate.from_hub(repo_id))
        assert (by_config.format, by_config.wire) == (by_tokenizer.format, by_tokenizer.wire)


def test_parser_for_prefers_the_response_template(gemma4):
    parser = parser_for(gemma4)
    assert isinstance(parser, ResponseTemplateParser)
    assert parser.parse(GEMMA4_CALL) == [ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})]


def test_parser_for_falls_back_to_the_detected_format(qwen3, llama31):
    assert parser_for(qwen3) is FORMATS["hermes"].parser
    assert parser_for(llama31) is FORMATS["llama3-json"].parser


def test_parser_for_names_the_model_when_there_is_no_format(tokenizers):
    with pytest.raises(NoToolCallFormat) as caught:
        parser_for(tokenizers["llama3"])
    assert str(caught.value) == (
        "NousResearch/Meta-Llama-3-8B-Instruct: no tool-call format found in its chat template "
        "(renders no tools) and it ships no response template"
    )


def test_parse_tool_calls_auto(qwen3, gemma4, tokenizers):
    from rates import QUESTION
    from templatestudio.render import render

    eur_jpy = [ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})]
    prompt = render(qwen3, QUESTION)
    assert parse_tool_calls(qwen3, QWEN3_CALL, prefix=prompt, fallback="auto") == eur_jpy
    # A strict parser is held to the marker check, which names what it saw and where.
    leak = (
        "^StrictHermesParser left a tool call unread: '```json' at offset 0 "
        "opens a call in the fenced-json format$"
    )
    with pytest.raises(UnparsedToolCall, match=leak):
        parse_tool_calls(qwen3, FENCED_CALL, prefix=prompt, fallback="auto")
    hermes = FORMATS["hermes"]
    with pytest.raises(UnparsedToolCall, match="^the hermes format left a tool call unread"):
        parse_tool_calls(qwen3, GEMMA4_CALL, prefix=prompt, fallback=hermes)
    mixed = QWEN3_CALL + "\n" + GEMMA4_CALL  # one call read, one left behind
    with pytest.raises(UnparsedToolCall, match="'<\\|tool_call>' at offset 101 opens a call in the gemma4"):
        parse_tool_calls(qwen3, mixed, prefix=prompt, fallback=hermes)
    gemma4_prompt = render(gemma4, QUESTION)
    assert parse_tool_calls(gemma4, GEMMA4_CALL, prefix=gemma4_prompt, fallback="auto") == eur_jpy
    with pytest.raises(NoToolCallFormat):
        parse_tool_calls(tokenizers["llama3"], QWEN3_CALL, prefix="", fallback="auto")


def test_explicit_fallbacks_behave_as_the_tutorial_teaches(qwen3):
    from rates import QUESTION
    from templatestudio.render import render

    prompt = render(qwen3, QUESTION)
    with pytest.raises(UnparsedToolCall, match="^HermesParser found no call in text that looks like one$"):
        parse_tool_calls(qwen3, FENCED_CALL, prefix=prompt, fallback=HermesParser())
    no_fallback = "^Qwen/Qwen3-0.6B ships no response template; pass a fallback parser$"
    with pytest.raises(ValueError, match=no_fallback):
        parse_tool_calls(qwen3, QWEN3_CALL, prefix=prompt)
