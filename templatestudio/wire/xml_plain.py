"""The common XML-style call in one match: ``plain_element``, ``plain_pairs`` and what reads their matches.

On the XML-style wires (``wire.xml_params``) a value is unescaped text and
may hold the wire's markers, so where it ends is searched value by value
(``find_boundary``). Most calls hold no ``<`` in any value, and in such a
value no boundary that these wires declare can start but its own closer:
each starts with a ``<``, or with a newline just before one
(``xml_params.ValueEnds.at_markup``). Such a call is matched whole here, in
one step, and reads exactly what the search would; anything else (a value
holding markup, a closer left out) does not match and is searched.

Not handled: everything but that common call, by design (the caller falls
back to ``xml_params``); a key given twice is refused here as there.
"""

from __future__ import annotations

import functools
import re

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.arguments import KeyValuePairs, XmlParameters
from templatestudio.wire.base import WS, CallSyntaxError

TAG_CHARS = r"[^<>\n]"  # what a key or name inside a tag may hold, by default


def strip_one_newline(value: str) -> str:
    """value less one newline at its start and one at its end, where it has them."""
    # The writer put one newline on each side; one is taken, so a value that
    # itself starts or ends with a newline comes back whole.
    if value.startswith("\n"):
        value = value[1:]
    return value[:-1] if value.endswith("\n") else value


@functools.lru_cache(maxsize=None)
def plain_element(name: tuple[str, str, str], shape: XmlParameters, call_close: str | None,
                  name_chars: str = TAG_CHARS, key_chars: str = TAG_CHARS, call_open: str = "") -> re.Pattern:
    """The common call in one match: call_open, whitespace, the named element (name: its open, name_close and
    close literals) whose values hold no ``<``, then (group ``closer``) whitespace and call_close when it follows.

    Group ``name`` is the element's name, group ``element`` spans the
    element. In a value with no ``<`` no boundary that ``parameter_ends``
    builds can start but its own closer (each begins with a ``<``, or a
    newline just before one), so this reads exactly what ``find_boundary``
    would, without a search per value; anything else (a value holding
    markup, a missing closer) does not match and is read value by value.
    """
    open_, name_close, close = (re.escape(part) for part in name)
    parameter = f"{WS}*{re.escape(shape.open)}{key_chars}+{re.escape(shape.name_close)}[^<]*{re.escape(shape.close)}"
    closer = f"(?:{WS}*(?P<closer>{re.escape(call_close)}))?" if call_close else "(?P<closer>)"
    element = f"{WS}*{open_}(?P<name>{name_chars}+){name_close}(?:{parameter})*{WS}*{close}"
    return re.compile(f"{re.escape(call_open)}(?P<element>{element}){closer}")


def plain_pairs(pairs: KeyValuePairs, call: tuple[str, str], name: str) -> tuple[re.Pattern, re.Pattern]:
    """The common call of a key/value-pair wire (GLM's) in one match, and the pattern of one of its pairs.

    The call: call's opening, a name (group ``name``; name is its regex),
    pairs whose keys and values hold no ``<`` with whitespace around them,
    and (group ``closer``) the call's closing. As with ``plain_element``, a
    value with no ``<`` holds no boundary but its own closer when the
    wire's boundaries start at markup (``ValueEnds.at_markup``). The pair
    pattern's groups are the key and the value.
    """
    def pair(text: str) -> str:
        return (f"{WS}*{re.escape(pairs.key_open)}{text}{re.escape(pairs.key_close)}{WS}*"
                f"{re.escape(pairs.value_open)}{text}{re.escape(pairs.value_close)}")

    whole = f"{re.escape(call[0])}(?P<name>{name})(?:{pair('[^<]*')})*{WS}*(?P<closer>{re.escape(call[1])})"
    return re.compile(whole), re.compile(pair("([^<]*)"))


@functools.lru_cache(maxsize=None)
def _plain_parameter(shape: XmlParameters, key_chars: str) -> re.Pattern:
    return re.compile(f"{WS}*{re.escape(shape.open)}({key_chars}+){re.escape(shape.name_close)}([^<]*)"
                      f"{re.escape(shape.close)}")


def plain_call(whole: re.Match, shape: XmlParameters) -> ParsedToolCall:
    """The call plain_element matched: its parameters read one match each, as read_parameters would."""
    arguments: dict[str, str] = {}
    for parameter in _plain_parameter(shape, TAG_CHARS).finditer(whole.string, whole.end("name"), whole.end("element")):
        key, value = parameter.groups()
        if key in arguments:
            raise CallSyntaxError(f"parameter {key!r} is given twice")
        arguments[key] = strip_one_newline(value) if shape.newline_inside else value
    return ParsedToolCall(whole.group("name"), arguments)
