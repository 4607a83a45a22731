"""Text values read by the type a JSON schema declares for them.

Models often write a typed value as text: Qwen3-Coder's XML format carries
every value as text, and small models quote numbers (``"limit": "10"``).
``coerce_arguments`` reads such a text by the parameter's schema, with the
rules transformers applies in ``parse_response(..., tools=...)``:

- The schema's types are tried in order: its ``type`` (a name or a list of
  names), then the types of its ``anyOf`` and ``oneOf`` choices, then
  ``null`` when it says ``nullable`` (``schema_types``). The first type the
  text reads as wins; ``string`` and unknown names never cast, so a text
  that reads as none of the types is kept as written.
- ``integer``: a whole number, also when written ``3.0`` or ``1e3``.
  ``number``: an int when the text has no ``.`` and is whole, else a float;
  NaN and infinities are refused. ``boolean``: ``true``/``false``/``1``/``0``
  in any case. ``null``: ``null`` or ``None``. ``array``/``object``: the
  text decodes as JSON to a list/dict.

Where this module is stricter than transformers (it keeps the text, and
``dispatch`` then tells the model the value has the wrong type), it is so
that no value is made up from a spelling the model did not write:

- Numbers, booleans and null must be spelled in ASCII, without ``_``
  digit separators, with only JSON whitespace (space, tab, CR, LF) around
  them. Python's ``int()`` also reads ``'١٢٣'`` (Arabic-Indic digits) as 123
  and ``'1_000'`` as 1000; those stay text here.
- An integer is read exactly: ``"3.0000000000000001"`` is not whole, so it
  stays text (transformers rounds through a float and gets 3), and a
  whole ``number`` written without a point keeps every digit it spells
  (``"12345678901234567890"`` does not become ``12345678901234567168``,
  nor ``"1e23"`` ``99999999999999991611392``), and a number too small for
  a float (``"1e-400"``) stays text rather than becoming 0.0.
- A JSON number that is whole (``10.0``, as a decoder reads ``10.0``) is
  an ``integer`` (JSON Schema counts it as one): for a parameter that admits
  integer and not number it is passed as the int, when a float holds it
  exactly (up to 2**53).
- A JSON text nested more than ``MAX_NESTING`` levels deep is not decoded
  (transformers raises ``RecursionError`` on ``'[' * 100000``).

Not handled: the items of arrays and the properties of objects are not
coerced (neither does transformers), nor are ``$ref``, ``allOf``,
``const`` or ``format``. JSON inside an array or object text is decoded by
Python's ``json`` module, so ``NaN`` and ``Infinity`` are accepted there, as
they are by transformers.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

__all__ = ["MAX_NESTING", "coerce_arguments", "exceeds_nesting", "read_as", "schema_types"]

# Deeper JSON than any tool argument needs, far below Python's recursion limit.
MAX_NESTING = 100
# A schema that contains itself (or is absurdly large) stops being walked here.
_MAX_SCHEMA_NODES = 10_000
# Python refuses to convert longer digit strings to int (sys.int_info).
_MAX_DIGITS = 4300

_JSON_SPACE = " \t\r\n"
_PLAIN_INTEGER = re.compile(r"[+-]?[0-9]+")
# Each digit belongs to one place in the pattern (possessive runs, a fraction only after a point), so
# a long text that fails near its end is refused in one pass: "[0-9]+\.?[0-9]*" split a run of digits
# every way before failing (32,000 digits and an "x": 14 s).
_DECIMAL = re.compile(r"[+-]?+(?:[0-9]++(?:\.[0-9]*+)?+|\.[0-9]++)(?:[eE][+-]?+[0-9]++)?+")
# What can change the nesting depth of a JSON text, or hide brackets in a string.
_STRUCTURE = re.compile(r'["\\\[\]{}]')


def schema_types(schema: Any) -> tuple[str, ...]:
    """The JSON types a schema admits, in the order a text is tried against them.

    Duplicates are kept, as they change nothing. A schema that is not a dict
    admits no type (and so casts nothing).
    """
    types: list[str] = []
    # Depth-first, by hand: a schema is data, and data may nest deeper than
    # Python's stack. ("nullable", start) entries run after a schema's choices.
    pending: list[tuple[str, Any]] = [("schema", schema)]
    visited = 0
    while pending and visited < _MAX_SCHEMA_NODES:
        kind, item = pending.pop()
        if kind == "nullable":
            if "null" not in types[item:]:
                types.append("null")
            continue
        visited += 1
        if not isinstance(item, dict):
            continue
        start = len(types)
        declared = item.get("type")
        if isinstance(declared, str):
            types.append(declared)
        elif isinstance(declared, list):
            types.extend(name for name in declared if isinstance(name, str))
        if item.get("nullable"):
            pending.append(("nullable", start))
        choices = [
            choice
            for union in ("anyOf", "oneOf")
            if isinstance(item.get(union), list)
            for choice in item[union]
        ]
        pending.extend(("schema", choice) for choice in reversed(choices))
    return tuple(types)


def exceeds_nesting(text: str, limit: int = MAX_NESTING) -> bool:
    """Whether a JSON text opens more than limit arrays/objects inside each other.

    Brackets inside JSON strings do not count. Linear in len(text), and it
    stops at the first bracket past the limit.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth, in_string, escaped_at = 0, False, -1
    for match in _STRUCTURE.finditer(text):
        char, at = match.group(), match.start()
        if in_string:
            if at == escaped_at:
                continue
            if char == "\\":
                escaped_at = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def _integer(text: str) -> int | None:
    if _PLAIN_INTEGER.fullmatch(text):
        return int(text) if len(text) <= _MAX_DIGITS else None
    if not _DECIMAL.fullmatch(text) or not math.isfinite(float(text)):
        return None
    exact = Decimal(text)
    return int(exact) if exact == exact.to_integral_value() else None


def _number(text: str) -> int | float | None:
    if not _DECIMAL.fullmatch(text):
        return None
    number = float(text)
    if not math.isfinite(number):
        return None
    if number == 0 and Decimal(text) != 0:
        return None  # "1e-400" is not 0.0: a value too small for a float stays text, not made up
    if _PLAIN_INTEGER.fullmatch(text):
        return int(text)  # every digit as written; a float would round past 2**53
    # transformers' rule: whole and written without a point ("2e3") is an int; read
    # exactly ("1e23" is 10**23, not the float's 99999999999999991611392). The float
    # above is finite, so the int has at most 309 digits.
    if "." not in text:
        exact = Decimal(text)
        if exact == exact.to_integral_value():
            return int(exact)
    return number


def _word(text: str) -> str | None:
    word = text.strip(_JSON_SPACE)
    return word if word.isascii() else None


def _container(text: str, kind: type) -> list | dict | None:
    if exceeds_nesting(text):
        return None
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: called with little stack left
        return None
    return decoded if isinstance(decoded, kind) else None


def _whole_float(value: float) -> bool:
    """Whether value is a whole number that a float holds exactly (2**53 and below)."""
    return value.is_integer() and abs(value) <= 2**53


_MISSING = object()


def _read_one(text: str, type_name: str) -> Any:
    """text read as one JSON type, or _MISSING."""
    if type_name in ("array", "object"):
        decoded = _container(text, list if type_name == "array" else dict)
        return _MISSING if decoded is None else decoded
    word = _word(text)
    if word is None:
        return _MISSING
    if type_name == "integer":
        value = _integer(word)
    elif type_name == "number":
        value = _number(word)
    elif type_name == "boolean":
        value = {"true": True, "1": True, "false": False, "0": False}.get(word.lower())
    elif type_name == "null":
        return None if word in ("null", "None") else _MISSING
    else:  # "string" and names this module does not know keep the text
        return _MISSING
    return _MISSING if value is None else value


def read_as(text: str, types: tuple[str, ...]) -> Any:
    """text read as the first of types it spells, else text itself."""
    for type_name in types:
        value = _read_one(text, type_name)
        if value is not _MISSING:
            return value
    return text


def coerce_arguments(arguments: dict, parameters_schema: dict) -> dict:
    """A copy of arguments with text values read by the type their schema declares.

    parameters_schema is the ``parameters`` object of a tool schema. A string
    given for a non-string parameter is read as that type (``"10"`` -> 10 for
    an integer, ``"true"`` -> True, ``"[1, 2]"`` -> [1, 2] for an array, by
    the rules in this module's docstring); a string that does not read as
    the type, a parameter the schema does not declare, and every value that
    is not a string are left as written (but a whole float for an integer
    parameter, above), for ``dispatch`` to reject or accept. Never raises on
    a value, however large or deeply nested; linear in the length of a text.
    """
    properties = parameters_schema.get("properties") if isinstance(parameters_schema, dict) else None
    typed = dict(arguments)
    if not isinstance(properties, dict):
        return typed
    for key, value in arguments.items():
        types = schema_types(properties.get(key))
        if not types:
            continue
        if isinstance(value, str):
            typed[key] = read_as(value, types)
        elif isinstance(value, float) and _whole_float(value) and "integer" in types and "number" not in types:
            typed[key] = int(value)
        elif isinstance(value, list) and "array" not in types:
            # A parameter written twice arrives as a list; transformers types each copy.
            typed[key] = [read_as(item, types) if isinstance(item, str) else item for item in value]
    return typed
