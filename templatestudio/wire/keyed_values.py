"""The value grammar of Google's call syntax: ``{key:value,…}`` with strings between one delimiter.

Gemma 4 (``<|"|>``) and FunctionGemma (``<escape>``) write call arguments
the same way: keys bare words (or between the delimiter), strings between
the delimiter with nothing escaped, bare numbers (ASCII digits only:
``1٢٣`` is refused, never read as 123), ``true``, ``false``, ``null`` (also
``None``/``none``, which templates write for a Python None), lists and
nested objects, no whitespace inside. ``KeyedValues(text, quote)`` reads
one value of it; ``write_value`` writes one; ``read_named_values`` reads a
whole call region ``OPEN NAME_OPEN name {…} CLOSE`` for a declared shape
(``wire.shape``). Every failure is ``CallSyntaxError`` with the offset.

Not handled: a string holding the delimiter (nothing escapes it), a key
that is not a bare word unless it is written between the delimiters.
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import CallSyntaxError, Found

MAX_NESTING = 100
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
KEY = re.compile(r"[^\W0-9][\w\-.]*")
_WORDS = {"true": True, "false": False, "null": None, "None": None, "none": None}


class KeyedValues:
    """Reads values from text, whose strings sit between quote and quote."""

    def __init__(self, text: str, quote: str) -> None:
        self.text = text
        self.quote = quote

    def value(self, index: int, depth: int) -> tuple[object, int]:
        text = self.text
        if depth > MAX_NESTING:
            raise CallSyntaxError("values nested too deeply")
        if text.startswith(self.quote, index):
            return self.string(index)
        if text.startswith("{", index):
            return self.object(index, depth + 1)
        if text.startswith("[", index):
            return self.list(index, depth + 1)
        number = NUMBER.match(text, index)
        if number is not None:
            literal_text = number.group(0)
            try:
                value = float(literal_text) if (number.group(1) or number.group(2)) else int(literal_text)
            except ValueError as error:  # past the interpreter's digit limit
                raise CallSyntaxError(f"number at offset {index} cannot be read: {error}") from None
            return value, number.end()
        word = KEY.match(text, index)
        if word is not None and word.group(0) in _WORDS:
            return _WORDS[word.group(0)], word.end()
        raise CallSyntaxError(f"no value at offset {index}")

    def string(self, index: int) -> tuple[str, int]:
        body = index + len(self.quote)
        end = self.text.find(self.quote, body)
        if end == -1:
            raise CallSyntaxError("a string is never closed")
        return self.text[body:end], end + len(self.quote)

    def object(self, index: int, depth: int) -> tuple[dict, int]:
        text, result = self.text, {}
        index += 1
        if text.startswith("}", index):
            return result, index + 1
        while True:
            if text.startswith(self.quote, index):
                key, index = self.string(index)
            else:
                found = KEY.match(text, index)
                if found is None:
                    raise CallSyntaxError(f"no key at offset {index}")
                key, index = found.group(0), found.end()
            if key in result:
                raise CallSyntaxError(f"key {key!r} is given twice")
            if not text.startswith(":", index):
                raise CallSyntaxError(f"expected : after key {key!r}")
            result[key], index = self.value(index + 1, depth)
            if text.startswith(",", index):
                index += 1
            elif text.startswith("}", index):
                return result, index + 1
            else:
                raise CallSyntaxError(f"expected , or }} at offset {index}")

    def list(self, index: int, depth: int) -> tuple[list, int]:
        text, result = self.text, []
        index += 1
        if text.startswith("]", index):
            return result, index + 1
        while True:
            item, index = self.value(index, depth)
            result.append(item)
            if text.startswith(",", index):
                index += 1
            elif text.startswith("]", index):
                return result, index + 1
            else:
                raise CallSyntaxError(f"expected , or ] at offset {index}")


def write_value(value: object, quote: str, null: str = "null") -> str:
    """value in the grammar, strings between quote, a None as null; keys written bare."""
    if isinstance(value, str):
        return f"{quote}{value}{quote}"
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return null
    if isinstance(value, dict):
        return "{" + ",".join(f"{key}:{write_value(item, quote, null)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(write_value(item, quote, null) for item in value) + "]"
    return repr(value)


def bad_key(key: str) -> bool:
    """Whether key cannot be written bare."""
    return KEY.fullmatch(key) is None


def any_key(value: object, predicate) -> bool:
    """Whether predicate holds for any key in value, at any depth."""
    if isinstance(value, dict):
        return any(predicate(key) or any_key(item, predicate) for key, item in value.items())
    if isinstance(value, list):
        return any(any_key(item, predicate) for item in value)
    return False


def read_named_values(
    region: str, found: Found | None, *, open_literal: str, name_open: str, quote: str, close: str,
    close_optional: bool,
) -> list[CallSpan]:
    """The one call in region: open_literal, name_open, a bare-word name, an object of this grammar, close.

    found is unused (the extent decodes nothing here); it keeps the signature of the other derived readers.
    """
    start = len(open_literal)
    name = KEY.match(region, start + len(name_open)) if region.startswith(name_open, start) else None
    if name is None or not region.startswith("{", name.end()):
        raise CallSyntaxError(f"expected {name_open}NAME{{ after {open_literal}")
    arguments, after = KeyedValues(region, quote).object(name.end(), 1)
    whole = region.startswith(close, after) and after + len(close) == len(region)
    if not whole and not (close_optional and after == len(region)):
        raise CallSyntaxError(f"expected {close} at offset {after}")
    return [CallSpan(ParsedToolCall(name.group(), arguments), 0, len(region))]
