"""Argument deltas: a call's arguments given out while the model is still writing them.

A coding agent's call that writes a 20 KB file would otherwise show nothing
until the call closes. ``ArgumentStream`` is a ``ToolCallStream`` that also
gives ``ArgumentsDelta`` events while a call of its format is open: the
call's name, then pieces of its arguments text that concatenate to exactly
``json.dumps(arguments, ensure_ascii=False)`` of the call the reader then
reads (the string vLLM compares against). Everything else is the plain
stream's: without the deltas, its events are the stream's events, so they
equal ``read_events`` of the whole text.

How: while the machine holds a call open (``Machine.held_call``), a
``CallPreview`` (``call_preview``) follows the held text by the format's
declared wire shape and gives the canonical arguments text that is already
certain. The preview never decides that anything is a call: the reader
does, when the call closes, and the last piece is given only then.

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
- ``StreamedCallChanged`` is raised as soon as the changed call is read, so
  it comes before an error the whole read raises further on (a later call
  refused or cut): a stream cannot see that far ahead, and the whole read,
  which gives nothing out, raises the later one. Whether deltas went out
  before the call proved different depends on the chunking, so which of
  the two a strict stream raises does too; each names its own offset.

Which calls get deltas is the preview's to say: plain names, and the formats
``preview_refusal`` (``call_preview``) accepts; a call with any other name,
or of any other format, goes out whole at its close, and so do arguments
written as a JSON string (``string_ok``). Not handled here: following the
held text itself (``call_preview``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from templatestudio.call_preview import CallPreview, preview_refusal
from templatestudio.calls import UnparsedToolCall
from templatestudio.events import CutToolCall, Event, TextDelta, ToolCallEvent
from templatestudio.formats import Format, get_format
from templatestudio.stream import ToolCallStream
from templatestudio.wire.base import JSON_SPACE

# preview_refusal is re-exported: notebook 21 imports it from here.
__all__ = ["ArgumentStream", "ArgumentsDelta", "ArgumentsWithdrawn", "StreamedCallChanged", "preview_refusal"]


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
    def layout_holding(self) -> int:
        """The stream's layout whitespace held back (``Machine.layout_holding``)."""
        return self.stream.layout_holding

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
