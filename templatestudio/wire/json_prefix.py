"""One JSON value's canonical text, given out as its raw text arrives: what argument deltas are made of.

A server sends a call's arguments as the string
``json.dumps(arguments, ensure_ascii=False)`` (the form vLLM compares
against), while the model writes them with its own spacing and escapes.
``JsonPrefix`` turns the raw text, fed in any pieces, into the part of that
canonical string that is already certain: punctuation with the canonical
separators (``", "``, ``": "``), keys once complete, string contents
as they arrive (each character's canonical escape is its own), a number or
``true``/``false``/``null`` once it ends. Fed a whole value, the output
is exactly ``json.dumps(json.loads(raw), ensure_ascii=False)``.

It follows strict JSON (the reader's decoder, ``json.JSONDecoder()``); at
the first character that cannot continue a JSON value (a raw control
character in a string, a bad escape, a number that is not finite, a key
an object already has, since the decoder then keeps the last value and the
text given out would no longer be a prefix) it stops giving anything out and
says so (``broken``). It never decides whether the value is a call's
arguments: that stays the reader's verdict, which the caller compares with
what went out.

Work is linear: string contents are taken a run at a time by one regular
expression; every other character is looked at once.
"""

from __future__ import annotations

import json
import math
import re

from templatestudio.wire.base import JSON_SPACE
from templatestudio.wire.jsonbody import skip_space

__all__ = ["JsonPrefix"]

_PLAIN_RUN = re.compile(r'[^"\\\x00-\x1f]+')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_CHARS = frozenset("0123456789+-.eE")
_WORDS = {"t": "true", "f": "false", "n": "null"}
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# What comes next inside a container.
_VALUE, _KEY, _KEY_OR_END, _VALUE_OR_END, _COLON, _COMMA_OR_END = range(6)


def _canonical(char: str) -> str:
    return json.dumps(char, ensure_ascii=False)[1:-1]


class JsonPrefix:
    """Feed one JSON value's raw text; get back the canonical text it has made certain.

    ``feed(text)`` returns the new canonical text; ``end`` is the index,
    in everything fed, just past the value once it is complete (None
    before); ``broken`` holds why the raw text stopped being strict JSON
    (None while it is). Text fed after the value's end is not looked at.
    """

    def __init__(self) -> None:
        self.end: int | None = None
        self.broken: str | None = None
        self._fed = 0  # characters fed so far, in all
        self._stack: list[list] = []  # per open container: [kind, expecting, keys seen]
        self._expect_top = True  # no value started yet
        self._token = ""  # a number or word being read
        self._string: list[str] | None = None  # a string being read (its decoded characters, for a key)
        self._key = False  # the string being read is a key
        self._escape: str | None = None  # an escape being read, from its backslash
        self._high: str | None = None  # a high surrogate waiting for its low half
        self._key_at = 0  # offset of the key being read (for the message when it comes twice)

    @property
    def fed(self) -> int:
        """How many characters were fed, in all."""
        return self._fed

    def feed(self, text: str) -> str:
        out: list[str] = []
        at, size = 0, len(text)
        while at < size and self.end is None and self.broken is None:
            at = self._step(text, at, out)
        self._fed += size
        return "".join(out)

    # --- one step: returns the index after what it consumed ---------------------------------

    def _step(self, text: str, at: int, out: list[str]) -> int:
        if self._string is not None:
            return self._in_string(text, at, out)
        char = text[at]
        if self._token:
            if char in _NUMBER_CHARS or (self._token[0] in _WORDS and char.isalpha()):
                self._token += char
                return self._word_done(out, at + 1) if self._token[0] in _WORDS else at + 1
            self._scalar_done(out, at)
            if self.broken is not None or self.end is not None:
                return at
        if char in JSON_SPACE:
            return skip_space(text, at)  # a run of whitespace, crossed at once
        expecting = self._stack[-1][1] if self._stack else (_VALUE if self._expect_top else None)
        if expecting in (_VALUE, _VALUE_OR_END):
            if expecting == _VALUE_OR_END and char == "]":
                return self._close(out, at, "]")
            return self._value(char, out, at)
        if expecting in (_KEY, _KEY_OR_END):
            if expecting == _KEY_OR_END and char == "}":
                return self._close(out, at, "}")
            if char != '"':
                return self._break(f"a key must be a string, not {char!r}", at)
            self._string, self._key, self._key_at = [], True, self._fed + at
            return at + 1
        if expecting == _COLON:
            if char != ":":
                return self._break(f"':' expected after a key, not {char!r}", at)
            out.append(": ")
            self._stack[-1][1] = _VALUE
            return at + 1
        if expecting == _COMMA_OR_END:
            frame = self._stack[-1]
            if char == ",":
                out.append(", ")
                frame[1] = _KEY if frame[0] == "{" else _VALUE
                return at + 1
            if char in "]}":
                return self._close(out, at, char) if char == ("}" if frame[0] == "{" else "]") else \
                    self._break(f"{char!r} does not close {frame[0]!r}", at)
            return self._break(f"',' or the container's close expected, not {char!r}", at)
        return self._break(f"unexpected {char!r}", at)  # pragma: no cover - every state is handled above

    def _value(self, char: str, out: list[str], at: int) -> int:
        self._expect_top = False
        if char in "{[":
            self._stack.append([char, _KEY_OR_END if char == "{" else _VALUE_OR_END, set()])
            out.append(char)
            return at + 1
        if char == '"':
            self._string, self._key = [], False
            out.append('"')
            return at + 1
        if char == "-" or char.isdigit() or char in _WORDS:
            self._token = char
            return at + 1
        return self._break(f"no JSON value starts with {char!r}", at)

    def _close(self, out: list[str], at: int, char: str) -> int:
        self._stack.pop()
        out.append(char)
        return self._value_done(at + 1)

    def _value_done(self, after: int) -> int:
        """A value ended at index after (of the current text): the container moves on, or the whole is done."""
        if self._stack:
            self._stack[-1][1] = _COMMA_OR_END
        else:
            self.end = self._fed + after
        return after

    # --- numbers and words ---------------------------------------------------------------------

    def _word_done(self, out: list[str], after: int) -> int:
        word = _WORDS[self._token[0]]
        if not word.startswith(self._token):
            return self._break(f"{self._token!r} is not {word!r}", after - 1)
        if self._token == word:
            self._token = ""
            out.append(word)
            return self._value_done(after)
        return after

    def _scalar_done(self, out: list[str], at: int) -> None:
        """A delimiter follows the token: a number ends here; a word here is cut short."""
        token, self._token = self._token, ""
        if token[0] in _WORDS:
            self.broken = f"{token!r} is not {_WORDS[token[0]]!r}"
            return
        if not _NUMBER.fullmatch(token):
            self.broken = f"{token!r} is not a JSON number"
            return
        try:
            value = json.loads(token)
        except ValueError:  # an integer past the decoder's digit limit
            self.broken = f"{token[:20]!r}… has more digits than the decoder reads"
            return
        if isinstance(value, float) and not math.isfinite(value):
            self.broken = f"{token!r} is not a finite number"
            return
        out.append(json.dumps(value))
        self._value_done(at)

    # --- strings -------------------------------------------------------------------------------

    def _in_string(self, text: str, at: int, out: list[str]) -> int:
        if self._escape is not None:
            return self._in_escape(text, at, out)
        char = text[at]
        if char == '"':
            return self._string_done(out, at + 1)
        if char == "\\":
            self._escape = ""
            return at + 1
        run = _PLAIN_RUN.match(text, at)
        if run is None:
            return self._break(f"a raw control character {char!r} in a string", at)
        self._chars(run.group(), out)
        return run.end()

    def _chars(self, chars: str, out: list[str]) -> None:
        """A run of characters that are their own canonical text (no quote, backslash or control)."""
        self._flush_high(out)
        if self._key:
            self._string.append(chars)
        else:
            out.append(chars)

    def _flush_high(self, out: list[str]) -> None:
        """A high surrogate not followed by its low half stays alone, as the decoder leaves it."""
        if self._high is not None:
            high, self._high = self._high, None
            self._char(high, out)

    def _in_escape(self, text: str, at: int, out: list[str]) -> int:
        char = text[at]
        self._escape += char
        escape = self._escape
        if escape[0] != "u":
            self._escape = None
            if escape not in _SIMPLE_ESCAPES:
                return self._break(f"no JSON escape \\{escape}", at)
            self._char(_SIMPLE_ESCAPES[escape], out)
            return at + 1
        if len(escape) > 1 and char not in "0123456789abcdefABCDEF":
            return self._break(f"\\{escape} is not a \\uXXXX escape", at)
        if len(escape) < 5:
            return at + 1
        self._escape = None
        unit = chr(int(escape[1:], 16))
        if "\ud800" <= unit <= "\udbff":
            self._flush_high(out)
            self._high = unit
        elif "\udc00" <= unit <= "\udfff" and self._high is not None:
            high, self._high = self._high, None
            self._char(chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(unit) - 0xDC00)), out)
        else:
            self._char(unit, out)
        return at + 1

    def _char(self, char: str, out: list[str]) -> None:
        """One decoded character: its canonical escape (for a key, kept until the key ends)."""
        self._flush_high(out)
        if self._key:
            self._string.append(char)
        else:
            out.append(_canonical(char))

    def _string_done(self, out: list[str], after: int) -> int:
        self._flush_high(out)
        if self._key:
            key = "".join(self._string)
            self._string = None
            frame = self._stack[-1]
            if key in frame[2]:
                self.broken = f"the key {key!r} a second time at offset {self._key_at} (the decoder keeps the last value)"
                return after
            frame[2].add(key)
            out.append(json.dumps(key, ensure_ascii=False))
            frame[1] = _COLON
            return after
        self._string = None
        out.append('"')
        return self._value_done(after)

    def _break(self, why: str, at: int) -> int:
        self.broken = f"{why} at offset {self._fed + at}"
        return at
