"""The tests' own idea of "the same JSON value", written apart from the package's.

The package compares arguments with ``templatestudio.probe.same_json_value``;
a test that used it would accept whatever that function accepts, so a bug in
it (``True == 1``, ``1 == 1.0``) would pass every test built on it. Here a
value is first turned into a tagged tree (every scalar carries its JSON type
by name) and two trees are compared with ``==``: a different method, so one
mistake cannot hide in both.

The rules: ``true`` is not ``1``, ``1`` is not ``1.0``, ``null`` is only
``None``; an object's key order does not matter, a list's order does; keys
are strings. Floats compare by value (an infinity equals itself, NaN equals
nothing, as floats do). Anything else (a tuple, a set, bytes, a non-string
key, a subclass of a JSON type) is not JSON and is never equal to anything,
itself included: a reader must not return such a value, so a test meeting
one fails.
"""

from __future__ import annotations


class _NeverEqual:
    """Stands for a value JSON cannot hold: no comparison with it is true."""

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def tagged(value: object) -> object:
    """value as a tree of (JSON type name, content) pairs; an object as its (key, tree) pairs, sorted."""
    kind = type(value)  # the exact type: bool is a subclass of int, and that is the point
    if value is None:
        return ("null",)
    if kind is bool:
        return ("boolean", "true" if value else "false")
    if kind is int:
        return ("integer", value)
    if kind is float:
        # NaN equals nothing; tuples compare items by identity first, so it cannot stay in one.
        return _NeverEqual() if value != value else ("float", value)
    if kind is str:
        return ("string", value)
    if kind is list:
        return ("array", tuple(tagged(item) for item in value))
    if kind is dict:
        if not all(type(key) is str for key in value):
            return _NeverEqual()
        # Keys are unique, so sorting never compares two trees.
        return ("object", tuple(sorted((key, tagged(item)) for key, item in value.items())))
    return _NeverEqual()


def same_json(left: object, right: object) -> bool:
    """True when left and right are the same JSON value, types included."""
    return tagged(left) == tagged(right)


def same_calls(left, right) -> bool:
    """Two sequences of calls (each with ``name`` and ``arguments``): same length, order, names and values."""
    left, right = list(left), list(right)
    return len(left) == len(right) and all(
        type(a.name) is str and a.name == b.name and same_json(a.arguments, b.arguments) for a, b in zip(left, right)
    )
