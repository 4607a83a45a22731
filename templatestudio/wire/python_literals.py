"""Python literal values read from text, never evaluated: ``PythonLiterals`` and Python's identifier lexicon.

Read: strings (single or double quotes, Python escapes), ASCII integers and
floats, ``True``/``False``/``None``, lists and string-keyed dicts, nested up
to ``MAX_NESTING`` containers. Used by the pythonic format (its call
grammar builds on ``PythonLiterals``) and by Apriel 1.5's Python dict
arguments. Not through ``ast`` beyond one string literal alone (which
holds no identifier): ``ast`` NFKC-normalises identifiers, so a name is
matched here by ``IDENTIFIER`` and returned exactly as written.

Not handled: tuples, sets, bytes, triple-quoted strings, numbers with
``_``, complex numbers, expressions of any kind.
"""

from __future__ import annotations

import ast
import re

from templatestudio.wire.base import CallSyntaxError

MAX_NESTING = 100
SPACE = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)")
# Possessive: a long string is crossed at C speed, never backtracked through.
_STRING = re.compile(r"""'(?:[^'\\\n]++|\\.)*+'|"(?:[^"\\\n]++|\\.)*+\"""", re.S)
# What only Python's own reading of a string literal settles: escapes, and the
# characters its tokenizer refuses inside one (a CR ends the line, NUL the source).
_NEEDS_PYTHON = re.compile(r"[\\\r\x00]")

# Identifier characters as Python has them, plus the connector punctuation
# (U+203F, U+2040, U+2054, U+FE33-4, U+FE4D-F, U+FF3F) that NFKC would turn
# into "_": such a name is read as written, never as the ASCII one.
CONNECTORS = "\u203f\u2040\u2054\ufe33\ufe34\ufe4d-\ufe4f\uff3f"
IDENTIFIER = re.compile(rf"(?:[^\W0-9]|[{CONNECTORS}])[\w.{CONNECTORS}]*")  # dotted names too
WORDS = {"True": True, "False": False, "None": None}


class PythonLiterals:
    """Reads literal values from text at given offsets; each method returns (value, offset past it)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def space(self, index: int) -> int:
        text = self.text
        if index < len(text) and text[index] not in " \t\r\n":
            return index  # the common case, without a regex call
        return SPACE.match(text, index).end()

    def value(self, index: int, depth: int) -> tuple[object, int]:
        text = self.text
        if depth > MAX_NESTING:
            raise CallSyntaxError("values nested too deeply")
        string = _STRING.match(text, index)
        if string is not None:
            literal_text = string.group(0)
            if not _NEEDS_PYTHON.search(literal_text):
                return literal_text[1:-1], string.end()  # no escapes: the text between the quotes
            try:  # one string literal alone: no identifiers, nothing normalised
                return ast.literal_eval(string.group(0)), string.end()
            except (ValueError, SyntaxError) as error:
                raise CallSyntaxError(f"string at offset {index} cannot be read: {error}") from None
        if text.startswith("[", index) or text.startswith("{", index):
            return self.container(index, depth + 1)
        number = _NUMBER.match(text, index)
        if number is not None and not IDENTIFIER.match(text, number.end()):
            literal_text = number.group(0)
            try:
                is_float = any(mark in literal_text for mark in ".eE")
                return (float(literal_text) if is_float else int(literal_text)), number.end()
            except ValueError as error:
                raise CallSyntaxError(f"number at offset {index} cannot be read: {error}") from None
        word = IDENTIFIER.match(text, index)
        if word is not None and word.group(0) in WORDS:
            return WORDS[word.group(0)], word.end()
        raise CallSyntaxError(f"no literal value at offset {index}")

    def container(self, index: int, depth: int) -> tuple[object, int]:
        text = self.text
        is_dict = text[index] == "{"
        close = "}" if is_dict else "]"
        result: dict | list = {} if is_dict else []
        index = self.space(index + 1)
        while not text.startswith(close, index):
            if is_dict:
                key, index = self.value(index, depth)
                if not isinstance(key, str):
                    raise CallSyntaxError("dict keys must be strings")
                index = self.space(index)
                if not text.startswith(":", index):
                    raise CallSyntaxError(f"expected : at offset {index}")
                result[key], index = self.value(self.space(index + 1), depth)
            else:
                item, index = self.value(index, depth)
                result.append(item)
            index = self.space(index)
            if text.startswith(",", index):
                index = self.space(index + 1)
            elif not text.startswith(close, index):
                raise CallSyntaxError(f"expected , or {close} at offset {index}")
        return result, index + 1
