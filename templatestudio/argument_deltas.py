"""Argument deltas: a call's arguments given out while the model is still writing them.

A coding agent's call that writes a 20 KB file would otherwise show nothing
until the call closes. ``ArgumentStream`` is a ``ToolCallStream`` that also
gives ``ArgumentsDelta`` events while a call of its format is open: the
call's name, then pieces of its arguments text that concatenate to exactly
``json.dumps(arguments, ensure_ascii=False)`` of the call the reader then
reads (the string vLLM compares against). Everything else is the plain
stream's: without the deltas, its events are the stream's events, so they
equal ``read_events`` of the whole text.

How: while the machine holds a call open (``Machine.held_call``),
``CallPreview`` follows the held text by the format's declared wire shape
(the literals before the name, the name, the literals before the
arguments) and hands the arguments' raw JSON to ``wire.json_prefix``, which
turns it into the canonical text that is already certain. The preview
never decides that anything is a call: the reader does, when the call
closes, and the last piece is given only then.

The rule for a call that proves different after deltas went out:

- The deltas never finish the arguments: the closing brace is held until
  the reader has read the call, so a client never holds arguments that
  parse as JSON for a call the reader did not read.
- When the reader reads it, the last delta (``final=True``) carries the
  rest, and the ``ToolCallEvent`` follows.
- When it does not (the reader refuses the call, reads it as text, the
  reply ends inside it, or reads different arguments than the ones given
  out, as for a key written twice, where the decoder keeps the last value):
  with ``strict=True`` the stream raises ``StreamedCallChanged`` (an
  ``UnparsedToolCall``) naming the call's offset and what changed, as it
  raises for a leak; with ``strict=False`` it gives ``ArgumentsWithdrawn``
  for that call's index (its arguments stay unfinished JSON), and then the
  stream's own events for the text: content, a ``CutToolCall``, or the call
  the reader read, which gets the next index. Nothing the model wrote is
  lost; a client that sees unparsable arguments sees a call that was not.

Only plain names (word characters and ``.-:/@``) are followed, with the
id a declaration allows after the name (``NameBetween.id_open``: Mistral's
``NAME[CALL_ID]ID[ARGS]``), which every piece of the call carries; a call
with any other name goes out whole at its close.

Which formats: those whose calls are one per region, a name then a JSON
object, or a JSON call object with the arguments under a key
(``preview_refusal`` says why for the others: sections, JSON lists, ids
written in the call, XML parameters and the ``{key:value}`` grammar, whose
values are typed only once the call is whole). Not handled: a call's
arguments written as a JSON string (``string_ok``): they go out whole at
the close.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from templatestudio.calls import UnparsedToolCall
from templatestudio.events import CutToolCall, Event, TextDelta, ToolCallEvent
from templatestudio.formats import Format, get_format
from templatestudio.stream import ToolCallStream
from templatestudio.wire.arguments import JsonArguments, JsonObject, NameBetween, NameKey, OwnValues
from templatestudio.wire.base import JSON_SPACE
from templatestudio.wire.json_prefix import JsonPrefix
from templatestudio.wire.json_scan import json_string_end
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.shape import HandWritten, WireShape

__all__ = ["ArgumentStream", "ArgumentsDelta", "ArgumentsWithdrawn", "CallPreview", "StreamedCallChanged",
           "preview_refusal"]

_LONGEST_NAME = 256  # a name longer than this is not followed (the reader still reads it at the close)
_PLAIN_NAME = re.compile(r"[\w.\-:/@]+")


@dataclass(frozen=True)
class ArgumentsDelta:
    """A piece of call index's arguments text; the first piece of a call names it.

    The pieces of one call concatenate to ``json.dumps(arguments,
    ensure_ascii=False)`` of the call the reader reads; ``final`` marks the
    last, which comes just before that call's ``ToolCallEvent``. id: the
    id the model wrote before the arguments (Mistral's ``[CALL_ID]``), on
    every piece of the call, None when it wrote none.
    """

    index: int
    name: str
    text: str
    final: bool = False
    id: str | None = None


@dataclass(frozen=True)
class ArgumentsWithdrawn:
    """strict=False: the call at index, whose deltas went out, was not read as they said (why)."""

    index: int
    why: str


class StreamedCallChanged(UnparsedToolCall):
    """strict=True: a call whose deltas went out was refused, cut, or read differently."""


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


class ArgumentStream:
    """A ``ToolCallStream`` that also gives each open call's arguments as they arrive (``ArgumentsDelta``).

    fmt and the keyword options are ``ToolCallStream``'s (strict included);
    ``feed`` and ``close`` return the stream's events with the deltas among
    them, each call's before its ``ToolCallEvent``. Calls are indexed in
    the order they are first given out, from 0. See the module docstring
    for the rule when a call proves different after its deltas went out.
    ``refusal`` is why this format gets no deltas (None when it does):
    then the events are exactly the stream's.
    """

    def __init__(self, fmt: Format | str, *, strict: bool = True, **options) -> None:
        self.stream = ToolCallStream(fmt if isinstance(fmt, Format) else get_format(fmt), strict=strict, **options)
        self.format, self.strict = self.stream.format, strict
        self.refusal = preview_refusal(self.format.wire)
        if self.refusal is None and self.stream.argument_types is not None:  # pragma: no cover - no such format yet
            self.refusal = "its values are text, typed by the request's schemas once the call is whole"
        self._preview: CallPreview | None = None
        self._preview_at = -1  # reply offset of the call being previewed
        self._index = 0  # the next call's index
        self._slot: int | None = None  # the previewed call's index, once its name went out
        self._sent: list[str] = []  # its arguments text given out so far, piece by piece

    @property
    def offset(self) -> int:
        """The stream's offset: every character before it is settled (``ToolCallStream.offset``)."""
        return self.stream.offset

    @property
    def open_slot(self) -> int | None:
        """The index of a call whose deltas went out and that the reader has not settled yet."""
        return self._slot

    def feed(self, text: str) -> list:
        return self._after(self.stream.feed(text), self.stream.held_call)

    def close(self) -> list:
        return self._after(self.stream.close(), None)

    def _after(self, events: list[Event], held) -> list:
        out: list = []
        if self._preview is not None and (held is None or held[2] != self._preview_at):
            events = self._settle(events, out)
        for event in events:
            if isinstance(event, ToolCallEvent):
                self._index += 1
            out.append(event)
        if held is not None and self.refusal is None:
            self._follow(held, out)
        return out

    def _follow(self, held, out: list) -> None:
        text, start, offset = held
        if self._preview is None or offset != self._preview_at:
            self._preview, self._preview_at = CallPreview(self.format.wire), offset
        preview = self._preview
        preview.advance(text, start)
        if preview.name is None:
            return
        first = self._slot is None
        if first:
            self._slot, self._index = self._index, self._index + 1
        piece = preview.take()
        if piece or first:
            self._sent.append(piece)
            out.append(ArgumentsDelta(self._slot, preview.name, piece, id=preview.call_id))

    def _settle(self, events: list[Event], out: list) -> list[Event]:
        """The previewed call's region ended: its first event that is not layout says how."""
        preview, slot, sent, at = self._preview, self._slot, "".join(self._sent), self._preview_at
        self._preview, self._preview_at, self._slot, self._sent = None, -1, None, []
        if slot is None:
            return events
        position = 0
        while position < len(events) and isinstance(events[position], TextDelta) and \
                not events[position].text.strip(JSON_SPACE):
            out.append(events[position])
            position += 1
        event = events[position] if position < len(events) else None
        if isinstance(event, ToolCallEvent):
            final = json.dumps(event.call.arguments, ensure_ascii=False)
            if event.call.name == preview.name and event.id == preview.call_id and final.startswith(sent) \
                    and len(final) > len(sent):
                out.append(ArgumentsDelta(slot, preview.name, final[len(sent):], final=True, id=preview.call_id))
                out.append(event)
                return events[position + 1:]
            if event.call.name != preview.name:
                why = f"its name was given out as {preview.name!r} and read as {event.call.name!r}"
            elif event.id != preview.call_id:
                why = f"its id was given out as {preview.call_id!r} and read as {event.id!r}"
            else:
                why = f"its arguments were given out as {_short(sent)} and read as {_short(final)}"
        elif isinstance(event, CutToolCall):
            why = "the reply ended inside it"
        else:
            why = "the reader did not read it as a call"
        if self.strict:
            raise StreamedCallChanged(
                f"the {self.format.name} call {slot} at offset {at}, whose arguments "
                f"were streamed, proved different: {why}")
        out.append(ArgumentsWithdrawn(slot, why))
        return events[position:]


def _short(text: str, room: int = 60) -> str:
    return repr(text if len(text) <= room else text[: room // 2] + "…" + text[-room // 2 :])
