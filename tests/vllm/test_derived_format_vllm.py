"""The vLLM plugin serves a model whose template no module knows, through the derived format.

A template written for a shape nobody registered (``tests/derive_synthetic``)
is detected as derived at start-up (the start-up line says so), and the
plugin's tool parser reads its calls whole and streamed exactly as the
reader does. Runs under ``.venv-vllm`` (``make vllm-test``).
"""

from __future__ import annotations

import json
import logging

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

import derive_synthetic as ds  # tests/ is on sys.path, as for every test file
from templatestudio.calls import ParsedToolCall
from templatestudio.reader import read_tool_calls
from templatestudio.wire import shape
from tests.vllm.parsers import StubTokenizer, without_reasoning_parser

# A call no registered format reads: <|fn|>NAME<|with|>{...}<|/fn|>, two calls on lines of their own.
WIRE = shape.WireShape(shape.Call("<|fn|>", "<|/fn|>"), shape.NameBetween("", "<|with|>"), shape.JsonObject())
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}}}}}
CALLS = [ParsedToolCall("get_weather", {"city": "Paris", "days": 2}), ParsedToolCall("get_weather", {"city": "Lyon"})]


def test_a_template_no_module_knows_is_served_through_its_derived_format(caplog):
    tokenizer = StubTokenizer("someone/unregistered-model", ds.template_of(WIRE))
    with caplog.at_level(logging.INFO):
        parser = without_reasoning_parser(tokenizer)
    assert parser.format.derived_from == "someone/unregistered-model"
    assert "its wire shape was derived from the template and checked by round trip" in caplog.text
    request = ChatCompletionRequest(model="stand-in", messages=[{"role": "user", "content": "Weather?"}], tools=[TOOL])
    text = "Checking both.\n" + WIRE.write_calls(CALLS)
    info = parser.extract_tool_calls(text, request)
    assert [(call.function.name, json.loads(call.function.arguments)) for call in info.tool_calls] == [
        (call.name, call.arguments) for call in CALLS]
    # The plugin's content is the reply minus its calls, layout kept; the reader's takes the layout out.
    assert info.content.strip() == read_tool_calls(text, parser.format).content == "Checking both."

    streaming, previous, pieces = without_reasoning_parser(tokenizer), "", []
    for index in range(0, len(text), 4):
        delta = text[index : index + 4]
        pieces.append(streaming.extract_tool_calls_streaming(previous, previous + delta, delta, [], [], [], request))
        previous += delta
    pieces.append(streaming.finish_streaming())
    names = [tool.function.name for piece in pieces if piece is not None for tool in piece.tool_calls
             if tool.function and tool.function.name]
    arguments = [tool.function.arguments for piece in pieces if piece is not None for tool in piece.tool_calls
                 if tool.function and tool.function.arguments]
    assert names == ["get_weather", "get_weather"]
    assert [json.loads(item) for item in arguments] == [call.arguments for call in CALLS]
