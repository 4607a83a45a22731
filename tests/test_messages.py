"""The input contract: every problem is reported, with the index of its message."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from hypothesis import given, settings

from message_strategies import conversations
from templatestudio import messages
from templatestudio.messages import InvalidConversation, assert_valid, validate_conversation

USER = {"role": "user", "content": "How many yen is one euro?"}
CALL = {
    "role": "assistant",
    "tool_calls": [
        {"type": "function", "function": {"name": "get_exchange_rate", "arguments": {"base": "EUR"}}}
    ],
}
RESULT = {"role": "tool", "name": "get_exchange_rate", "content": "162.4"}


def with_call(**call_fields) -> list[dict]:
    """USER followed by an assistant turn whose single call has call_fields."""
    return [USER, {"role": "assistant", "tool_calls": [call_fields]}]


@pytest.mark.parametrize(
    "conversation",
    [
        [USER],
        [{"role": "system", "content": "Be brief."}, USER],
        [USER, CALL, RESULT, {"role": "assistant", "content": "About 162.4 yen."}],
        # arguments may be a JSON string, type and id are optional
        with_call(function={"name": "get_exchange_rate", "arguments": '{"base": "EUR"}'}),
        with_call(id="call_1", type="function", function={"name": "f", "arguments": {}}),
        # an assistant call may also carry content, or content None
        [USER, {**CALL, "content": "Let me check."}],
        [USER, {**CALL, "content": None}],
    ],
    ids=["user", "system", "round-trip", "string-args", "with-id", "content", "content-none"],
)
def test_valid_conversations_have_no_problems(conversation):
    assert validate_conversation(conversation) == []
    assert assert_valid(conversation) is None


@pytest.mark.parametrize(
    "conversation,problem",
    [
        ("hello", "conversation must be a list of messages, got str"),
        ([], "conversation is empty"),
        ([USER, "hi"], "message 1: must be a dict, got str"),
        (
            [{"role": "human", "content": "hi"}],
            "message 0: role must be one of system, user, assistant, tool, got 'human'",
        ),
        ([{"content": "hi"}], "message 0: role must be one of system, user, assistant, tool, got None"),
        ([{"role": "user", "content": 3}], "message 0: content must be a str, got int"),
        ([{"role": "user"}], "message 0: a user message needs content"),
        ([USER, {"role": "assistant"}], "message 1: an assistant message needs content"),
        ([USER, CALL, {"role": "tool", "name": "f"}], "message 2: a tool message needs content"),
        (
            [USER, CALL, {"role": "tool", "name": "f", "content": 162.4}],
            "message 2: content must be a str, got float",
        ),
        (
            [{**USER, "tool_calls": CALL["tool_calls"]}],
            "message 0: only an assistant message may carry tool_calls",
        ),
        ([USER, {"role": "assistant", "tool_calls": []}], "message 1: tool_calls must be a non-empty list"),
        (
            [USER, {"role": "assistant", "tool_calls": {"name": "f"}}],
            "message 1: tool_calls must be a non-empty list",
        ),
        (
            [USER, {"role": "assistant", "tool_calls": ["f"]}],
            "message 1, tool call 0: must be a dict, got str",
        ),
        (
            with_call(type="code", function={"name": "f", "arguments": {}}),
            "message 1, tool call 0: type must be 'function', got 'code'",
        ),
        (
            with_call(id=7, function={"name": "f", "arguments": {}}),
            "message 1, tool call 0: id must be a str, got int",
        ),
        (with_call(name="f"), "message 1, tool call 0: needs a 'function' dict with name and arguments"),
        (
            with_call(function={"name": "", "arguments": {}}),
            "message 1, tool call 0: function.name must be a non-empty str",
        ),
        (
            with_call(function={"arguments": {}}),
            "message 1, tool call 0: function.name must be a non-empty str",
        ),
        (
            with_call(function={"name": "f", "arguments": [1, 2]}),
            "message 1, tool call 0: function.arguments must be a dict or a JSON str, got list",
        ),
        (
            with_call(function={"name": "f"}),
            "message 1, tool call 0: function.arguments must be a dict or a JSON str, got NoneType",
        ),
    ],
)
def test_each_problem_is_named_with_its_message_index(conversation, problem):
    assert validate_conversation(conversation) == [problem]


def test_every_problem_is_listed_not_just_the_first():
    conversation = [
        {"role": "human", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"type": "code", "function": {"arguments": 1}}]},
        {"role": "tool", "content": 162.4},
    ]
    assert validate_conversation(conversation) == [
        "message 0: role must be one of system, user, assistant, tool, got 'human'",
        "message 1, tool call 0: type must be 'function', got 'code'",
        "message 1, tool call 0: function.name must be a non-empty str",
        "message 1, tool call 0: function.arguments must be a dict or a JSON str, got int",
        "message 2: content must be a str, got float",
    ]


def test_second_call_in_a_turn_is_checked_with_its_own_position():
    good = CALL["tool_calls"][0]
    conversation = [USER, {"role": "assistant", "tool_calls": [good, {"type": "function"}]}]
    assert validate_conversation(conversation) == [
        "message 1, tool call 1: needs a 'function' dict with name and arguments"
    ]


def test_assert_valid_raises_one_value_error_listing_every_problem():
    conversation = [{"role": "human", "content": "hi"}, {"role": "user"}]
    with pytest.raises(InvalidConversation) as caught:
        assert_valid(conversation)
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.problems == validate_conversation(conversation)
    assert str(error) == (
        "2 problem(s) in the conversation:\n"
        "- message 0: role must be one of system, user, assistant, tool, got 'human'\n"
        "- message 1: a user message needs content"
    )


def test_invalid_conversation_copies_the_problem_list():
    problems = ["conversation is empty"]
    error = InvalidConversation(problems)
    problems.append("later edit")
    assert error.problems == ["conversation is empty"]


@settings(max_examples=500)
@given(conversations)
def test_any_input_gets_a_list_of_problems_never_an_exception(conversation):
    problems = validate_conversation(conversation)
    assert isinstance(problems, list) and all(isinstance(problem, str) for problem in problems)
    if problems:
        with pytest.raises(InvalidConversation) as caught:
            assert_valid(conversation)
        assert caught.value.problems == problems
    else:
        assert assert_valid(conversation) is None


def test_messages_imports_nothing_from_the_package():
    # The bottom layer: pairing builds on it, so it may not reach up, not
    # even from inside a function.
    tree = ast.parse(Path(messages.__file__).read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    ]
    assert [name for name in imported if name and name.startswith("templatestudio")] == []


def test_assert_valid_checks_structure_only():
    # Pairing is templatestudio.pairing.assert_paired (tests/test_pairing.py).
    assert list(inspect.signature(assert_valid).parameters) == ["conversation"]
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "name": "f", "content": "1"}]
    assert assert_valid(orphan) is None
