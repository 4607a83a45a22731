"""system_tools.py: tools written into the system message reach the prompt of templates without a tools branch."""

from __future__ import annotations

import json

import pytest

from rates import QUESTION, get_exchange_rate
from templatestudio import read_tool_calls
from templatestudio.families import family
from templatestudio.render import load_tokenizer, render
from templatestudio.system_tools import DEFAULT_INSTRUCTION, REPLY_FORMAT, tools_in_system_prompt
from templatestudio.tools import renders_tools, tool_schema

SCHEMA = tool_schema(get_exchange_rate)


def set_alarm(hour: int) -> str:
    """Set an alarm.

    Args:
        hour: The hour, 0 to 23.
    """
    return f"alarm at {hour}"


@pytest.mark.parametrize("name", ["llama3", "gemma3"])
def test_tools_reach_a_template_that_drops_tools(name):
    tokenizer = load_tokenizer(family(name).repo_id)
    assert not renders_tools(tokenizer, QUESTION, [SCHEMA])  # the premise: tools= is ignored
    messages = tools_in_system_prompt(QUESTION, [SCHEMA, set_alarm])
    prompt = render(tokenizer, messages)
    assert prompt != render(tokenizer, QUESTION)
    assert json.dumps(SCHEMA["function"], ensure_ascii=False) in prompt
    assert '"name": "set_alarm"' in prompt
    assert QUESTION[0]["content"] in prompt


def test_the_block_is_the_instruction_then_one_json_line_per_tool_in_order():
    messages = tools_in_system_prompt(QUESTION, [SCHEMA, set_alarm])
    assert messages[0]["role"] == "system"
    lines = messages[0]["content"].split("\n")
    assert lines[0] == DEFAULT_INSTRUCTION
    assert [json.loads(line)["name"] for line in lines[1:]] == ["get_exchange_rate", "set_alarm"]
    assert messages[1:] == QUESTION


def test_an_existing_system_message_keeps_its_text_first_and_nothing_is_modified():
    conversation = [{"role": "system", "content": "Answer briefly."}, *QUESTION]
    before = json.dumps(conversation)
    messages = tools_in_system_prompt(conversation, [SCHEMA], instruction="Tools:")
    assert json.dumps(conversation) == before
    assert len(messages) == len(conversation)
    assert messages[0]["content"].startswith("Answer briefly.\n\nTools:\n{")


def test_a_function_and_its_schema_give_the_same_block():
    assert tools_in_system_prompt(QUESTION, [get_exchange_rate]) == tools_in_system_prompt(QUESTION, [SCHEMA])


def test_the_reply_the_default_instruction_asks_for_is_read_by_the_reply_format():
    reply = '{"name": "get_exchange_rate", "parameters": {"base": "EUR", "quote": "JPY"}}'
    assert [(c.name, c.arguments) for c in read_tool_calls(reply, REPLY_FORMAT).calls] == [
        ("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
    ]
    assert '"parameters"' in DEFAULT_INSTRUCTION


@pytest.mark.parametrize(
    ("messages", "tools", "kwargs", "error", "words"),
    [
        ("hello", [SCHEMA], {}, TypeError, "messages must be a list"),
        (["hello"], [SCHEMA], {}, TypeError, "messages[0] must be a dict"),
        (QUESTION, SCHEMA, {}, TypeError, "tools must be a list"),
        (QUESTION, [], {}, ValueError, "tools is empty"),
        (QUESTION, [42], {}, TypeError, "tools[0] must be a JSON tool schema"),
        (QUESTION, [{"type": "function", "function": {}}], {}, ValueError, "tools[0] has no function name"),
        (QUESTION, [{"type": "retrieval"}], {}, ValueError, "only function tools"),
        (QUESTION, [SCHEMA, get_exchange_rate], {}, ValueError, "two tools share a name: get_exchange_rate"),
        (QUESTION, [SCHEMA], {"instruction": "  "}, ValueError, "instruction is blank"),
        (
            [{"role": "system", "content": [{"type": "text", "text": "x"}]}, *QUESTION],
            [SCHEMA], {}, TypeError, "system message's content must be a str",
        ),
    ],
)
def test_bad_input_gets_one_precise_error(messages, tools, kwargs, error, words):
    with pytest.raises(error) as raised:
        tools_in_system_prompt(messages, tools, **kwargs)
    assert words in str(raised.value)
