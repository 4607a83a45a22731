"""Schema-typed coercion (templatestudio.coerce) against Gemma 4's parse_response casting.

Two properties, over generated schemas and texts:
- every spelling a model writes for a typed value is read by both paths
  to the same value, of the same JSON type;
- on any text at all, this side is never looser than transformers: what it
  reads, transformers reads to the same value (equal as floats where this
  side keeps integer digits transformers rounds away).
Then one named test per documented difference, each showing what
transformers does.
"""

from __future__ import annotations

import json
import math
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio.coerce import (
    MAX_NESTING,
    coerce_arguments,
    exceeds_nesting,
    read_as,
    schema_types,
)

TYPE_NAMES = ["integer", "number", "boolean", "null", "array", "object", "string", "frobnicate"]
JSON_SPACE = " \t\r\n"
SAFE_INT = 2**53  # beyond it transformers rounds integers through a float


def same_json(a, b) -> bool:
    """Equal, and of the same JSON type all the way down (True is not 1, 1 is not 1.0)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
            and all(same_json(a[k], b[k]) for k in a)
        )
    if isinstance(a, list) or isinstance(b, list):
        return (
            isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
            and all(same_json(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True  # json.loads reads NaN inside arrays, on both paths
    return type(a) is type(b) and a == b


def tool(schema) -> dict:
    parameters = {"type": "object", "properties": {"x": schema}}
    return {"type": "function", "function": {"name": "t", "description": "d", "parameters": parameters}}


def gemma4_typed(gemma4, text: str, schema) -> tuple[object, object]:
    """(transformers' typed value, this module's) for x written as a Gemma 4 string."""
    call = f'<|tool_call>call:t{{x:<|"|>{text}<|"|>}}<tool_call|>'
    (typed,) = gemma4.parse_response(call, prefix="", tools=[tool(schema)])["tool_calls"]
    (untyped,) = gemma4.parse_response(call, prefix="")["tool_calls"]
    ours = coerce_arguments(untyped["function"]["arguments"], tool(schema)["function"]["parameters"])
    return typed["function"]["arguments"]["x"], ours["x"]


# --- generated schemas ------------------------------------------------------------

type_name = st.sampled_from(TYPE_NAMES)


def _with_nullable(schema: st.SearchStrategy) -> st.SearchStrategy:
    return st.tuples(schema, st.booleans()).map(lambda pair: {**pair[0], "nullable": True} if pair[1] else pair[0])


simple_schemas = _with_nullable(
    st.one_of(
        type_name.map(lambda name: {"type": name}),
        st.lists(type_name, min_size=1, max_size=3).map(lambda names: {"type": names}),
    )
)
schemas = st.recursive(
    simple_schemas,
    lambda inner: _with_nullable(
        st.builds(
            lambda union, choices, declared: {union: choices, **declared},
            st.sampled_from(["anyOf", "oneOf"]),
            st.lists(inner, min_size=1, max_size=3),
            st.one_of(st.just({}), simple_schemas),
        )
    ),
    max_leaves=6,
)

# --- values and the spellings models write for them --------------------------------

# No digits in free text: '１２' or '1_0' as a string is a documented difference, below.
words = st.text(alphabet=string.ascii_letters + " ,.:;!?-'éü中", max_size=12)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-SAFE_INT + 1, SAFE_INT - 1),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15),
    words,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(words, inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def spellings(draw) -> str:
    value = draw(values)
    options = [json.dumps(value), json.dumps(value, separators=(",", ":")), json.dumps(value, indent=1)]
    if isinstance(value, str):
        options.append(value)
    elif value is None or isinstance(value, (bool, float)):
        options.append(str(value))
        if isinstance(value, bool):
            options += ["1" if value else "0", str(value).upper()]
    elif isinstance(value, int):
        options += [f"{value}.0", f"{value}e0", f"+{value}" if value >= 0 else str(value)]
    text = draw(st.sampled_from(options))
    pad = st.text(alphabet=JSON_SPACE, max_size=2)
    return draw(pad) + text + draw(pad)


@settings(max_examples=400)
@given(schema=schemas, text=spellings())
def test_every_spelling_models_write_is_typed_as_transformers_types_it(gemma4, schema, text):
    by_transformers, by_us = gemma4_typed(gemma4, text, schema)
    assert same_json(by_us, by_transformers), (text, schema, by_us, by_transformers)


# Characters that make Python's int()/float()/strip() read more than JSON does.
NUMERIC_NOISE = "0123456789+-.eE_ \t\n\x0b\x1c\xa0\u2003١٢٣１２" + "truefalsnNoIiyx" + '[]{}",:'


# Words a loose reader might take for a value.
NEAR_MISS_WORDS = ["yes", "no", "on", "off", "y", "n", "t", "f", "NULL", "nil", "none", "undefined", "nan", "NaN",
     "inf", "-Infinity", "Infinity", "0x10", "0o7", "0b1", "1/2", "½", "²", "1,000", "1.0.0", "--1",
     "+-1", "1e", "e1", ".", "-", "[1,]", "{'a': 1}", "[NaN]", "(1, 2)", "{1}", "True", "FALSE"]
NEAR_MISSES = st.sampled_from(NEAR_MISS_WORDS).flatmap(
    lambda word: st.sampled_from([word, f" {word}", f"{word}\n", f"\t{word} "])
)


def _only_rounding_apart(ours, theirs) -> bool:
    # This side keeps every digit; transformers goes through a float.
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (ours, theirs))
    return numbers and type(ours) is type(theirs) and float(ours) == float(theirs)


@settings(max_examples=600)
@given(schema=schemas, text=st.one_of(spellings(), NEAR_MISSES, st.text(alphabet=NUMERIC_NOISE, max_size=14)))
def test_what_we_read_transformers_reads_the_same(gemma4, schema, text):
    by_transformers, by_us = gemma4_typed(gemma4, text, schema)
    if isinstance(by_us, str) and by_us == text:
        return  # kept as written: never looser, whatever transformers did
    assert same_json(by_us, by_transformers) or _only_rounding_apart(by_us, by_transformers), (
        text, schema, by_us, by_transformers
    )


def test_no_near_miss_word_is_read_looser_than_transformers_reads_it(gemma4):
    # Every word against every single type, not a sample of them.
    for word in NEAR_MISS_WORDS:
        for name in TYPE_NAMES:
            by_transformers, by_us = gemma4_typed(gemma4, word, {"type": name})
            if by_us != word or not isinstance(by_us, str):
                assert same_json(by_us, by_transformers), (word, name, by_us, by_transformers)


def test_the_generators_reach_every_type(gemma4):
    # Without this the properties above could pass by typing nothing.
    reached = {
        type(read_as(text, (name,))).__name__
        for name, text in [
            ("integer", "3.0"), ("number", "2.5"), ("boolean", "TRUE"), ("null", "None"),
            ("array", "[1]"), ("object", '{"a": 1}'),
        ]
    }
    assert reached == {"int", "float", "bool", "NoneType", "list", "dict"}


# --- the documented differences, each shown against transformers ----------------------


@pytest.mark.parametrize(
    "text,schema,transformers_reads",
    [
        ("١٢٣", {"type": "integer"}, 123),  # Arabic-Indic digits
        ("１２", {"type": "number"}, 12),  # fullwidth digits
        ("1_000", {"type": "integer"}, 1000),  # digit-group separator
        ("\xa012\xa0", {"type": "integer"}, 12),  # no-break spaces are not JSON whitespace
        ("\x0btrue", {"type": "boolean"}, True),
        ("3.0000000000000001", {"type": "integer"}, 3),  # not whole: rounding made it so
        ("1e-400", {"type": "integer"}, 0),
    ],
)
def test_a_spelling_json_does_not_use_stays_text(gemma4, text, schema, transformers_reads):
    by_transformers, by_us = gemma4_typed(gemma4, text, schema)
    assert same_json(by_transformers, transformers_reads)
    assert by_us == text


@pytest.mark.parametrize(
    "text,schema,exact",
    [
        ("12345678901234567890", {"type": "number"}, 12345678901234567890),
        ("1e23", {"type": "integer"}, 10**23),
        ("9007199254740993.0", {"type": "integer"}, 2**53 + 1),
    ],
)
def test_integers_are_read_exactly_where_transformers_rounds(gemma4, text, schema, exact):
    by_transformers, by_us = gemma4_typed(gemma4, text, schema)
    assert by_us == exact and type(by_us) is int
    assert by_transformers != exact and float(by_transformers) == float(exact)


@pytest.mark.parametrize("kind", ["array", "object"])
@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1),
        '{"a":' * 5_000 + "1" + "}" * 5_000,
        "[{" * 3_000,  # unclosed as well
    ],
    ids=["100000-lists", "just-too-deep", "5000-objects", "unclosed"],
)
def test_json_nested_too_deep_stays_text_and_never_recurses(kind, text):
    assert coerce_arguments({"x": text}, {"properties": {"x": {"type": kind}}}) == {"x": text}


def test_transformers_itself_recurses_on_the_deep_text(gemma4):
    # Why the limit exists: parse_response(tools=...) dies on the same text.
    with pytest.raises(RecursionError):
        gemma4_typed(gemma4, "[" * 100_000 + "]" * 100_000, {"type": "array"})


def test_nesting_at_the_limit_is_decoded():
    text = "[" * MAX_NESTING + "]" * MAX_NESTING
    (typed,) = coerce_arguments({"x": text}, {"properties": {"x": {"type": "array"}}}).values()
    depth = 0
    while isinstance(typed, list):
        typed, depth = (typed[0] if typed else None), depth + 1
    assert depth == MAX_NESTING


@given(
    st.lists(
        st.one_of(st.sampled_from(["[", "]", "{", "}", '"', "\\", "a", ",", ":"]), st.text(max_size=2)),
        max_size=60,
    ),
    st.integers(0, 8),
)
def test_exceeds_nesting_counts_brackets_outside_strings_as_json_does(parts, limit):
    text = "".join(parts)
    try:
        json.loads(text)
    except ValueError:
        return  # only valid JSON has a nesting depth to compare against

    def depth(value) -> int:
        if isinstance(value, list):
            return 1 + max(map(depth, value), default=0)
        if isinstance(value, dict):
            return 1 + max(map(depth, value.values()), default=0)
        return 0

    assert exceeds_nesting(text, limit) == (depth(json.loads(text)) > limit)


def test_brackets_inside_strings_do_not_count():
    text = json.dumps(["[" * 500, '\\"[[[[', "{" * 500])
    assert not exceeds_nesting(text, 1)
    assert exceeds_nesting('["\\\\"' + ",[[[" + "]]]]", 3)


# --- schema_types ----------------------------------------------------------------


def test_schema_types_reads_type_unions_and_nullable_in_order():
    schema = {"type": ["integer"], "anyOf": [{"type": "number"}, {"oneOf": [{"type": "boolean"}]}], "nullable": True}
    assert schema_types(schema) == ("integer", "number", "boolean", "null")
    assert schema_types({"type": "null", "nullable": True}) == ("null",)
    assert schema_types({"anyOf": [{"type": "string", "nullable": True}]}) == ("string", "null")
    assert schema_types("integer") == () and schema_types(None) == ()


def test_schema_types_survives_a_schema_deeper_than_the_stack_and_one_holding_itself():
    deep: dict = {"type": "integer"}
    for _ in range(50_000):
        deep = {"anyOf": [deep]}
    assert schema_types(deep) == ()  # too deep to be walked to the end: nothing is cast
    assert schema_types({"anyOf": [{"anyOf": [{"type": "integer"}]}]}) == ("integer",)
    loop: dict = {"type": "integer"}
    loop["anyOf"] = [loop]
    assert set(schema_types(loop)) == {"integer"}


def test_huge_numbers_stay_text_rather_than_raise():
    digits = "9" * 5_000  # past Python's int-string limit
    assert read_as(digits, ("integer",)) == digits
    assert read_as(digits, ("number",)) == digits
    assert read_as("1e400", ("number",)) == "1e400"
    assert read_as(f"[{digits}]", ("array",)) == f"[{digits}]"
    assert math.isclose(read_as("1e308", ("number",)), 1e308)
