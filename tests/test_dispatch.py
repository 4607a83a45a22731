"""Schema-typed arguments and dispatch errors the model can read."""

from __future__ import annotations

from typing import Literal

import pytest

from rates import get_exchange_rate
from templatestudio.dispatch import (
    ToolOutcome,
    argument_problems,
    coerce_arguments,
    dispatch,
)
from templatestudio.tools import ParsedToolCall, tool_schema


def search_notes(
    query: str,
    limit: int,
    score: float = 0.5,
    exact: bool = False,
    tags: list[str] | None = None,
    filters: dict | None = None,
    order: Literal["newest", "oldest"] = "newest",
) -> list:
    """Search the user's notes.

    Args:
        query: Words to look for.
        limit: How many notes to return at most.
        score: Lowest relevance score to keep.
        exact: Match the words exactly.
        tags: Only notes with these tags.
        filters: Extra field filters.
        order: Which notes come first.
    """
    return [f"{query} #{i}" for i in range(limit)]


def divide(a: int, b: int) -> float:
    """Divide one number by another.

    Args:
        a: Numerator.
        b: Denominator.
    """
    return a / b


PARAMETERS = tool_schema(search_notes)["function"]["parameters"]

# (arguments as the model wrote them, arguments after typing)
COERCIONS = [
    ({"query": "alex", "limit": "10"}, {"query": "alex", "limit": 10}),
    ({"query": "10", "limit": 10}, {"query": "10", "limit": 10}),
    ({"query": "a", "limit": "3.0"}, {"query": "a", "limit": 3}),
    ({"query": "a", "limit": "ten"}, {"query": "a", "limit": "ten"}),
    ({"query": "a", "limit": "2.5"}, {"query": "a", "limit": "2.5"}),
    ({"query": "a", "limit": 1, "score": "0.75"}, {"query": "a", "limit": 1, "score": 0.75}),
    ({"query": "a", "limit": 1, "score": "2"}, {"query": "a", "limit": 1, "score": 2}),
    ({"query": "a", "limit": 1, "exact": "true"}, {"query": "a", "limit": 1, "exact": True}),
    ({"query": "a", "limit": 1, "exact": "False"}, {"query": "a", "limit": 1, "exact": False}),
    ({"query": "a", "limit": 1, "exact": "yes"}, {"query": "a", "limit": 1, "exact": "yes"}),
    ({"query": "a", "limit": 1, "tags": '["x", "y"]'}, {"query": "a", "limit": 1, "tags": ["x", "y"]}),
    ({"query": "a", "limit": 1, "tags": "null"}, {"query": "a", "limit": 1, "tags": None}),
    ({"query": "a", "limit": 1, "filters": '{"year": 2024}'}, {"query": "a", "limit": 1, "filters": {"year": 2024}}),
    ({"query": "a", "limit": 1, "filters": "[1]"}, {"query": "a", "limit": 1, "filters": "[1]"}),
    ({"query": "a", "limit": 1, "colour": "12"}, {"query": "a", "limit": 1, "colour": "12"}),
]


@pytest.mark.parametrize("written,typed", COERCIONS)
def test_coerce_arguments_reads_text_by_the_declared_type(written, typed):
    result = coerce_arguments(written, PARAMETERS)
    assert result == typed
    assert [type(v) for v in result.values()] == [type(v) for v in typed.values()]


def test_coerce_arguments_leaves_its_input_alone():
    written = {"query": "a", "limit": "10"}
    coerce_arguments(written, PARAMETERS)
    assert written == {"query": "a", "limit": "10"}


def test_coerce_arguments_without_properties_copies():
    assert coerce_arguments({"x": "1"}, {"type": "object"}) == {"x": "1"}


def test_a_parameter_written_twice_has_each_copy_typed():
    assert coerce_arguments({"limit": ["1", "2"]}, PARAMETERS) == {"limit": [1, 2]}


def _gemma4_call(name: str, arguments: dict) -> str:
    # Every value written as a Gemma 4 string, the way a model quotes a number.
    body = ",".join(f'{key}:<|"|>{value}<|"|>' for key, value in arguments.items())
    return f"<|tool_call>call:{name}{{{body}}}<tool_call|>"


def test_coercion_agrees_with_transformers_parse_response(gemma4):
    """One behaviour on both paths: parse_response(tools=...) and parse + coerce_arguments."""
    for written, typed in COERCIONS:
        text = _gemma4_call("search_notes", written)
        by_transformers = gemma4.parse_response(text, prefix="", tools=[search_notes])
        untyped = gemma4.parse_response(text, prefix="")
        (call,) = untyped["tool_calls"]
        by_us = coerce_arguments(call["function"]["arguments"], PARAMETERS)
        assert by_transformers["tool_calls"][0]["function"]["arguments"] == by_us == typed


def test_dispatch_runs_the_tool_with_typed_arguments():
    outcome = dispatch(ParsedToolCall("search_notes", {"query": "alex", "limit": "2"}), [search_notes])
    assert outcome == ToolOutcome(
        "search_notes", {"query": "alex", "limit": 2}, '["alex #0", "alex #1"]', is_error=False
    )


def test_dispatch_sends_a_float_result_as_the_tutorial_does():
    outcome = dispatch(ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"}), [get_exchange_rate])
    assert outcome.content == "162.4" and not outcome.is_error
    assert outcome.message() == {"role": "tool", "name": "get_exchange_rate", "content": "162.4"}


def test_unknown_tool_lists_the_available_ones():
    outcome = dispatch(ParsedToolCall("get_weather", {"city": "Paris"}), [get_exchange_rate])
    assert outcome.is_error
    assert outcome.content == "error: unknown tool 'get_weather'; available: get_exchange_rate"
    assert outcome.arguments == {"city": "Paris"}


def test_unknown_tool_with_no_tools_at_all():
    outcome = dispatch(ParsedToolCall("get_weather", {}), [])
    assert outcome.content == "error: unknown tool 'get_weather'; available: none"


def test_missing_required_parameter():
    outcome = dispatch(ParsedToolCall("get_exchange_rate", {"base": "EUR"}), [get_exchange_rate])
    assert outcome.is_error
    assert outcome.content == "error: get_exchange_rate: missing required parameter 'quote'"


def test_unknown_parameter_names_what_is_accepted():
    call = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY", "amount": 5})
    outcome = dispatch(call, [get_exchange_rate])
    assert outcome.content == (
        "error: get_exchange_rate: unknown parameter 'amount' (accepts: base, quote)"
    )


def test_wrong_type_after_coercion():
    outcome = dispatch(ParsedToolCall("search_notes", {"query": "a", "limit": "ten"}), [search_notes])
    assert outcome.content == (
        "error: search_notes: parameter 'limit' must be integer, got string \"ten\""
    )


def test_a_bool_is_not_an_integer():
    outcome = dispatch(ParsedToolCall("search_notes", {"query": "a", "limit": True}), [search_notes])
    assert outcome.content == "error: search_notes: parameter 'limit' must be integer, got boolean true"


def test_a_value_outside_the_enum():
    call = ParsedToolCall("search_notes", {"query": "a", "limit": 1, "order": "random"})
    outcome = dispatch(call, [search_notes])
    assert outcome.content == (
        "error: search_notes: parameter 'order' must be one of \"newest\", \"oldest\", got \"random\""
    )


def test_every_argument_problem_is_reported_at_once():
    call = ParsedToolCall("search_notes", {"limit": "many", "colour": "red"})
    outcome = dispatch(call, [search_notes])
    assert outcome.content == (
        "error: search_notes: unknown parameter 'colour' (accepts: query, limit, score, exact, "
        "tags, filters, order); missing required parameter 'query'; "
        "parameter 'limit' must be integer, got string \"many\""
    )


def test_nullable_parameter_accepts_null():
    assert argument_problems({"query": "a", "limit": 1, "tags": None}, PARAMETERS) == []


def test_an_exception_inside_the_tool_is_a_result():
    outcome = dispatch(ParsedToolCall("divide", {"a": "1", "b": "0"}), [divide])
    assert outcome == ToolOutcome(
        "divide", {"a": 1, "b": 0}, "error: divide raised ZeroDivisionError: division by zero", True
    )


def test_keyboard_interrupt_is_not_swallowed():
    def stop() -> None:
        """Stop everything."""
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        dispatch(ParsedToolCall("stop", {}), [stop])


def test_a_result_that_is_not_json_is_sent_as_str():
    def today() -> object:
        """The date as an object."""
        return {1, 2}

    assert dispatch(ParsedToolCall("today", {}), [today]).content == "{1, 2}"
