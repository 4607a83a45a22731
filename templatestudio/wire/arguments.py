"""How a declared wire shape writes a call's name and arguments: those parts of ``wire.shape``'s language.

Each is a frozen declaration; the argument parts whose writing is plain
text carry their ``write``. ``wire.shape`` re-exports them all: a format module imports
them from there. Reading XML-style parameters is ``wire.xml_params``'s job;
reading the ``{key:value}`` grammar is ``wire.keyed_values``'s.

Not handled: a value spelled in a way other than as it is (strings), as
JSON or as Python's ``str()`` (non-strings).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CallId:
    """A call id written after the call's open and before the name: written by the writer, ending at close.

    after_name: written after the name's closing literal instead, before the
    arguments (Mistral's ``NAME[CALL_ID]ID[ARGS]``). written: what the writer
    writes when it is given no id.
    """

    written: str
    close: str
    after_name: bool = False


@dataclass(frozen=True)
class NameKey:
    """The name is the string under key in a JSON call object."""

    key: str = "name"


@dataclass(frozen=True)
class NameBetween:
    """The name sits between open and close; head is layout written after close.

    index: what the writer writes between the name and close (Kimi's
    call number ``:0``; readers take any number there). chars: a regex
    class of the characters a name may hold (the opening pattern's).
    id_open: when set, a call id may stand between the name (and index)
    and close, after this literal: Mistral's ``NAME[CALL_ID]ID[ARGS]``.
    It is optional (Mistral writes calls with and without one), letters
    and digits (``ID_CHARS``); the writer writes it when given an id.
    """

    open: str
    close: str
    head: str = ""
    index: str = ""
    chars: str = r"[^<>\n]"
    id_open: str = ""

    def inner(self) -> str:
        """The regex of what stands between open and close: the name (group 1), a call number, the id (group 2)."""
        index = re.escape(self.index.rstrip("0123456789")) + "[0-9]+" if self.index else ""  # ASCII digits only
        if not self.id_open:
            return "(" + self.chars + "+)" + index + "()"
        # Lazily: the name ends where the optional id (or close) can begin.
        return "(" + self.chars + "+?)" + index + f"(?:{re.escape(self.id_open)}({ID_CHARS}+))?"

    def pattern(self) -> re.Pattern:
        """open, ``inner()`` and close."""
        return re.compile(re.escape(self.open) + self.inner() + re.escape(self.close))


ID_CHARS = "[A-Za-z0-9]"
"""The characters of an id written after ``NameBetween.id_open``."""


@dataclass(frozen=True)
class Invoke:
    """An element named in its opening tag (open NAME name_close), closed by close after its arguments."""

    open: str
    name_close: str
    close: str
    head: str = ""  # written after name_close (layout)
    tail: str = ""  # written before close (layout)


@dataclass(frozen=True)
class JsonList:
    """The call objects stand in one JSON list (written with open/close around one call, or indented)."""

    open: str = "["
    close: str = "]"
    indent: int | None = None  # json.dumps's indent for the whole list (then open/close are the dump's own)


@dataclass(frozen=True)
class JsonArguments:
    """The arguments are a JSON object under key (or one of also) in a JSON call object.

    string_ok: arguments written as a JSON string holding an object are
    read too. extras: further keys a call object may hold, each with a
    check of its value; id_key: the extra that is the call's id.
    written_extras: keys the writer puts before the name, with their values.
    listed: the call objects stand in a JSON list.
    """

    key: str = "arguments"
    also: tuple[str, ...] = ()
    string_ok: bool = False
    extras: dict[str, Callable[[object], bool]] = field(default_factory=dict, hash=False, compare=False)
    id_key: str | None = None
    written_extras: tuple[tuple[str, object], ...] = ()
    listed: JsonList | None = None
    ascii: bool = False  # the writer escapes non-ASCII text as \uXXXX (as Jinja's tojson does by default)

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key, *self.also)


@dataclass(frozen=True)
class JsonObject:
    """The arguments are a JSON object written right after the name (string_ok: or a JSON string of one).

    listed: the calls stand in one JSON list, each its own object (Apertus's
    ``[{"NAME": {…}}, …]``), so a call may end at a bracket the list's comma
    follows: a reply cut in a later call keeps the calls before it.
    """

    string_ok: bool = False
    listed: JsonList | None = None
    ascii: bool = False  # the writer escapes non-ASCII text as \uXXXX (as Jinja's tojson does by default)


def _text(value: object, spelled: str) -> str:
    """A parameter value as text: a string as it is; anything else as JSON ("json") or Python's str() ("str")."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False) if spelled == "json" else str(value)


@dataclass(frozen=True)
class XmlParameters:
    """``open KEY name_close VALUE close`` per argument, after each of which the writer puts after.

    newline_inside: the writer puts a newline after name_close and before
    close, and the reader strips one newline at each end of the value (and
    only one). values: how a non-string value is spelled ("str": Python's
    str(), "json"). typed: (name_close for a string value, name_close for a
    JSON value) when the tag says which (DeepSeek's DSML ``string="true"``).
    Values are read as text (the format's ``string_arguments``) unless typed.
    """

    open: str
    name_close: str
    close: str
    after: str = "\n"
    newline_inside: bool = False
    values: str = "str"
    typed: tuple[str, str] | None = None

    def write(self, arguments: dict) -> str:
        pieces = []
        for key, value in arguments.items():
            if self.typed is not None:
                string = isinstance(value, str)
                shut = self.typed[0] if string else self.typed[1]
                body = value if string else json.dumps(value, ensure_ascii=False)
            else:
                shut, body = self.name_close, _text(value, self.values)
            if self.newline_inside:
                body = f"\n{body}\n"
            pieces.append(f"{self.open}{key}{shut}{body}{self.close}{self.after}")
        return "".join(pieces)


@dataclass(frozen=True)
class KeyValuePairs:
    """``key_open KEY key_close between value_open VALUE value_close after`` per argument (GLM's arg_key/arg_value)."""

    key_open: str
    key_close: str
    value_open: str
    value_close: str
    between: str = "\n"
    after: str = "\n"
    values: str = "json"

    def write(self, arguments: dict) -> str:
        return "".join(
            f"{self.key_open}{key}{self.key_close}{self.between}{self.value_open}{_text(value, self.values)}"
            f"{self.value_close}{self.after}"
            for key, value in arguments.items()
        )


@dataclass(frozen=True)
class OwnValues:
    """The arguments in the ``{key:value,…}`` grammar of ``wire.keyed_values``, strings between quote.

    null: how the writer spells a None (Gemma 4's template writes Python's
    ``None``); the reader reads ``null``, ``None`` and ``none`` alike.
    text: every value is written as text between the quotes, a non-string
    as Python's ``str()`` (FunctionGemma's template), so values are text,
    typed later against the tool's schema.
    """

    quote: str
    null: str = "null"
    text: bool = False

