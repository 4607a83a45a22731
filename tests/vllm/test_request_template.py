"""A request's own chat_template decides the format its reply is read in (issue 24 item 5)."""

from __future__ import annotations

import logging

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

from templatestudio.calls import ParsedToolCall
from templatestudio.formats import FORMATS
from templatestudio.integrations.served_detect import request_served_format
from templatestudio.integrations.vllm import TemplateStudioToolParser, named_parser
from test_plugin_inprocess import template_writing
from tests.vllm.parsers import StubTokenizer

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
NO_TOOLS_TEMPLATE = "{% for m in messages %}{{ m.content }}{% endfor %}"


def _request(template=None, choice="auto"):
    extra = {"chat_template": template} if template is not None else {}
    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Paris?"}], tools=TOOLS,
                                 tool_choice=choice, **extra)


def _call(name: str) -> str:
    return FORMATS[name].wire.write_call(ParsedToolCall("get_weather", {"city": "Paris"}))


def test_a_request_with_its_own_template_is_read_in_that_templates_format():
    served = template_writing(FORMATS["hermes"])
    other = template_writing(FORMATS["qwen-xml"]).chat_template
    parser = TemplateStudioToolParser(served)
    assert parser.format.name == "hermes"
    result = parser.extract_tool_calls(_call("qwen-xml"), _request(other))
    assert parser.format.name == "qwen-xml"
    assert [(call.function.name, call.function.arguments) for call in result.tool_calls] == [
        ("get_weather", '{"city": "Paris"}')]


def test_the_request_template_also_chooses_the_grammar():
    parser = TemplateStudioToolParser(template_writing(FORMATS["hermes"]))
    other = template_writing(FORMATS["glm-xml"]).chat_template
    tag = parser.get_structural_tag(_request(other, "required"))
    assert "<arg_key>" in tag.model_dump_json() and "<tool_call>\\n{" not in tag.model_dump_json()


def test_the_same_template_as_the_tokenizers_is_the_served_format_unprobed():
    served = template_writing(FORMATS["hermes"])
    parser = TemplateStudioToolParser(served)
    assert request_served_format(served, served.chat_template, parser.detected) is parser.detected
    assert request_served_format(served, None, parser.detected) is parser.detected


def test_a_request_template_that_writes_no_format_passes_the_reply_through_with_a_warning(caplog):
    parser = TemplateStudioToolParser(template_writing(FORMATS["hermes"]))
    reply = _call("hermes")
    with caplog.at_level(logging.WARNING, logger="vllm.templatestudio"):
        result = parser.extract_tool_calls(reply, _request(NO_TOOLS_TEMPLATE))
    assert not result.tools_called and result.content == reply
    assert "the request's chat_template" in caplog.text


def test_a_named_parser_keeps_the_format_it_was_named_for():
    parser = named_parser(TemplateStudioToolParser, "mistral")(StubTokenizer("m", None))
    other = template_writing(FORMATS["qwen-xml"]).chat_template
    parser.extract_tool_calls("text", _request(other))
    assert parser.format.name == "mistral"
