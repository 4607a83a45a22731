"""The vLLM plugin types a text-valued format's calls by the request's tools, whole and streamed.

vLLM hands the request's tools as its pydantic models; the plugin turns
them into dicts for the reader (``integrations.vllm._tools``). Runs under
``.venv-vllm`` (``make vllm-test``).
"""

from __future__ import annotations

import json

import pytest
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

from templatestudio.calls import ParsedToolCall
from templatestudio.corpus import corpus_dir
from templatestudio.formats import FORMATS
from tests.vllm.parsers import StubTokenizer, without_reasoning_parser

from oracle import same_json  # tests/ is on sys.path, as for every test file

TOOL = {"type": "function", "function": {"name": "set_alarm", "parameters": {"type": "object", "properties": {
    "hour": {"type": "integer"}, "repeat": {"type": "boolean"}, "label": {"type": ["string", "null"]},
    "note": {"type": "string"}}}}}
WRITTEN = {"hour": "7", "repeat": "True", "label": "null", "note": "007"}
TYPED = {"hour": 7, "repeat": True, "label": None, "note": "007"}


@pytest.mark.parametrize(("name", "template"), [("qwen-xml", "Qwen-Qwen3-Coder-30B-A3B-Instruct"),
                                                ("glm-xml", "glm4moe")])
def test_whole_and_streamed_replies_carry_typed_arguments(name, template):
    fmt = FORMATS[name]
    tokenizer = StubTokenizer(template, (corpus_dir() / "templates" / f"{template}.jinja").read_text(encoding="utf-8"))
    request = ChatCompletionRequest(model="stand-in", messages=[{"role": "user", "content": "Wake me"}], tools=[TOOL])
    text = "Setting it.\n" + fmt.write_call(ParsedToolCall("set_alarm", WRITTEN))
    parser = without_reasoning_parser(tokenizer)
    assert parser.format is fmt
    info = parser.extract_tool_calls(text, request)
    assert [call.function.name for call in info.tool_calls] == ["set_alarm"]
    assert same_json(json.loads(info.tool_calls[0].function.arguments), TYPED)

    streaming, previous, arguments = without_reasoning_parser(tokenizer), "", []
    messages = []
    for index in range(0, len(text), 3):
        delta = text[index : index + 3]
        messages.append(streaming.extract_tool_calls_streaming(previous, previous + delta, delta, [], [], [], request))
        previous += delta
    messages.append(streaming.finish_streaming())
    for message in messages:
        if message is not None:
            arguments += [tool.function.arguments for tool in message.tool_calls
                          if tool.function and tool.function.arguments]
    assert len(arguments) == 1 and same_json(json.loads(arguments[0]), TYPED)
