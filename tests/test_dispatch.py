"""Schema-typed arguments and dispatch errors the model can read."""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rates import get_exchange_rate
from templatestudio.coerce import MAX_NESTING
from templatestudio.dispatch import (
    ToolOutcome,
    argument_problems,
    coerce_arguments,
    dispatch,
)
from templatestudio.shown_values import MAX_RESULT_CONTAINERS
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


# --- every input gives a result the model can read (issue: nothing crashes dispatch) ------
# The classes: values nested far deeper than Python's stack, in arguments, in
# text and in results; objects whose __str__ or __repr__ raises, as results,
# as exceptions and inside them; values too large to print.





def echo(value: Any) -> Any:
    """Return what it was given.

    Args:
        value: Anything.
    """
    return value


def shout(value: Any) -> None:
    """Raise what it was given, or an exception carrying it.

    Args:
        value: Anything.
    """
    if isinstance(value, BaseException):
        raise value
    raise ValueError(value)


def takes(items: list, options: dict, name: str, count: int) -> str:
    """Take typed values.

    Args:
        items: A list.
        options: A dict.
        name: A string.
        count: An integer.
    """
    return "ran"


class Raises(Exception):
    """Raised by the hostile methods below: a plain exception type."""


def hostile(kind: str, error: type[BaseException] = Raises):
    """An object (an exception when kind says so) whose __str__ and/or __repr__ raise."""

    def fail(self):
        raise error("no text for you")

    methods = {"__str__": fail} if kind in ("str", "both") else {}
    if kind in ("repr", "both"):
        methods["__repr__"] = fail
    base = Exception if kind.startswith("exc") else object
    if kind.startswith("exc"):
        methods = {"__str__": fail, "__repr__": fail}
    return type(f"Hostile{kind.title()}", (base,), methods)()


def nested(depth: int, kind: str) -> object:
    """A value depth levels deep, built without recursion."""
    value: object = 0
    for level in range(depth):
        shape = kind if kind != "mixed" else ("list", "dict", "tuple")[level % 3]
        value = {"k": value} if shape == "dict" else (value,) if shape == "tuple" else [value]
    return value


def assert_readable(outcome: ToolOutcome, *, error: bool = True) -> None:
    assert isinstance(outcome, ToolOutcome) and type(outcome.content) is str
    assert outcome.is_error is error
    if error:
        assert outcome.content.startswith("error: ") and len(outcome.content) < 1_000


DEPTHS = [MAX_NESTING + 1, 1_000, 5_000, sys.getrecursionlimit() * 3]
SHAPES = ["list", "dict", "tuple", "mixed"]


@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize("depth", DEPTHS)
def test_a_result_nested_too_deep_is_an_error_the_model_reads(depth, kind):
    outcome = dispatch(ParsedToolCall("echo", {"value": nested(depth, kind)}), [echo])
    assert_readable(outcome)
    assert f"nested more than {MAX_NESTING} levels deep" in outcome.content


@pytest.mark.parametrize("kind", SHAPES)
def test_a_result_exactly_at_the_nesting_limit_is_sent(kind):
    outcome = dispatch(ParsedToolCall("echo", {"value": nested(MAX_NESTING, kind)}), [echo])
    assert_readable(outcome, error=False)
    assert json.loads(outcome.content) == json.loads(json.dumps(nested(MAX_NESTING, kind)))


@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_argument_of_the_wrong_type_is_reported(depth, kind):
    call = ParsedToolCall("takes", {"items": [], "options": {}, "name": nested(depth, kind), "count": 1})
    outcome = dispatch(call, [takes])
    assert_readable(outcome)
    assert "parameter 'name' must be string" in outcome.content


@pytest.mark.parametrize("parameter", ["items", "options"])
@pytest.mark.parametrize(
    "text",
    ["[" * 100_000 + "]" * 100_000, "{" * 100_000 + "}" * 100_000, '{"a":' * 5_000 + "1" + "}" * 5_000],
    ids=["lists", "braces", "objects"],
)
def test_deeply_nested_text_for_a_list_or_object_parameter_is_reported(parameter, text):
    arguments = {"items": [], "options": {}, "name": "n", "count": 1, parameter: text}
    outcome = dispatch(ParsedToolCall("takes", arguments), [takes])
    assert_readable(outcome)
    kind = "array" if parameter == "items" else "object"
    assert f"parameter {parameter!r} must be {kind}, got string" in outcome.content


def test_a_tool_exception_nested_deep_is_reported():
    outcome = dispatch(ParsedToolCall("shout", {"value": nested(5_000, "list")}), [shout])
    assert_readable(outcome)
    assert outcome.content.startswith("error: shout raised ValueError: (its message cannot be shown")


@pytest.mark.parametrize("error", [Raises, RuntimeError, RecursionError, TypeError, MemoryError])
@pytest.mark.parametrize("kind", ["str", "both"])
def test_a_result_whose_str_raises_is_reported(kind, error):
    outcome = dispatch(ParsedToolCall("echo", {"value": hostile(kind, error)}), [echo])
    assert_readable(outcome)
    assert f"str() raised {error.__name__}" in outcome.content


def test_a_result_whose_repr_raises_is_reported_since_str_falls_back_on_it():
    outcome = dispatch(ParsedToolCall("echo", {"value": hostile("repr")}), [echo])
    assert_readable(outcome)
    assert outcome.content == (
        "error: echo returned a HostileRepr that cannot be shown as text "
        "(str() raised Raises: no text for you)"
    )


@pytest.mark.parametrize("error", [Raises, RuntimeError, RecursionError])
def test_an_exception_whose_str_raises_is_reported(error):
    outcome = dispatch(ParsedToolCall("shout", {"value": hostile("exc", error)}), [shout])
    assert_readable(outcome)
    assert outcome.content == (
        f"error: shout raised HostileExc: (its message cannot be shown: str() raised {error.__name__})"
    )


def test_an_exception_carrying_a_hostile_object_is_reported():
    outcome = dispatch(ParsedToolCall("shout", {"value": hostile("both")}), [shout])
    assert outcome.content == "error: shout raised ValueError: (its message cannot be shown: str() raised Raises)"


@pytest.mark.parametrize("kind", ["str", "repr", "both"])
def test_a_hostile_argument_of_the_wrong_type_is_reported(kind):
    call = ParsedToolCall("takes", {"items": [], "options": {}, "name": hostile(kind), "count": 1})
    outcome = dispatch(call, [takes])
    assert_readable(outcome)
    assert "parameter 'name' must be string, got Hostile" in outcome.content


def test_a_str_subclass_result_is_sent_as_a_plain_str():
    class Sly(str):
        def __str__(self):
            raise Raises("no")

    outcome = dispatch(ParsedToolCall("echo", {"value": Sly("fine")}), [echo])
    assert outcome.content == "fine" and type(outcome.content) is str


def test_an_int_too_long_to_print_is_reported():
    huge = 10**5_000
    outcome = dispatch(ParsedToolCall("echo", {"value": huge}), [echo])
    assert_readable(outcome)
    assert "a int that cannot be shown as text (str() raised ValueError" in outcome.content
    call = ParsedToolCall("takes", {"items": [], "options": {}, "name": huge, "count": 1})
    assert_readable(dispatch(call, [takes]))


def test_a_huge_flat_result_is_sent_whole():
    value = list(range(200_000))
    outcome = dispatch(ParsedToolCall("echo", {"value": value}), [echo])
    assert_readable(outcome, error=False)
    assert json.loads(outcome.content) == value


def test_a_result_sharing_itself_exponentially_is_refused_quickly():
    shared: list = []
    for _ in range(64):  # 2**64 paths: json.dumps would never finish
        shared = [shared, shared]
    outcome = dispatch(ParsedToolCall("echo", {"value": shared}), [echo])
    assert_readable(outcome)
    assert f"holding more than {MAX_RESULT_CONTAINERS:,} lists and dicts" in outcome.content


def test_a_result_holding_itself_is_sent_as_str_shows_it():
    loop: list = [1]
    loop.append(loop)
    outcome = dispatch(ParsedToolCall("echo", {"value": loop}), [echo])
    assert outcome == ToolOutcome("echo", {"value": loop}, "[1, [...]]", is_error=False)


# A generator of the whole class: hostile leaves, deep chains, shared and
# huge values, in containers of every kind, through every path of dispatch.
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5),
    st.sampled_from(["str", "repr", "both"]).map(hostile),
    st.sampled_from(["exc"]).map(hostile),
    st.integers(4_400, 4_600).map(lambda digits: 10**digits),  # too long for str()
    st.tuples(st.integers(MAX_NESTING - 2, 3_000), st.sampled_from(SHAPES)).map(lambda p: nested(*p)),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=3), inner, max_size=3),
    ),
    max_leaves=6,
)


@settings(max_examples=300)
@given(
    value=values,
    tool=st.sampled_from(["echo", "shout", "takes"]),
    parameter=st.sampled_from(["items", "options", "name", "count"]),
)
def test_dispatch_always_returns_a_readable_outcome(value, tool, parameter):
    if tool == "takes":
        arguments = {"items": [], "options": {}, "name": "n", "count": 1, parameter: value}
    else:
        arguments = {"value": value}
    outcome = dispatch(ParsedToolCall(tool, arguments), [echo, shout, takes])
    assert isinstance(outcome, ToolOutcome) and type(outcome.content) is str
    assert outcome.is_error == outcome.content.startswith("error: ")
    if tool == "shout":
        assert outcome.is_error and outcome.content.startswith("error: shout raised ")
