"""Hostile input to mcp_results and system_tools: kept as written, or refused by one precise error.

MCP results: text that is not an echo of ``structuredContent`` (any text,
nesting deeper than the JSON decoder goes, integers longer than Python
converts, JSON that differs only in type: ``true`` against ``1``, ``1.0``
against ``1``) is kept as the tool wrote it; text blocks that are all blank
read as an empty result; base64 with a non-ASCII character is refused
naming the block, the character and its offset.

System tools: a non-str instruction is a TypeError; a schema that is not
plain JSON (a set, an object, a non-str key, NaN or Infinity, a circular
reference, nesting deeper than ``MAX_DEPTH``, an int too long to write) is
refused naming the tool and the path to the value, while any plain JSON
schema is written as its JSON, unchanged. Examples are drawn with fixed
seeds (``derandomize``), so a failure replays.
"""

from __future__ import annotations

import base64
import json
import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.system_tools import MAX_DEPTH, tools_in_system_prompt

FIXED = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
QUESTION = [{"role": "user", "content": "How many yen is one euro?"}]

SCALARS = (
    st.none() | st.booleans() | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
OBJECTS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=5)


def compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --- mcp_results -------------------------------------------------------------


def mcp_text(wire: dict) -> str:
    pytest.importorskip("mcp.types", reason="the mcp extra is not installed")
    from templatestudio.mcp_results import mcp_result_text

    return mcp_result_text(wire)


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


# Text the JSON decoder gives up on in other ways than JSONDecodeError.
DEEP = st.builds(
    lambda opener, depth, closed: opener * depth + ("]" * depth if closed and opener == "[" else ""),
    st.sampled_from(["[", '{"a":', " [", "[1,"]), st.integers(2_000, 120_000), st.booleans(),
)
LONG_DIGITS = st.builds(
    lambda sign, digits, wrap: wrap.format(sign + "7" * digits),
    st.sampled_from(["", "-"]), st.integers(4_301, 30_000), st.sampled_from(["{}", "[{}]", '{{"ok": {}}}']),
)


@FIXED
@given(text=DEEP | LONG_DIGITS | st.text(), structured=OBJECTS)
def test_text_that_is_not_an_echo_is_kept_as_written(text, structured):
    wire = {"content": [text_block(text)], "structuredContent": structured}
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):
        decoded = None  # no JSON value: cannot be an echo (structured is an object)
    # Same JSON text with sorted keys: same values of the same types (true is not 1, 1.0 not 1).
    if json.dumps(decoded, sort_keys=True) == json.dumps(structured, sort_keys=True):
        assert mcp_text(wire) == compact(structured)
    else:
        assert mcp_text(wire) == f"{text}\n{compact(structured)}"


def twisted(value: object, rng: random.Random) -> tuple[object, bool]:
    """value with some bools made ints and some ints made floats, and whether any was."""
    if isinstance(value, bool):
        return (int(value), True) if rng.random() < 0.3 else (value, False)
    if isinstance(value, int):
        return (float(value), True) if rng.random() < 0.3 else (value, False)
    if isinstance(value, (dict, list)):
        entries = value.items() if isinstance(value, dict) else enumerate(value)
        pairs = [(key, twisted(item, rng)) for key, item in entries]
        changed = any(flag for _, (_, flag) in pairs)
        if isinstance(value, dict):
            return {key: item for key, (item, _) in pairs}, changed
        return [item for _, (item, _) in pairs], changed
    return value, False


@FIXED
@given(structured=OBJECTS, seed=st.integers(0, 2**32 - 1))
def test_an_echo_must_hold_the_same_json_types(structured, seed):
    rng = random.Random(seed)
    other, changed = twisted(structured, rng)
    # The server may space, indent and order its echo as it likes; only types and values count.
    echo = json.dumps(other, indent=rng.choice([None, 1, 2]), sort_keys=rng.random() < 0.5,
                      ensure_ascii=rng.random() < 0.5)
    result = mcp_text({"content": [text_block(echo), text_block("Source: ECB")], "structuredContent": structured})
    if changed:  # true read as 1, or 1 as 1.0, would change what the model reads
        assert result == f"{echo}\nSource: ECB\n{compact(structured)}"
    else:
        assert result == f"{compact(structured)}\nSource: ECB"


def test_true_is_not_an_echo_of_one():
    assert mcp_text({"content": [text_block('{"ok": true}')], "structuredContent": {"ok": 1}}) == (
        '{"ok": true}\n{"ok":1}'
    )


BLANK = st.text(alphabet=" \t\n\r\x0b\x0c\xa0\u2003\u3000", max_size=4)


@FIXED
@given(blocks=st.lists(BLANK, min_size=1, max_size=5), is_error=st.booleans())
def test_blocks_that_are_all_blank_read_as_no_blocks(blocks, is_error):
    wire = {"content": [text_block(block) for block in blocks], "isError": is_error}
    assert mcp_text(wire) == mcp_text({"content": [], "isError": is_error})


@FIXED
@given(blocks=st.lists(BLANK, min_size=1, max_size=4), words=st.text(min_size=1).filter(str.strip),
       where=st.integers(0, 4))
def test_one_block_with_text_keeps_every_block_as_written(blocks, words, where):
    blocks.insert(min(where, len(blocks)), words)
    assert mcp_text({"content": [text_block(block) for block in blocks]}) == "\n".join(blocks)


def binary_block(kind: str, data: str) -> dict:
    if kind == "resource":
        return {"type": "resource", "resource": {"uri": "file:///rates.bin", "blob": data}}
    return {"type": kind, "data": data, "mimeType": f"{kind}/x"}


@FIXED
@given(
    payload=st.binary(max_size=48),
    char=st.characters(min_codepoint=128, blacklist_categories=("Cs",)),
    offset=st.integers(0, 80),
    before=st.integers(0, 3),
    kind=st.sampled_from(["image", "audio", "resource"]),
)
def test_non_ascii_base64_names_the_block_the_character_and_its_offset(payload, char, offset, before, kind):
    data = base64.b64encode(payload).decode("ascii")
    offset = min(offset, len(data))
    data = data[:offset] + char + data[offset:]
    wire = {"content": [text_block("a")] * before + [binary_block(kind, data)]}
    with pytest.raises(ValueError) as raised:
        mcp_text(wire)
    assert str(raised.value) == (
        f"content block {before} ({kind}) carries data that is not valid base64: "
        f"a non-ASCII character {char!r} at offset {offset}"
    )


# --- system_tools ------------------------------------------------------------

NOT_STR = st.one_of(st.integers(), st.floats(), st.none(), st.booleans(), st.binary(), st.lists(st.text(), max_size=2))


@FIXED
@given(instruction=NOT_STR)
def test_an_instruction_that_is_not_a_str_is_a_type_error(instruction):
    schema = {"type": "function", "function": {"name": "f", "parameters": {}}}
    with pytest.raises(TypeError) as raised:
        tools_in_system_prompt(QUESTION, [schema], instruction=instruction)
    assert str(raised.value) == f"instruction must be a str, got {type(instruction).__name__}"


SCHEMA_VALUES = st.recursive(
    SCALARS,
    lambda inner: (st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
                   | st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20,
)


def as_lists(value: object) -> object:
    """value as JSON reads it back: tuples are lists."""
    if isinstance(value, dict):
        return {key: as_lists(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_lists(item) for item in value]
    return value


@FIXED
@given(parameters=st.dictionaries(st.text(max_size=6), SCHEMA_VALUES, max_size=5))
def test_a_plain_json_schema_is_written_unchanged(parameters):
    function = {"name": "f", "description": "d", "parameters": parameters}
    line = tools_in_system_prompt(QUESTION, [{"type": "function", "function": function}])[0]["content"].split("\n")[-1]
    assert line == json.dumps(function, ensure_ascii=False)
    assert json.loads(line) == as_lists(function)


def nested(depth: int) -> dict:
    """depth dicts, one inside the other."""
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_nesting_up_to_max_depth_is_written_one_more_level_is_refused():
    # The function object is the first level, its "parameters" the next.
    tools_in_system_prompt(QUESTION, [{"name": "f", "parameters": nested(MAX_DEPTH - 1)}])
    with pytest.raises(ValueError, match=rf"nests deeper than MAX_DEPTH \({MAX_DEPTH}\) levels"):
        tools_in_system_prompt(QUESTION, [{"name": "f", "parameters": nested(MAX_DEPTH)}])


class Opaque:
    pass


# (what to plant, the error, the words after "the value at PATH"); a callable plants
# a value built from the containers enclosing the spot (for circular references).
HOSTILE = [
    ({1, 2}, TypeError, " is a set, which JSON has no form for"),
    (frozenset(), TypeError, " is a frozenset, which JSON has no form for"),
    (b"raw", TypeError, " is a bytes, which JSON has no form for"),
    (Opaque(), TypeError, " is a Opaque, which JSON has no form for"),
    (1j, TypeError, " is a complex, which JSON has no form for"),
    (math.nan, ValueError, " is nan, which JSON has no form for"),
    (math.inf, ValueError, " is inf, which JSON has no form for"),
    (-math.inf, ValueError, " is -inf, which JSON has no form for"),
    (10**5000, ValueError, " is an int too long for Python to write as digits"),
    ({1: "one"}, TypeError, " has the key 1 (int); JSON keys are str"),
    ({None: "x"}, TypeError, " has the key None (NoneType); JSON keys are str"),
    ({("a",): "x"}, TypeError, " has the key ('a',) (tuple); JSON keys are str"),
    ({"ok": 1, True: 2}, TypeError, " has the key True (bool); JSON keys are str"),
    (lambda enclosing: enclosing[0], ValueError, " is a dict that encloses it (a circular reference)"),
    (lambda enclosing: enclosing[-1], None, " that encloses it (a circular reference)"),
    (lambda enclosing: nested(MAX_DEPTH + 1), ValueError, f" nests deeper than MAX_DEPTH ({MAX_DEPTH}) levels"),
]


@FIXED
@given(
    parameters=st.dictionaries(st.text(max_size=6), SCHEMA_VALUES, max_size=5),
    hostile=st.sampled_from(HOSTILE),
    count=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_schema_that_is_not_plain_json_is_refused_naming_the_tool_and_path(parameters, hostile, count, seed):
    rng = random.Random(seed)
    planted, error, words = hostile
    functions = [{"name": f"tool_{i}", "parameters": json.loads(json.dumps(as_lists(parameters)))}
                 for i in range(count)]
    position = rng.randrange(count)
    # Walk down from the bad tool's parameters to a random container, then plant there.
    spot, path, enclosing = functions[position]["parameters"], "parameters", [functions[position]]
    while True:
        enclosing.append(spot)
        inner = [(key, item) for key, item in (spot.items() if isinstance(spot, dict) else enumerate(spot))
                 if isinstance(item, (dict, list))]
        if not inner or rng.random() < 0.4:
            break
        key, spot = rng.choice(inner)
        path += f".{key}" if isinstance(enclosing[-1], dict) else f"[{key}]"
    value = planted(enclosing) if callable(planted) else planted
    if isinstance(spot, dict):
        spot["planted"] = value
        path += ".planted"
    else:
        spot.append(value)
        path += f"[{len(spot) - 1}]"
    if error is None:  # a circular reference to the spot itself: a dict or a list
        error, words = ValueError, f" is a {type(spot).__name__}{words}"
    with pytest.raises(error) as raised:
        tools_in_system_prompt(QUESTION, [{"type": "function", "function": f} for f in functions])
    expected = f"tools[{position}] (tool_{position}) cannot be written as JSON: the value at {path}"
    message = str(raised.value)
    if "nests deeper" in words:  # reported where the nesting passes the limit, inside the planted value
        assert message.startswith(expected + ".a") and message.endswith(words)
    else:
        assert message == expected + words
