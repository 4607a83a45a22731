"""The server's --chat-template override is the template the plugin probes (issue 24 item 5).

vLLM hands a parser the tokenizer, never the override; ``vllm_template``
reads it from the command line (or ``TEMPLATESTUDIO_CHAT_TEMPLATE``) and
resolves it with vLLM's own ``load_chat_template``. The real server with an
override is in ``test_server_grammar.py``.
"""

from __future__ import annotations

import json
import logging
import random

import pytest
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.exceptions import VLLMValidationError

from templatestudio.calls import ParsedToolCall
from templatestudio.formats import FORMATS
from templatestudio.integrations.vllm import TemplateStudioToolParser, named_parser
from templatestudio.integrations.vllm_reasoning import TemplateStudioReasoningParser
from templatestudio.integrations.vllm_template import (
    CHAT_TEMPLATE_VARIABLE,
    ServedTemplateConflict,
    served_template,
    served_tokenizer,
)
from test_plugin_inprocess import NO_CORPUS_TEMPLATE, template_writing

# Formats a corpus template writes (the others are served by name only).
WITH_TEMPLATE = sorted(name for name in FORMATS if name not in NO_CORPUS_TEMPLATE)
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
# Flags a vLLM command line holds around the override, some spelled like it.
NOISE = [["--model", "m"], ["--chat-template-content-format", "string"], ["--tool-call-parser", "templatestudio"],
         ["--enable-auto-tool-choice"], ["--trust-request-chat-template"], ["--port", "8000"],
         ["--default-chat-template-kwargs", '{"enable_thinking": false}']]


def _request(template=None) -> ChatCompletionRequest:
    extra = {"chat_template": template} if template is not None else {}
    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Paris?"}], tools=TOOLS, **extra)


def _written(name: str) -> str:
    return FORMATS[name].wire.write_call(ParsedToolCall("get_weather", {"city": "Paris"}))


def _file(tmp_path, name: str):
    path = tmp_path / f"{name}.jinja"
    path.write_text(template_writing(FORMATS[name]).chat_template, encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", range(40))
def test_the_last_override_is_found_however_the_command_line_spells_it(seed, tmp_path):
    rng = random.Random(seed)
    values = []
    for index in range(rng.randint(1, 3)):
        path = tmp_path / f"t{index}.jinja"
        path.write_text(f"{{{{ 'template {index}' }}}}", encoding="utf-8")
        values.append(str(path))
    argv = []
    for value in values:
        argv += rng.choice(NOISE)
        flag = rng.choice(["--chat-template", "--chat_template"])
        argv += [f"{flag}={value}"] if rng.random() < 0.5 else [flag, value]
    argv += rng.choice(NOISE)
    found = served_template(argv, {})
    assert found is not None and found.text == f"{{{{ 'template {len(values) - 1}' }}}}"
    assert "--chat-template" in found.where and values[-1][-20:] in found.where


def test_no_override_anywhere_is_none_and_leaves_the_tokenizer_alone():
    hermes = template_writing(FORMATS["hermes"])
    assert served_template(["--model", "m", "--chat-template-content-format", "openai"], {}) is None
    assert served_tokenizer(hermes, ["--model", "m"], {}) is hermes


def test_a_template_written_on_the_command_line_itself_is_taken_as_vllm_takes_it():
    literal = "{% for m in messages %}{{ m.content }}{% endfor %}"
    assert served_template(["--chat-template", literal], {}).text == literal


def test_the_variable_serves_a_server_started_from_python(tmp_path):
    path = _file(tmp_path, "qwen-xml")
    found = served_template([], {CHAT_TEMPLATE_VARIABLE: str(path)})
    assert found.text == path.read_text(encoding="utf-8") and CHAT_TEMPLATE_VARIABLE in found.where
    # The same template in both is no conflict; the command line names it.
    both = served_template(["--chat-template", str(path)], {CHAT_TEMPLATE_VARIABLE: str(path)})
    assert both.text == found.text and "--chat-template" in both.where


def test_two_different_templates_are_an_error_at_start_up(tmp_path):
    argv = ["--chat-template", str(_file(tmp_path, "qwen-xml"))]
    with pytest.raises(ServedTemplateConflict, match="different templates"):
        served_template(argv, {CHAT_TEMPLATE_VARIABLE: str(_file(tmp_path, "glm-xml"))})


def test_a_path_vllm_cannot_read_fails_as_vllm_fails_on_it(tmp_path):
    with pytest.raises(VLLMValidationError, match="looks like a file path"):
        served_template(["--chat-template", str(tmp_path / "missing" / "template.jinja")], {})


@pytest.mark.parametrize("name", WITH_TEMPLATE)
def test_every_format_served_by_override_is_the_format_both_parsers_use(name, tmp_path, monkeypatch, caplog):
    # The tokenizer's own template writes hermes (or, for hermes, qwen-xml): only the override can
    # make the parsers read name's format.
    tokenizer = template_writing(FORMATS["qwen-xml" if name == "hermes" else "hermes"])
    monkeypatch.setattr("sys.argv", ["api_server", "--model", "m", "--chat-template", str(_file(tmp_path, name))])
    monkeypatch.delenv(CHAT_TEMPLATE_VARIABLE, raising=False)
    with caplog.at_level(logging.INFO, logger="vllm.templatestudio"):
        tools = TemplateStudioToolParser(tokenizer)
    assert tools.format.name == name
    assert TemplateStudioReasoningParser(tokenizer).format.name == name
    # The format's first sample with calls and no reasoning block (a writer may be hand-written).
    opens = [opener for opener, _ in FORMATS[name].reasoning_pairs]
    sample = next(sample for sample in FORMATS[name].samples
                  if sample.calls and not any(opener in sample.text for opener in opens))
    result = tools.extract_tool_calls(sample.text, _request())
    assert [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls] == [
        (call.name, call.arguments) for call in sample.calls]


def test_the_start_up_line_names_the_override(tmp_path, monkeypatch, caplog):
    tokenizer = template_writing(FORMATS["hermes"])
    tokenizer = type(tokenizer)("a-model-for-the-start-up-line", tokenizer.chat_template)
    monkeypatch.setattr("sys.argv", ["api_server", "--chat-template", str(_file(tmp_path, "glm-xml"))])
    with caplog.at_level(logging.INFO, logger="vllm.templatestudio"):
        TemplateStudioToolParser(tokenizer)
    assert ("a-model-for-the-start-up-line (rendered with the server's --chat-template (" in caplog.text
            and "writes tool calls in the glm-xml format" in caplog.text)


def test_a_request_template_still_wins_over_the_override(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.argv", ["api_server", "--chat-template", str(_file(tmp_path, "glm-xml"))])
    parser = TemplateStudioToolParser(template_writing(FORMATS["hermes"]))
    assert parser.format.name == "glm-xml"
    result = parser.extract_tool_calls(_written("qwen-xml"), _request(template_writing(FORMATS["qwen-xml"]).chat_template))
    assert parser.format.name == "qwen-xml" and result.tools_called
    # A request that sends the override itself gets the served format as it was detected.
    again = TemplateStudioToolParser(template_writing(FORMATS["hermes"]))
    served = again.detected
    again.extract_tool_calls(_written("glm-xml"), _request((tmp_path / "glm-xml.jinja").read_text(encoding="utf-8")))
    assert again.detected is served and served.format.name == "glm-xml"


def test_a_named_parser_ignores_the_override(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.argv", ["api_server", "--chat-template", str(_file(tmp_path, "glm-xml"))])
    parser = named_parser(TemplateStudioToolParser, "mistral")(template_writing(FORMATS["hermes"]))
    assert parser.format.name == "mistral"
