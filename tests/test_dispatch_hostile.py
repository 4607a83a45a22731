"""dispatch and coerce against inputs drawn from whole classes, not examples.

What a stranger's fuzzing found, each as a property over its class: texts
of digits of any length (read in one pass), tools that change what they are
given (the history keeps what the model wrote), enums compared by JSON's
equality (false is not 0), numbers JSON cannot hold (NaN, the infinities,
a value too small for a float), whole floats for integers, strings the
schema admits kept as written, tools a call cannot fill, names shared by
two tools, arguments shown as written when the tool never ran, and the
caller's own mistakes as precise ``TypeError``s.
"""

from __future__ import annotations

import copy
import math
import re
from decimal import Decimal
from typing import Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.coerce import read_as
from templatestudio.dispatch import argument_problems, dispatch, tool_registry
from templatestudio.shown_values import shown
from templatestudio.tools import ParsedToolCall

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)), max_leaves=20)


# --- numbers spelled in text: one pass, whatever the length -----------------------------

# A reference for "does this text spell a JSON-ish decimal" that cannot backtrack: a scanner.
def _spells_decimal(text: str) -> bool:
    found = re.fullmatch(r"([+-]?)([0-9]*)(\.?)([0-9]*)((?:[eE][+-]?[0-9]+)?)", text)
    return found is not None and bool(found.group(2) or found.group(4)) and not (
        found.group(3) == "" and found.group(4) != "")


@SETTINGS
@given(st.text(alphabet="0123456789.+-eE \n", max_size=30))
def test_a_number_is_read_exactly_when_the_text_spells_one(text):
    value = read_as(text, ("number",))
    word = text.strip(" \t\r\n")  # JSON's whitespace around a value is not part of it
    mantissa = re.split("[eE]", word)[0]
    if _spells_decimal(word) and math.isfinite(float(word)) and not (float(word) == 0 and re.search("[1-9]", mantissa)):
        assert isinstance(value, (int, float)) and not isinstance(value, bool)
        assert Decimal(word) == value if isinstance(value, int) else float(word) == value
    else:
        assert value == text


@pytest.mark.parametrize("types", [("number",), ("integer",)])
@pytest.mark.parametrize("tail", ["x", ".x", "e", "1.2.3", "e+"])
def test_a_million_digits_that_fail_at_the_end_are_refused_in_one_pass(types, tail):
    # The old pattern split the run of digits every way before failing: 32,000 digits took 14 s,
    # so a million would not finish; this one reads each digit once.
    text = "1" * 1_000_000 + tail
    assert read_as(text, types) == text


@SETTINGS
@given(st.integers(330, 100_000), st.sampled_from(["1", "25", "0.5", "9.99"]), st.sampled_from(["e", "E"]))
def test_a_number_too_small_for_a_float_stays_text(exponent, mantissa, e):
    text = f"{mantissa}{e}-{exponent}"
    assert read_as(text, ("number",)) == text
    outcome = dispatch(ParsedToolCall("scale", {"factor": text}), [scale])
    assert outcome.is_error and outcome.arguments == {"factor": text}


def scale(factor: float) -> str:
    """Scale by a factor.

    Args:
        factor: The factor.
    """
    return f"scaled by {factor!r}"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_number_json_cannot_hold_never_reaches_the_tool(value):
    outcome = dispatch(ParsedToolCall("scale", {"factor": value}), [scale])
    assert outcome.is_error and "non-finite number" in outcome.content


def count(limit: int) -> str:
    """Count.

    Args:
        limit: How many.
    """
    return f"{limit!r} of {type(limit).__name__}"


@SETTINGS
@given(st.integers(-2**53, 2**53))
def test_a_whole_float_is_an_integer_and_runs_as_the_int(number):
    outcome = dispatch(ParsedToolCall("count", {"limit": float(number)}), [count])
    assert not outcome.is_error and outcome.content == f"{number!r} of int"


@SETTINGS
@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer() or abs(f) > 2**53))
def test_a_float_not_held_exactly_as_a_whole_number_is_no_integer(number):
    outcome = dispatch(ParsedToolCall("count", {"limit": number}), [count])
    assert outcome.is_error and outcome.arguments == {"limit": number}


# --- enums: JSON's equality --------------------------------------------------------------

@SETTINGS
@given(json_scalars, st.lists(json_scalars, min_size=1, max_size=5))
def test_enum_membership_is_json_equality(value, choices):
    schema = {"type": "object", "properties": {"x": {"enum": choices}}}
    def same(a, b):
        if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str) or isinstance(b, str):
            return type(a) is type(b) and a == b
        return a == b  # numbers: 1 is 1.0
    expected = any(same(value, choice) for choice in choices)
    assert (argument_problems({"x": value}, schema) == []) is expected


def pick(x: Literal[1, False]) -> str:
    """Pick.

    Args:
        x: The choice.
    """
    return repr(x)


@pytest.mark.parametrize("written", [0, True, "0", 0.0, "false "])
def test_false_is_not_zero_nor_true_one(written):
    outcome = dispatch(ParsedToolCall("pick", {"x": written}), [pick])
    if written == "false ":  # the text spells false: read as the boolean choice
        assert outcome.content == "False"
    else:
        assert outcome.is_error and "must be one of 1, false" in outcome.content


# --- what the model wrote is what the history keeps ---------------------------------------

def vandal(data: dict, items: list) -> str:
    """Change everything it is given.

    Args:
        data: Anything.
        items: Anything.
    """
    pending, seen = [data, items], set()
    while pending:
        value = pending.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, dict):
            pending.extend(value.values())
            value["INJECTED"] = 1
        elif isinstance(value, list):
            pending.extend(value)
            value.append("INJECTED")
    return "done"


@SETTINGS
@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4), st.lists(json_values, max_size=4))
def test_a_tool_that_changes_its_arguments_changes_neither_the_call_nor_the_history(data, items):
    call = ParsedToolCall("vandal", {"data": data, "items": items})
    before = copy.deepcopy(call.arguments)
    outcome = dispatch(call, [vandal])
    assert outcome.content == "done"
    assert call.arguments == before and outcome.arguments == before


def test_shared_and_self_holding_arguments_are_copied_as_shared():
    shared: list = []
    for _ in range(64):
        shared = [shared, shared]
    loop: list = [1]
    loop.append(loop)
    outcome = dispatch(ParsedToolCall("vandal", {"data": {"a": loop}, "items": shared}), [vandal])
    assert outcome.content == "done" and len(loop) == 2 and loop[1] is loop and len(shared) == 2
    copied = outcome.arguments["items"]
    assert copied is shared and copied[0] is copied[1]  # the history holds the caller's values, untouched


def label(code: int | str, note: str | None = None) -> str:
    """Label.

    Args:
        code: A code.
        note: A note.
    """
    return repr((code, note))


@SETTINGS
@given(st.text(max_size=12), st.text(max_size=12))
def test_a_string_the_schema_admits_stays_the_string_written(code, note):
    outcome = dispatch(ParsedToolCall("label", {"code": code, "note": note}), [label])
    assert outcome.content == repr((code, note)) and outcome.arguments == {"code": code, "note": note}


@SETTINGS
@given(st.dictionaries(st.sampled_from(["limit", "bogus", "other"]),
                       st.one_of(st.integers(0, 9).map(str), st.just("ten"), json_scalars,
                                 st.lists(st.sampled_from(["1", "null", "x", "2.0"]), min_size=2, max_size=3)),
                       min_size=1))
def test_a_call_that_never_ran_keeps_and_shows_its_arguments_as_written(arguments):
    outcome = dispatch(ParsedToolCall("count", dict(arguments)), [count])
    if outcome.is_error:
        assert outcome.arguments == arguments
        limit = arguments.get("limit")
        if "parameter 'limit' must be" in outcome.content:
            assert shown(limit) in outcome.content  # as written: ["1", "null"], never [1, null]


# --- the caller's mistakes ----------------------------------------------------------------

def star(message: str, *args: str) -> str:
    """Star.

    Args:
        message: A message.
        args: More.
    """
    return message


def double_star(message: str, **kwargs: str) -> str:
    """Double star.

    Args:
        message: A message.
        kwargs: More.
    """
    return message


def positional(a: int, /) -> int:
    """Positional only.

    Args:
        a: A number.
    """
    return a


@pytest.mark.parametrize("tool", [star, double_star, positional])
def test_a_tool_no_call_can_fill_is_refused_by_name(tool):
    with pytest.raises(TypeError, match=f"tool '{tool.__name__}' takes"):
        dispatch(ParsedToolCall(tool.__name__, {"message": "hi"}), [tool])


def test_two_tools_of_one_name_are_refused():
    def count(limit: int) -> int:  # noqa: F811 - the point: the same name as the module's count
        """Count again.

        Args:
            limit: How many.
        """
        return limit
    with pytest.raises(ValueError, match="two tools share a name: count"):
        tool_registry([count, scale, globals()["count"]])


@pytest.mark.parametrize("arguments", ['{"limit": 1}', None, [1], ("limit", 1), 5])
def test_arguments_that_are_not_a_dict_are_the_callers_mistake(arguments):
    with pytest.raises(TypeError, match=f"arguments {type(arguments).__name__}"):
        dispatch(ParsedToolCall("count", arguments), [count])


@pytest.mark.parametrize("schema", [True, False, None, [], {"properties": True}, {"properties": {"x": True}},
                                    {"properties": {"x": {"enum": 5}}}, {"required": "x"}])
def test_argument_problems_never_fails_on_a_schema_it_cannot_read(schema):
    assert isinstance(argument_problems({"x": 1}, schema), list)
