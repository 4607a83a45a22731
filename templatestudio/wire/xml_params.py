"""XML-style parameters: the reader of ``OPEN KEY NAME_CLOSE value CLOSE`` runs and of the element around them.

The shape is declared once, as ``wire.arguments.XmlParameters`` (whose
``write`` is the writer) and, for the element named in its opening tag that
holds the parameters (Qwen3-Coder's and Seed-OSS's ``<function=NAME>`` …
``</function>``), any declaration with ``open``, ``name_close`` and
``close`` literals (``wire.shape.Invoke``). This module reads what those
declarations write, the way ``tagged_json`` reads JSON bodies:

- ``read_parameters``: parameters one after another, whitespace allowed
  before each; a value is everything up to the first CLOSE (exactly as
  written, or with one newline taken off each end when the shape declares
  ``newline_inside``); a key given twice makes the call unreadable;
- ``read_invoke``: the named element, its parameters and its closing tag;
- ``xml_limits``: the arguments such a wire cannot carry.

Not handled: a value holding CLOSE (no escaping exists on these wires),
keys or names holding a character outside ``key_chars`` / ``name_chars``
(by default ``<``, ``>`` and newline), values typed by their tag
(``XmlParameters.typed``, DeepSeek's DSML: still that format's own reader).
"""

from __future__ import annotations

import functools
import re
from typing import Protocol

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.arguments import XmlParameters
from templatestudio.wire.base import WS, CallSyntaxError, WireLimit, any_string

TAG_CHARS = r"[^<>\n]"  # what a key or name inside a tag may hold, by default
_SPACE = re.compile(f"{WS}*")


class NamedElement(Protocol):
    """An element named in its opening tag: open NAME name_close … close (``wire.shape.Invoke``)."""

    open: str
    name_close: str
    close: str


@functools.lru_cache(maxsize=None)
def _tag(open_literal: str, close_literal: str, inner: str) -> re.Pattern:
    """Whitespace, then open_literal, one or more inner characters (group 1) and close_literal."""
    return re.compile(f"{WS}*{re.escape(open_literal)}({inner}+){re.escape(close_literal)}")


def _strip_one_newline(value: str) -> str:
    # The writer put one newline on each side; one is taken, so a value that
    # itself starts or ends with a newline comes back whole.
    if value.startswith("\n"):
        value = value[1:]
    return value[:-1] if value.endswith("\n") else value


def read_parameters(
    region: str, position: int, end: int, shape: XmlParameters, *, key_chars: str = TAG_CHARS
) -> tuple[dict[str, str], int]:
    """The parameters from position on (region[:end] only) and the offset after them and the whitespace that follows.

    Reading stops where no further parameter opens; the caller checks what
    stands there. Values are text: the format's ``string_arguments`` types
    them against the tool's schema.
    """
    opening = _tag(shape.open, shape.name_close, key_chars)
    close = shape.close
    strip = shape.newline_inside
    arguments: dict[str, str] = {}
    while (parameter := opening.match(region, position, end)) is not None:
        key = parameter.group(1)
        value_end = region.find(close, parameter.end(), end)
        if value_end == -1:
            raise CallSyntaxError(f"the value of {key!r} has no {close}")
        if key in arguments:
            raise CallSyntaxError(f"parameter {key!r} is given twice")
        value = region[parameter.end() : value_end]
        arguments[key] = _strip_one_newline(value) if strip else value
        position = value_end + len(close)
    return arguments, _SPACE.match(region, position, end).end()


def read_invoke(
    region: str, position: int, end: int, name: NamedElement, shape: XmlParameters, *,
    name_chars: str = TAG_CHARS, no_head: str | None = None,
) -> tuple[ParsedToolCall, int]:
    """The element at position (whitespace first) in region[:end], and the offset just past its closing tag.

    no_head: the refusal when no opening tag stands there (a format's own
    words); by default "no OPEN NAME NAME_CLOSE at offset N".
    """
    head = _tag(name.open, name.name_close, name_chars).match(region, position, end)
    if head is None:
        at = _SPACE.match(region, position, end).end()
        raise CallSyntaxError(no_head or f"no {name.open}NAME{name.name_close} at offset {at}")
    arguments, position = read_parameters(region, head.end(), end, shape)
    if not region.startswith(name.close, position):
        raise CallSyntaxError(f"expected {name.close} or another parameter at offset {position}")
    return ParsedToolCall(head.group(1), arguments), position + len(name.close)


def xml_limits(shape: XmlParameters, call_close: str, non_string: str) -> tuple[WireLimit, ...]:
    """What the declared parameters cannot carry: a value holding a closer, a key the tag cannot hold, a non-string.

    non_string says what the wire does with a value that is not a string
    (the writer spells it as text; the reader cannot tell it was not one).
    """
    return (
        WireLimit(f"a string holding {shape.close}, which ends the value",
                  lambda arguments: any_string(arguments, lambda s: shape.close in s)),
        WireLimit(f"a string holding {call_close}, which ends the call",
                  lambda arguments: any_string(arguments, lambda s: call_close in s)),
        WireLimit("a key that is empty or holds <, > or a newline: the tag cannot hold it",
                  lambda arguments: any(not key or any(c in key for c in "<>\n") for key in arguments)),
        WireLimit(f"a value that is not a string: {non_string}",
                  lambda arguments: any(not isinstance(value, str) for value in arguments.values())),
    )
