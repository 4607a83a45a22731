"""A JSON schema whose numbers cannot overflow: bounds for the numbers a tool's schema leaves open.

Without bounds, JSON's grammar lets a model write a number that overflows
a float (``1e400``): Python's ``json`` reads it as ``inf``, which no JSON
arguments string can carry, and ``coerce`` keeps such a text value as
text. Bounded, xgrammar writes numbers in plain decimals (no exponent),
all finite; its integer bounds must fit in 64 bits. ``wire.structural_tag``
bounds every schema it hands xgrammar.

Not handled: a ``$ref`` is not followed (the ``$defs`` and ``definitions``
it points into are bounded where they stand); a number given only by
``const`` or ``enum`` is finite already.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["INTEGER_BOUNDS", "NUMBER_BOUNDS", "finite"]

NUMBER_BOUNDS = {"minimum": -1e308, "maximum": 1e308}
INTEGER_BOUNDS = {"minimum": -(2**63 - 1), "maximum": 2**63 - 1}
_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")


def finite(schema: object) -> object:
    """A copy of a JSON schema whose numbers without bounds get NUMBER_BOUNDS (so none overflows)."""
    if not isinstance(schema, Mapping):
        return schema
    bounded = dict(schema)
    kinds = schema.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    if kinds & {"number", "integer"}:
        bounds = INTEGER_BOUNDS if "number" not in kinds else NUMBER_BOUNDS
        for key, value in bounds.items():
            bounded.setdefault(key, value)
    for key in _SUBSCHEMAS:
        if key in bounded:
            bounded[key] = finite(bounded[key])
    for key in _SCHEMA_LISTS:
        if isinstance(bounded.get(key), list):
            bounded[key] = [finite(item) for item in bounded[key]]
    for key in _SCHEMA_MAPS:
        if isinstance(bounded.get(key), Mapping):
            bounded[key] = {name: finite(item) for name, item in bounded[key].items()}
    return bounded
