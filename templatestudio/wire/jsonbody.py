"""Decoding the JSON inside a call region, and checking that it has a call's shape.

``json.JSONDecoder.raw_decode`` decodes from an offset at C speed and says
where the value ended, so a region is decoded once, with no tokenising of
our own. Every failure becomes ``CallSyntaxError`` with a reason a person
can act on; nothing here raises anything else (deep nesting and integers
past Python's digit limit included).
"""

from __future__ import annotations

import json

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import JSON_SPACE, CallSyntaxError, Found, FoundJSON
from templatestudio.wire.json_scan import SPACE

_DECODER = json.JSONDecoder()


def skip_space(text: str, index: int) -> int:
    """The first index at or after index that is not JSON whitespace."""
    if index < len(text) and text[index] in JSON_SPACE:
        # A run is crossed by the regex at C speed: a call cut after 256 KB of
        # spaces took 27 ms here one character at a time (Inkling's close).
        return SPACE.match(text, index).end()
    return index


def decode_at(text: str, index: int, found: Found | None = None) -> tuple[object, int]:
    """The JSON value starting exactly at index and the offset just past it.

    found is what the region's extent already read, when text is that region:
    a value it decoded at index is returned as it is, not decoded again.
    """
    if type(found) is FoundJSON and found.start == index:
        return found.value, found.end
    try:
        return _DECODER.raw_decode(text, index)
    except json.JSONDecodeError as error:
        raise CallSyntaxError(f"invalid JSON at offset {error.pos}: {error.msg}") from None
    except RecursionError:
        raise CallSyntaxError("JSON nested too deeply to read") from None
    except ValueError as error:  # e.g. an integer past the interpreter's digit limit
        raise CallSyntaxError(f"JSON value cannot be read: {error}") from None


def decode_whole(text: str, start: int, end: int, found: Found | None = None) -> object:
    """The one JSON value that fills text[start:end], whitespace around it allowed (found: see decode_at)."""
    value, stop = decode_at(text, skip_space(text, start), found)
    if skip_space(text, stop) != end:
        raise CallSyntaxError(f"unexpected text after the JSON value at offset {stop}")
    return value


def call_from(
    payload: object,
    *,
    name_key: str = "name",
    argument_keys: tuple[str, ...] = ("arguments",),
    extras: dict | None = None,
    string_arguments: bool = False,
) -> tuple[ParsedToolCall, object]:
    """payload as (call, extras dict) when it has exactly a name, its arguments and allowed extras.

    extras maps each extra key allowed to a check on its value.
    string_arguments also accepts arguments written as a JSON string that
    decodes to an object (some models write them so); the call carries the
    decoded object.
    """
    if type(payload) is dict and len(payload) == 2 and len(argument_keys) == 1:
        # The common shape, settled in two lookups: the name and one arguments object, nothing else.
        name, arguments = payload.get(name_key), payload.get(argument_keys[0])
        if type(name) is str and name and type(arguments) is dict:
            return ParsedToolCall(name, arguments), {}
    if not isinstance(payload, dict):
        raise CallSyntaxError(f"a call must be a JSON object, not {type(payload).__name__}")
    name = payload.get(name_key)
    if not isinstance(name, str) or not name:
        raise CallSyntaxError(f"the call has no {name_key!r}" if name_key not in payload else
                              f"the call's {name_key!r} is an empty string" if name == "" else
                              f"the call's {name_key!r} is {_json_kind(name)}, not a string")
    present = [key for key in argument_keys if key in payload]
    if len(present) > 1:
        given = " and ".join(repr(key) for key in present)
        raise CallSyntaxError(f"the call to {name!r} has {given}: only one of them may hold its arguments")
    if not present:
        wanted = " or ".join(repr(key) for key in argument_keys)
        raise CallSyntaxError(f"the call to {name!r} needs exactly one of {wanted}")
    arguments = payload[present[0]]
    if isinstance(arguments, str) and string_arguments:
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            raise CallSyntaxError(f"the arguments of {name!r} are a string that is not JSON") from None
    if not isinstance(arguments, dict):
        raise CallSyntaxError(f"the arguments of {name!r} must be a JSON object")
    allowed = extras or {}
    found = {}
    for key, value in payload.items():
        if key in (name_key, present[0]):
            continue
        if key not in allowed or not allowed[key](value):
            raise CallSyntaxError(f"the call to {name!r} has an unexpected key {key!r}")
        found[key] = value
    return ParsedToolCall(name, arguments), found


def calls_from(items: list, *, numbered: bool = False, **keys) -> list[ParsedToolCall]:
    """The call of each item of a JSON list of calls, as ``call_from(item, **keys)`` reads it.

    The common item (a name and one arguments object, nothing else) is
    read here inline, as ``call_from``'s own first check reads it, without
    a call per item: a list of thousands of small calls spends most of its
    time in that call. Any other item goes to ``call_from``, whose error is
    raised, prefixed with the item's number when numbered.
    """
    name_key = keys.get("name_key", "name")
    argument_keys = keys.get("argument_keys", ("arguments",))
    checked = argument_keys[0] if len(argument_keys) == 1 else None
    calls = []
    append = calls.append
    for number, item in enumerate(items, start=1):
        if checked is not None and type(item) is dict and len(item) == 2:
            name, arguments = item.get(name_key), item.get(checked)
            if type(name) is str and name and type(arguments) is dict:
                append(ParsedToolCall(name, arguments))
                continue
        try:
            append(call_from(item, **keys)[0])
        except CallSyntaxError as error:
            if not numbered:
                raise
            raise CallSyntaxError(f"item {number} of the list: {error}") from None
    return calls


def looks_like_schema(arguments: object) -> bool:
    """Whether an 'arguments' object is a JSON schema (a tool's definition) rather than values."""
    return (
        isinstance(arguments, dict)
        and arguments.get("type") == "object"
        and isinstance(arguments.get("properties"), dict)
    )


def _json_kind(value: object) -> str:
    """value's JSON kind with its article, for an error message: "a number", "null"."""
    if value is None:
        return "null"
    kinds = {bool: "a boolean", int: "a number", float: "a number", list: "an array", dict: "an object"}
    return kinds.get(type(value), f"a {type(value).__name__}")
