"""tools.py: schemas, builders, parsers and parse_tool_calls, with the course's outputs.

Probes on all four families live in test_course_families.py.
"""

from __future__ import annotations

import json
import pprint

import pytest
from jinja2.exceptions import TemplateError
from transformers.utils.chat_template_utils import DocstringParsingException, TypeHintParsingException

from rates import QUESTION, get_exchange_rate
from samples import FENCED_CALL, GEMMA4_CALL, PLAIN_ANSWER, QWEN3_CALL
from templatestudio.messages import validate_conversation
from templatestudio.render import render, safe_render
from templatestudio.tools import (
    FencedJSONParser,
    HermesParser,
    ParsedToolCall,
    ToolCallParser,
    UnparsedToolCall,
    looks_like_tool_call,
    normalize_arguments,
    parse_tool_calls,
    tool_call_message,
    tool_result_message,
    tool_schema,
)

EUR_JPY = {"base": "EUR", "quote": "JPY"}
RATE_CALL = ParsedToolCall("get_exchange_rate", EUR_JPY)


# ---------------------------------------------------------------- step 1: tool_schema


def test_tool_schema_of_get_exchange_rate():
    assert tool_schema(get_exchange_rate) == {
        "type": "function",
        "function": {
            "name": "get_exchange_rate",
            "description": "Look up how many units of one currency one unit of another buys.",
            "parameters": {
                "type": "object",
                "properties": {
                    "base": {
                        "type": "string",
                        "description": 'ISO 4217 code of the currency you hold, such as "EUR".',
                    },
                    "quote": {
                        "type": "string",
                        "description": 'ISO 4217 code of the currency you want, such as "JPY".',
                    },
                },
                "required": ["base", "quote"],
            },
            "return": {"type": "number"},
        },
    }


def test_docstring_without_args_raises():
    def get_rate(base: str, quote: str) -> float:
        """Exchange rate between two currencies."""
        return 162.4

    with pytest.raises(DocstringParsingException) as caught:
        tool_schema(get_rate)
    assert str(caught.value) == (
        "Cannot generate JSON schema for get_rate because the docstring has no description "
        "for the argument 'base'"
    )


def test_no_docstring_raises():
    def get_rate(base: str, quote: str) -> float:
        return 162.4

    with pytest.raises(DocstringParsingException) as caught:
        tool_schema(get_rate)
    assert str(caught.value) == "Cannot generate JSON schema for get_rate because it has no docstring!"


def test_missing_type_hint_raises():
    def get_rate(base, quote: str) -> float:
        """Exchange rate between two currencies.

        Args:
            base: the currency you hold.
            quote: the currency you want.
        """
        return 162.4

    with pytest.raises(TypeHintParsingException) as caught:
        tool_schema(get_rate)
    assert str(caught.value) == "Argument base is missing a type hint in function get_rate"


# ---------------------------------------------------------------- step 2: the tools block


def test_qwen3_tools_block_as_the_course_prints_it(qwen3):
    prompt = render(qwen3, QUESTION, tools=[tool_schema(get_exchange_rate)])
    shown = [line if len(line) <= 80 else f"{line[:60]}... ({len(line)} chars)" for line in prompt.splitlines()]
    assert shown == [
        "<|im_start|>system",
        "# Tools",
        "",
        "You may call one or more functions to assist with the user query.",
        "",
        "You are provided with function signatures within <tools></tools> XML tags:",
        "<tools>",
        '{"type": "function", "function": {"name": "get_exchange_rate... (464 chars)',
        "</tools>",
        "",
        "For each function call, return a json object with function n... (118 chars)",
        "<tool_call>",
        '{"name": <function-name>, "arguments": <args-json-object>}',
        "</tool_call><|im_end|>",
        "<|im_start|>user",
        "How many yen is one euro?<|im_end|>",
        "<|im_start|>assistant",
    ]
    assert '"return": {"type": "number"}' in prompt


# ---------------------------------------------------------------- step 4: builders


def test_tool_call_message_shape():
    message = tool_call_message("get_exchange_rate", EUR_JPY)
    assert message == {
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"name": "get_exchange_rate", "arguments": EUR_JPY}}],
    }
    assert validate_conversation([*QUESTION, message]) == []


def test_tool_result_message_shape():
    message = tool_result_message("get_exchange_rate", "162.4")
    assert message == {"role": "tool", "name": "get_exchange_rate", "content": "162.4"}


@pytest.mark.parametrize("content,kind", [(162.4, "float"), ({"rate": 162.4}, "dict"), (None, "NoneType")])
def test_tool_result_must_be_a_string(content, kind):
    with pytest.raises(TypeError) as caught:
        tool_result_message("get_exchange_rate", content)
    assert str(caught.value) == f"tool result content must be a str, got {kind}"


def test_round_trip_on_qwen3(qwen3):
    conversation = [
        *QUESTION,
        tool_call_message("get_exchange_rate", EUR_JPY),
        tool_result_message("get_exchange_rate", "162.4"),
    ]
    prompt = safe_render(qwen3, conversation, tools=[tool_schema(get_exchange_rate)])
    assert prompt[prompt.index("<|im_start|>user") :] == (
        "<|im_start|>user\n"
        "How many yen is one euro?<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<tool_call>\n"
        '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}\n'
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n"
        "<tool_response>\n"
        "162.4\n"
        "</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
    )


# ---------------------------------------------------------------- step 6: string arguments


def hand_built_call(arguments):
    function = {"name": "get_exchange_rate", "arguments": arguments}
    return [*QUESTION, {"role": "assistant", "tool_calls": [{"function": function}]}]


def test_qwen3_copies_string_arguments_verbatim(qwen3):
    as_dict = render(qwen3, hand_built_call(EUR_JPY), add_generation_prompt=False)
    as_string = render(qwen3, hand_built_call('{"base":"EUR","quote":"JPY"}'), add_generation_prompt=False)
    assert as_dict.splitlines()[-2] == '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}'
    assert as_string.splitlines()[-2] == '{"name": "get_exchange_rate", "arguments": {"base":"EUR","quote":"JPY"}}'


def test_gemma4_refuses_string_arguments(gemma4):
    with pytest.raises(TemplateError) as caught:
        render(gemma4, hand_built_call('{"base":"EUR","quote":"JPY"}'), add_generation_prompt=False)
    assert str(caught.value) == (
        "chat_template: tool_calls[].function.arguments must be a JSON object (mapping), "
        "not a string. Deserialize arguments before passing to the template."
    )


def test_tool_call_message_normalizes_string_arguments(gemma4):
    from_string = tool_call_message("get_exchange_rate", '{"base":"EUR","quote":"JPY"}')
    assert from_string == tool_call_message("get_exchange_rate", EUR_JPY)
    rendered = render(gemma4, [*QUESTION, from_string], add_generation_prompt=False)
    call_line = rendered.split("<tool_call|>")[0].splitlines()[-1] + "<tool_call|>"
    assert call_line == GEMMA4_CALL


def test_normalize_arguments_passes_a_dict_through_unchanged():
    arguments = {"base": "EUR"}
    assert normalize_arguments(arguments) is arguments


def test_normalize_arguments_decodes_a_json_object():
    assert normalize_arguments('{"base": "EUR", "amount": 2}') == {"base": "EUR", "amount": 2}


@pytest.mark.parametrize(
    "arguments,message",
    [
        ("[1, 2]", "arguments did not decode to a JSON object: '[1, 2]'"),
        ('"EUR"', "arguments did not decode to a JSON object: '\"EUR\"'"),
        ("null", "arguments did not decode to a JSON object: 'null'"),
        (42, "arguments must be a dict or a JSON string, got int"),
        ([1, 2], "arguments must be a dict or a JSON string, got list"),
        (None, "arguments must be a dict or a JSON string, got NoneType"),
    ],
)
def test_normalize_arguments_rejects_what_cannot_be_keyword_arguments(arguments, message):
    with pytest.raises(ValueError) as caught:
        normalize_arguments(arguments)
    assert str(caught.value) == message


def test_normalize_arguments_lets_invalid_json_raise_json_decode_error():
    with pytest.raises(json.JSONDecodeError):
        normalize_arguments("EUR to JPY")


def test_tool_call_message_rejects_a_json_array():
    with pytest.raises(ValueError, match=r"^arguments did not decode to a JSON object: '\[1, 2\]'$"):
        tool_call_message("get_exchange_rate", "[1, 2]")


# ---------------------------------------------------------------- steps 7-9: parsers


def test_parsed_tool_call_repr_and_equality():
    assert repr(RATE_CALL) == (
        "ParsedToolCall(name='get_exchange_rate', arguments={'base': 'EUR', 'quote': 'JPY'})"
    )
    assert RATE_CALL == ParsedToolCall("get_exchange_rate", dict(EUR_JPY))
    assert RATE_CALL != ParsedToolCall("get_exchange_rate", {"base": "EUR"})


def test_hermes_parser_reads_the_qwen3_sample():
    assert HermesParser().parse(QWEN3_CALL) == [RATE_CALL]
    assert str(HermesParser().parse(QWEN3_CALL)) == (
        "[ParsedToolCall(name='get_exchange_rate', arguments={'base': 'EUR', 'quote': 'JPY'})]"
    )


def test_hermes_parser_finds_nothing_in_a_plain_answer():
    assert HermesParser().parse(PLAIN_ANSWER) == []


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>\nnot json at all\n</tool_call>",
        '<tool_call>{"arguments": {"base": "EUR"}}</tool_call>',
        '<tool_call>{"name": 7, "arguments": {}}</tool_call>',
        '<tool_call>{"name": "get_exchange_rate", "arguments": {}',
    ],
    ids=["not-json", "no-name", "name-not-str", "unclosed"],
)
def test_hermes_parser_skips_what_is_not_a_call(text):
    assert HermesParser().parse(text) == []


def test_hermes_parser_reads_every_call_and_string_arguments():
    string_arguments = json.dumps(EUR_JPY)
    text = (
        "<tool_call>"
        + json.dumps({"name": "get_exchange_rate", "arguments": string_arguments})
        + "</tool_call>\n<tool_call>\n"
        + json.dumps({"name": "list_currencies"})
        + "\n</tool_call>"
    )
    assert HermesParser().parse(text) == [RATE_CALL, ParsedToolCall("list_currencies", {})]


def test_hermes_parser_raises_on_array_arguments():
    text = '<tool_call>{"name": "get_exchange_rate", "arguments": "[1, 2]"}</tool_call>'
    with pytest.raises(ValueError, match="arguments did not decode to a JSON object"):
        HermesParser().parse(text)


def test_the_leak_wrong_parser_finds_nothing_right_parser_reads_it():
    assert HermesParser().parse(FENCED_CALL) == []
    assert FencedJSONParser().parse(FENCED_CALL) == [RATE_CALL]
    assert FencedJSONParser().parse(QWEN3_CALL) == []
    assert issubclass(FencedJSONParser, HermesParser)


@pytest.mark.parametrize(
    "text,looks",
    [
        (FENCED_CALL, True),
        (QWEN3_CALL, True),
        (PLAIN_ANSWER, False),
        (GEMMA4_CALL, False),  # Gemma 4 quotes no keys: not this detector's format
        ('{"name": "x"}', False),
        ('Quoting {"name": "x", "arguments": {}} in prose', True),
    ],
)
def test_looks_like_tool_call(text, looks):
    assert looks_like_tool_call(text) is looks


def test_leak_check_table_as_the_course_prints_it():
    parser = HermesParser()
    outputs = {"fenced": FENCED_CALL, "qwen3": QWEN3_CALL, "plain": PLAIN_ANSWER}
    rows = [
        f"{label:<7} calls: {len(parser.parse(text))}  looks like a call: {looks_like_tool_call(text)}"
        for label, text in outputs.items()
    ]
    assert rows == [
        "fenced  calls: 0  looks like a call: True",
        "qwen3   calls: 1  looks like a call: True",
        "plain   calls: 0  looks like a call: False",
    ]


# ---------------------------------------------------------------- step 10: response templates


def test_gemma4_response_template_parses_its_own_call(gemma4):
    message = gemma4.parse_response(GEMMA4_CALL, prefix=render(gemma4, QUESTION))
    assert pprint.pformat(message, width=72) == (
        "{'role': 'assistant',\n"
        " 'tool_calls': [{'function': {'arguments': {'base': 'EUR',\n"
        "                                            'quote': 'JPY'},\n"
        "                              'name': 'get_exchange_rate'},\n"
        "                 'type': 'function'}]}"
    )


def test_gemma4_plain_answer_has_no_tool_calls_key(gemma4):
    message = gemma4.parse_response(PLAIN_ANSWER, prefix=render(gemma4, QUESTION))
    assert message == {"role": "assistant", "content": PLAIN_ANSWER}
    with pytest.raises(KeyError) as caught:
        message["tool_calls"]  # the pitfall the course warns about
    assert str(caught.value) == "'tool_calls'"
    assert message.get("tool_calls", []) == []


def test_parse_response_on_qwen3_raises_attribute_error(qwen3):
    assert qwen3.response_template is None
    with pytest.raises(AttributeError) as caught:
        qwen3.parse_response(QWEN3_CALL, prefix=render(qwen3, QUESTION))
    assert str(caught.value) == "This tokenizer does not have a `response_template` for parsing chat responses!"


def test_parse_response_without_prefix_raises(gemma4):
    with pytest.raises(ValueError) as caught:
        gemma4.parse_response(GEMMA4_CALL)
    assert str(caught.value).startswith(
        "`parse_response` requires `prefix=` (the prompt that came before generation), "
        "because chat templates often pre-write part of the assistant message"
    )


# ---------------------------------------------------------------- step 11: parse_tool_calls


@pytest.fixture(scope="module")
def prompts(tokenizers):
    return {family: render(tokenizers[family], QUESTION) for family in ("qwen3", "gemma4")}


def test_parse_tool_calls_uses_gemma4s_response_template(gemma4, prompts):
    assert parse_tool_calls(gemma4, GEMMA4_CALL, prefix=prompts["gemma4"]) == [RATE_CALL]


def test_response_template_wins_over_a_fallback(gemma4, prompts):
    # the fallback would find nothing in Gemma 4's format; it must not be asked
    calls = parse_tool_calls(gemma4, GEMMA4_CALL, prefix=prompts["gemma4"], fallback=HermesParser())
    assert calls == [RATE_CALL]


def test_parse_tool_calls_uses_the_fallback_without_a_response_template(qwen3, prompts):
    assert parse_tool_calls(qwen3, QWEN3_CALL, prefix=prompts["qwen3"], fallback=HermesParser()) == [RATE_CALL]


def test_a_leaked_call_raises_unparsed_tool_call(qwen3, prompts):
    with pytest.raises(UnparsedToolCall) as caught:
        parse_tool_calls(qwen3, FENCED_CALL, prefix=prompts["qwen3"], fallback=HermesParser())
    assert str(caught.value) == "HermesParser found no call in text that looks like one"
    assert isinstance(caught.value, ValueError)


def test_the_wrong_fallback_on_qwen3_output_raises_with_its_own_name(qwen3, prompts):
    with pytest.raises(UnparsedToolCall, match="^FencedJSONParser found no call in text that looks like one$"):
        parse_tool_calls(qwen3, QWEN3_CALL, prefix=prompts["qwen3"], fallback=FencedJSONParser())


def test_prose_quoting_json_is_a_false_alarm(qwen3, prompts):
    quoting = 'A call looks like {"name": "get_exchange_rate", "arguments": {}} in JSON.'
    with pytest.raises(UnparsedToolCall):
        parse_tool_calls(qwen3, quoting, prefix=prompts["qwen3"], fallback=HermesParser())


def test_no_fallback_and_no_response_template_raises(qwen3, prompts):
    with pytest.raises(ValueError) as caught:
        parse_tool_calls(qwen3, QWEN3_CALL, prefix=prompts["qwen3"])
    assert str(caught.value) == "Qwen/Qwen3-0.6B ships no response template; pass a fallback parser"
    assert not isinstance(caught.value, UnparsedToolCall)


def test_a_plain_answer_is_no_calls_on_both_paths(qwen3, gemma4, prompts):
    assert parse_tool_calls(gemma4, PLAIN_ANSWER, prefix=prompts["gemma4"]) == []
    assert parse_tool_calls(qwen3, PLAIN_ANSWER, prefix=prompts["qwen3"], fallback=HermesParser()) == []


def test_malformed_gemma4_call_raises_from_parse_response(gemma4, prompts):
    broken = '<|tool_call>call:get_exchange_rate{base:<|"|>EUR<|"|>,quote:}<tool_call|>'
    with pytest.raises(ValueError) as caught:
        parse_tool_calls(gemma4, broken, prefix=prompts["gemma4"], fallback=HermesParser())
    assert str(caught.value).splitlines()[0] == "json: could not parse after dialect transforms."
    assert not isinstance(caught.value, UnparsedToolCall)


def test_other_formats_on_the_response_template_path_come_back_empty(gemma4, prompts):
    # documented limit: the response-template path has no leak check
    assert parse_tool_calls(gemma4, QWEN3_CALL, prefix=prompts["gemma4"]) == []


def test_any_object_with_parse_is_a_fallback(qwen3, prompts):
    class UpperCaseParser:
        def parse(self, text: str) -> list[ParsedToolCall]:
            return [ParsedToolCall(text.strip(), {})] if text.isupper() else []

    parser: ToolCallParser = UpperCaseParser()
    assert parse_tool_calls(qwen3, "PING", prefix=prompts["qwen3"], fallback=parser) == [
        ParsedToolCall("PING", {})
    ]
    with pytest.raises(UnparsedToolCall, match="^UpperCaseParser found no call"):
        parse_tool_calls(qwen3, QWEN3_CALL, prefix=prompts["qwen3"], fallback=parser)
