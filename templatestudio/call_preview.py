"""The preview of one held call: its name and the canonical arguments text already certain.

While the machine holds a call open (``Machine.held_call``), ``CallPreview``
follows the held text by the format's declared wire shape (the literals
before the name, the name, the literals before the arguments) and hands the
arguments' raw JSON to ``wire.json_prefix``, which turns it into the
canonical text that is already certain. The preview never decides that
anything is a call: the reader does, when the call closes. It never gives
the closing brace, so the text it gives never parses as whole arguments.

Only plain names (word characters and ``.-:/@``) are followed, with the
id a declaration allows after the name (``NameBetween.id_open``: Mistral's
``NAME[CALL_ID]ID[ARGS]``); a call with any other name is not followed.

Which formats: those whose calls are one per region, a name then a JSON
object, or a JSON call object with the arguments under a key
(``preview_refusal`` says why for the others: sections, JSON lists, ids
written in the call, XML parameters and the ``{key:value}`` grammar, whose
values are typed only once the call is whole). Not handled: a call's
arguments written as a JSON string (``string_ok``), and everything after the
preview: giving its text out as deltas, and what happens when the reader
reads the call differently, is ``argument_deltas``' (``ArgumentStream``).
"""

from __future__ import annotations

import json
import re

from templatestudio.wire.arguments import JsonArguments, JsonObject, NameBetween, NameKey, OwnValues
from templatestudio.wire.base import JSON_SPACE
from templatestudio.wire.json_prefix import JsonPrefix
from templatestudio.wire.json_scan import json_string_end
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.shape import HandWritten, WireShape

__all__ = ["CallPreview", "preview_refusal"]

_LONGEST_NAME = 256  # a name longer than this is not followed (the reader still reads it at the close)
_PLAIN_NAME = re.compile(r"[\w.\-:/@]+")


def preview_refusal(shape: WireShape | None) -> str | None:
    """Why calls of this shape get no deltas (their arguments go out whole at the close), or None."""
    if shape is None:
        return "the format declares no wire shape"
    if shape.section is not None:
        return "its calls stand in a section, several to a region"
    if shape.call_id is not None:
        return "an id is written inside the call"
    name, arguments = shape.name, shape.arguments
    if isinstance(name, NameBetween) and isinstance(arguments, JsonObject) and arguments.listed is None:
        return "the name carries an index" if name.index else None
    if isinstance(name, NameKey) and isinstance(arguments, JsonArguments) and arguments.listed is None:
        return None
    if isinstance(arguments, (JsonArguments, JsonObject)) and arguments.listed is not None:
        return "its calls stand in a JSON list"
    if isinstance(name, HandWritten) or isinstance(arguments, HandWritten):
        return "part of its call is read by the module's own code, not by the declaration"
    if isinstance(arguments, OwnValues):
        return "its arguments are written in the {key:value} grammar, not JSON"
    return "its values are written as text, typed by the request's schema only once the call is whole"


class _Literal:
    """A declared literal, matched with any whitespace where it has whitespace at its ends.

    The whitespace before it is the caller's to pass: ``advance`` passes it once for every
    literal step (the ':' after a key of a call object among them) and remembers how far.
    """

    def __init__(self, text: str) -> None:
        self.core = text.strip(JSON_SPACE)

    def match(self, text: str, at: int) -> int | None | bool:
        """The index after the literal at text[at] (whitespace passed); None: wait for more text; False: not it."""
        have = text[at : at + len(self.core)]
        if have == self.core:
            return at + len(self.core)
        return None if self.core.startswith(have) else False


class CallPreview:
    """One open call followed by its format's declared shape: its name and its certain arguments text.

    ``advance(text, start)`` looks at the held call's text (from index
    start of text) past what it saw before; ``name`` is the call's name once
    read (None before); ``take()`` gives the canonical arguments text made
    certain since the last ``take``, never the closing brace; ``stopped``
    says why it stopped following (None while it follows). Each piece is
    kept once and given once, so a long argument costs linear work.
    """

    def __init__(self, shape: WireShape) -> None:
        if (why := preview_refusal(shape)) is not None:
            raise ValueError(f"no argument deltas for this shape: {why}")
        self.shape = shape
        self.name: str | None = None
        self.call_id: str | None = None  # written between the name and its close (NameBetween.id_open)
        # The name (and an id the declaration allows after it) up to its close, matched after name.open.
        self._named = re.compile(shape.name.inner()) if isinstance(shape.name, NameBetween) else None
        self.stopped: str | None = None
        self._done = False  # the arguments' value is complete
        self._pieces: list[str] = []  # the arguments' canonical text so far, in the pieces it came in
        self._taken = 0  # how many of them take() gave
        self._seen = 0  # held-call characters looked at
        self._steps = self._plan()
        self._value: JsonPrefix | None = None  # the JSON value being followed
        self._key: str | None = None  # what the value being followed is: "name", "arguments" or "other"
        self._name_text = ""  # NameKey: the name's canonical JSON string so far
        # Characters looked at, in all (a name or key looked for again counts again): linear in the call.
        self.examined = 0

    def take(self) -> str:
        """The arguments' canonical text made certain since the last take, less the closing brace."""
        new = "".join(self._pieces[self._taken:])
        self._taken = len(self._pieces)
        return new[:-1] if self._done and new else new

    def advance(self, text: str, start: int) -> None:
        while self.stopped is None and self._steps:
            at = start + self._seen
            step = self._steps[0]
            if step == "value":
                if at >= len(text):
                    return
                if self._value is None:
                    self._value = JsonPrefix()
                self._follow_value(text, at)
                if self._value is not None:  # the value needs more text
                    return
                continue
            if isinstance(step, _Literal) or step == "members":
                # Whitespace before a literal or a member is passed once, even while waiting for more
                # text: a flood of it is not looked at again on every feed.
                skipped, at = at, skip_space(text, at)
                self.examined += at - skipped
                self._seen = at - start
            found = self._match(step, text, at)
            if found is None:
                return
            self.examined += found - at
            self._seen = found - start

    # --- the plan: what the held text holds, in order ----------------------------------------

    def _plan(self) -> list:
        shape, name = self.shape, self.shape.name
        opening = shape.call.open + shape.call.head
        if isinstance(name, NameKey):
            return [_Literal(opening), _Literal("{"), "members"] if opening.strip(JSON_SPACE) else \
                [_Literal("{"), "members"]
        return [_Literal(opening + name.open), "name", _Literal(name.close + name.head), "arguments", "value"]

    def _match(self, step, text: str, at: int) -> int | None:
        if isinstance(step, _Literal):
            found = step.match(text, at)
            if found is False:
                self.stopped = f"the text at {at} is not the declared {step.core!r}"
                return None
            if found is not None:
                self._steps.pop(0)
            return found
        if step == "name":
            return self._read_name(text, at)
        if step == "arguments":
            self._steps.pop(0)
            self._key = "arguments"
            return at
        return self._member(text, at)  # "members": the JSON call object, one member at a time

    def _read_name(self, text: str, at: int) -> int | None:
        close = self._steps[1].core
        self.examined += min(len(text) - at, _LONGEST_NAME + len(close))
        end = text.find(close, at, at + _LONGEST_NAME + len(close)) if close else -1
        if end == -1:
            if len(text) - at > _LONGEST_NAME or not close:
                self.stopped = "no end of the name in sight"
            return None
        written = self._named.fullmatch(text, at, end)
        name = written.group(1) if written is not None else text[at:end]
        if written is None or not _PLAIN_NAME.fullmatch(name):
            # Only plain names are followed (and the declared id after them); anything else between
            # the name and the arguments goes out whole, as the reader reads it.
            self.stopped = f"{text[at:end]!r} is not a plain name of this format"
            return None
        self.name, self.call_id = name, written.group(2) or None
        self._steps.pop(0)
        return end

    # --- NameKey: the members of the call object -----------------------------------------------

    def _member(self, text: str, at: int) -> int | None:
        """One step through the call object at text[at], whose whitespace ``advance`` has passed.

        A key is read whole, then the ':' after it is a step of its own (``_Literal``), so the
        whitespace between them is passed once by ``advance``, not crossed again on every feed.
        """
        if at >= len(text):
            return None
        char = text[at]
        if char == "}":
            self._steps.clear()
            return at + 1
        if char == "," and self._key is not None:
            self._key = None
            return at + 1
        if char != '"' or self._key is not None:
            self.stopped = f"a key of the call object expected at {at}, not {char!r}"
            return None
        self.examined += min(len(text) - at, _LONGEST_NAME + 2)
        # Looked for within reach of the opening quote only: a longer key is not followed, so the
        # text past that reach is not searched.
        end = json_string_end(text[at : at + _LONGEST_NAME + 2], 1)
        if end == -1:
            if len(text) - at > _LONGEST_NAME:
                self.stopped = "a key longer than any this preview follows"
            return None
        end += at
        try:
            key = json.loads(text[at:end])
        except ValueError:  # a raw control character or a bad escape: the reader refuses it, or reads it its way
            self.stopped = f"the key at {at} is not a strict JSON string"
            return None
        arguments = self.shape.arguments
        self._key = "name" if key == self.shape.name.key else "arguments" if key in arguments.keys else "other"
        if self._key == "arguments" and (self._done or self._pieces):
            self.stopped = "the call object has arguments a second time"
            return None
        if self._key == "name" and (self.name is not None or self._name_text):
            # The decoder keeps the last; the preview stops and the reader reads it so.
            self.stopped = "the call object has a name a second time"
            return None
        self._steps[0:0] = [_Literal(":"), "value"]
        return end

    # --- a member's value, or the arguments after the name -------------------------------------

    def _follow_value(self, text: str, at: int) -> None:
        value = self._value
        if self._key == "arguments" and value.end is None and not self._pieces:
            begin = skip_space(text, at)
            first = text[begin : begin + 1]
            if first and first != "{":
                self.stopped = "the arguments are not written as a JSON object"
                return
        fed_before = value.fed
        self.examined += len(text) - at
        piece = value.feed(text[at:])
        if self._key == "arguments":
            if piece:
                self._pieces.append(piece)
        elif self._key == "name":
            self._name_text += piece
        if value.broken is not None:
            self.stopped = value.broken
            return
        if value.end is None:
            self._seen += len(text) - at
            return
        self._seen += value.end - fed_before
        self._value = None
        self._steps.pop(0)
        if self._key == "arguments":
            self._done = True
        elif self._key == "name":
            name = json.loads(self._name_text)
            if isinstance(name, str) and name:
                self.name = name
            else:
                self.stopped = "the name is not a string"
        if not isinstance(self.shape.name, NameKey):
            self._steps.clear()
