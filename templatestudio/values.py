"""Call arguments as JSON values: comparing them strictly, and turning what arrived into a dict.

This module sits at the bottom of the package (it imports nothing from it),
so that every layer can use it: the probe compares what a format read back
with the probe's arguments, the reader compares a response template's
calls with its own reading, and the reader turns a response template's
arguments (a dict, or a JSON string) into a dict.

The course module ``tools`` keeps its own ``normalize_arguments`` with the
same rule: that one is the tutorial's (notebook 6 builds it and shows it as
written), and the reader must not import the course module, so
``as_arguments`` here is the package's copy. Change the rule in both.

Not handled: values that are not JSON (tuples, sets, bytes, NaN against
NaN) compare by Python's ``==`` on the same type only.
"""

from __future__ import annotations

import json

__all__ = ["as_arguments", "same_json_value", "spellings"]


def spellings(value: object, *, ensure_ascii: bool = True) -> set[str]:
    """The texts a template may write for value as text: its JSON (spaced or compact) or Python's str()."""
    return {json.dumps(value, ensure_ascii=ensure_ascii),
            json.dumps(value, ensure_ascii=ensure_ascii, separators=(",", ":")), str(value)}


def same_json_value(value: object, expected: object) -> bool:
    """Equal and of the same JSON type all the way down (True is not 1, 1 is not 1.0)."""
    if isinstance(expected, dict):
        return (
            isinstance(value, dict)
            and value.keys() == expected.keys()
            and all(same_json_value(value[key], expected[key]) for key in expected)
        )
    if isinstance(expected, list):
        return (
            isinstance(value, list)
            and len(value) == len(expected)
            and all(same_json_value(v, e) for v, e in zip(value, expected))
        )
    return type(value) is type(expected) and value == expected


def as_arguments(arguments: object) -> dict:
    """A call's arguments as a dict: a dict as it is, a string decoded as a JSON object.

    Raises ``ValueError`` for a string that decodes to anything but an
    object (``json.JSONDecodeError``, a ``ValueError``, for one that is not
    JSON) and for any other type: only a mapping of names to values can be
    a call's keyword arguments.
    """
    if isinstance(arguments, dict):
        return arguments
    if not isinstance(arguments, str):
        raise ValueError(f"arguments must be a dict or a JSON string, got {type(arguments).__name__}")
    decoded = json.loads(arguments)
    if not isinstance(decoded, dict):
        raise ValueError(f"arguments did not decode to a JSON object: {arguments!r}")
    return decoded
