"""A name right after the call's opening literal, then key/value element pairs: GLM's shape, from its declaration.

``<OPEN>NAME (KEY_OPEN k KEY_CLOSE ws VALUE_OPEN v VALUE_CLOSE ws)* CLOSE``,
every literal taken from the ``WireShape`` (a ``NameBetween`` with no
closing literal, ``KeyValuePairs``, a ``Call`` with both literals):
``wire.shape_reader`` builds the opener and the reader of such a shape
here, for GLM's module and for a shape derived from a template alike.

The name runs from the opening literal over the declared name characters;
a call opens only when the name is followed, after whitespace, by a key's
opening tag or the call's closer, so prose naming the literal stays text.
Nothing is escaped, so a value may hold any of the tags: an end-of-value
tag ends the value only when whitespace and then the next key or the
call's closer follow it, and the call ends at the first closer outside a
value (``ends``, read by ``wire.xml_params``' scanner, which the extent
and the reader share). A left-out end-of-value tag is recovered where the
structure stands unmistakably: the next key and its value tag, or the
call's closer followed only by whitespace and the reply's end, the next
call or a stop token.

Refused: a key without its value, a key given twice, anything else
between the tags, a block never closed, a value whose closer is missing
that also holds one that did not end it. Not handled: a value holding the
shape's own boundary (it reads as that boundary; the module lists it as a
wire limit), a key holding its closing tag.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import chars, either, literal, run
from templatestudio.wire.arguments import KeyValuePairs
from templatestudio.wire.base import SPACES, WS, CallSyntaxError, Opener, opener_pattern
from templatestudio.wire.xml_extent import ValueAwareExtent
from templatestudio.wire.xml_params import Boundary, ValueEnds, checked_value, find_boundary, value_ends
from templatestudio.wire.xml_plain import plain_pairs

# ``wire`` below is a ``wire.shape.WireShape``; the name is not imported, as
# shape.py reaches this module through ``wire.shape_reader``.

_SPACE = re.compile(f"{WS}*")


@functools.cache
def ends(wire: WireShape) -> ValueEnds:  # noqa: F821 - see the note above
    """Where a value ends: what the writer puts after one (whitespace, then the next key or the closer)."""
    call, pairs = wire.call, wire.arguments
    key = f"{re.escape(pairs.key_open)}[^<>\n]*{re.escape(pairs.key_close)}"
    after_call = "|".join(re.escape(token) for token in (call.open, *wire.stop_tokens))
    return value_ends(
        pairs.value_close, f"{re.escape(pairs.key_open)}|{re.escape(call.close)}",
        reopen=f"\n?{key}{WS}*{re.escape(pairs.value_open)}",
        end=f"\n?{re.escape(call.close)}{WS}*(?:\\Z|{after_call})",
    )


@functools.cache
def _plain(wire: WireShape) -> tuple[re.Pattern, re.Pattern]:  # noqa: F821
    # The common call (no "<" in a key or value) in one match; the ends' boundaries all start at markup.
    return plain_pairs(wire.arguments, (wire.call.open, wire.call.close), f"{wire.name.chars}+")


def opener(wire: WireShape) -> Opener:  # noqa: F821
    """The call's literal, a name, then (after whitespace) a key's opening tag or the call's closer."""
    call, pairs, name_chars = wire.call, wire.arguments, wire.name.chars
    passed_over = (pairs.key_open, pairs.key_close)  # a key is passed over whole, as the reader reads it
    plain, _ = _plain(wire)
    return Opener(
        call.open,
        opener_pattern(call.open, chars(name_chars), run(chars(name_chars)), SPACES,
                       either(literal(pairs.key_open), literal(call.close))),
        lambda: ValueAwareExtent(len(call.open), re.escape(pairs.value_open), call.close, ends(wire), passed_over,
                                 plain=plain),
    )


def reader(wire: WireShape):  # noqa: F821
    """The region reader: one call per block (the extent ends every region just past the call's closer)."""
    plain, plain_pair = _plain(wire)

    def read_region(region: str, opener: Opener, found) -> list[CallSpan]:
        whole = plain.match(region)
        if whole is not None and whole.end() == len(region):
            arguments: dict[str, str] = {}
            for pair in plain_pair.finditer(region, whole.end("name"), whole.start("closer")):
                key, value = pair.groups()
                if key in arguments:
                    raise CallSyntaxError(f"the key {key!r} is given twice")
                arguments[key] = value
            return [CallSpan(ParsedToolCall(whole.group("name"), arguments), 0, len(region))]
        return _read_searched(region, wire)

    return read_region


def _read_searched(region: str, wire: WireShape) -> list[CallSpan]:  # noqa: F821
    """The call in region, each value's end searched for (``ends``): what the one match stands for."""
    call, pairs, value_end = wire.call, wire.arguments, ends(wire)
    end = len(region) - len(call.close)
    name = re.compile(f"{wire.name.chars}+").match(region, len(call.open), end)
    if name is None:
        raise CallSyntaxError(f"no function name right after {call.open}")
    arguments, position = read_pairs(region, _SPACE.match(region, name.end(), end).end(), end, pairs, value_end)
    if position != end:
        raise CallSyntaxError(f"expected {pairs.key_open} or {call.close} at offset {position}")
    return [CallSpan(ParsedToolCall(name.group(), arguments), 0, len(region))]


def read_pairs(region: str, position: int, end: int, pairs: KeyValuePairs, value_end: ValueEnds, *,
               past_type: Callable[[str, int, int, str], int] | None = None) -> tuple[dict[str, str], int]:
    """The key/value pairs from position on (each value ends by value_end), and the offset past them and whitespace.

    past_type: steps over what a wire writes between a key and its value
    (K2 Horizon's type tag), given (region, position, end, key). A value's
    boundary may be the closer past end: it is looked for up to the region's
    end. Refused: a key without its closer or its value, a value with no
    closer that ends it, a key given twice.
    """
    arguments: dict[str, str] = {}
    while region.startswith(pairs.key_open, position):
        key_end = region.find(pairs.key_close, position + len(pairs.key_open), end)
        if key_end == -1:
            raise CallSyntaxError(f"a key at offset {position} has no {pairs.key_close}")
        key = region[position + len(pairs.key_open) : key_end]
        position = _SPACE.match(region, key_end + len(pairs.key_close), end).end()
        if past_type is not None:
            position = past_type(region, position, end, key)
        if not region.startswith(pairs.value_open, position):
            raise CallSyntaxError(f"the key {key!r} has no {pairs.value_open} after it")
        boundary = find_boundary(region, position + len(pairs.value_open), len(region), value_end, True)
        if not isinstance(boundary, Boundary):
            raise CallSyntaxError(f"the value of {key!r} has no {pairs.value_close} that ends it")
        if key in arguments:
            raise CallSyntaxError(f"the key {key!r} is given twice")
        arguments[key] = checked_value(region, position + len(pairs.value_open), boundary, value_end, key)
        position = _SPACE.match(region, boundary.resume, end).end()
    return arguments, position
