"""What reading a reply gives: text, reasoning and whole calls, as events, and how runs of them merge.

Every reader in the package (the whole-text read, ``ToolCallStream``, the
production reader) returns these events. ``CutToolCall`` is the call a
reply ended inside (a generation cut by ``max_tokens``), when the reader is
not strict: kept whole as written, never shown as text, never dropped. A stream returns them as chunks
settle them, so two deltas of one kind may follow each other;
``merge_deltas`` joins them, and two readings of one reply are equal when
their merged events are. ``Outbox`` holds what a machine settled until it
returns it, merged; ``region_events`` turns the spans a format's reader
read in one call region into events. ``Marker`` is where a call in some
format opens, what the leak survey (``templatestudio.leaks``) lists.

Not handled here: deciding what is a call (``templatestudio.engine``).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

from templatestudio.calls import CallSpan, ParsedToolCall, UnparsedToolCall, filler


@dataclass(frozen=True)
class TextDelta:
    """Reply text the user may see."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """Text of the model's reasoning block; never read for calls."""

    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """One whole tool call, read by the machine's format, with its id when the format writes one."""

    call: ParsedToolCall
    id: str | None = None


@dataclass(frozen=True)
class CutToolCall:
    """The call a reply ended inside: what was written of it, never text and never a call to run.

    name: the call's name when the reply got past it and the format's
    declaration says where it stands (None otherwise); raw: everything the
    reply wrote of the call, from its marker to the end of the reply;
    offset: the reply offset of its marker. ``end``, the offset where the
    reply cut it, is the reply's length. The field is ``raw``, not
    ``text``: code that shows every event's text must not show this one.
    """

    name: str | None
    raw: str
    offset: int

    @property
    def end(self) -> int:
        """The reply offset at which the reply cut the call (the reply's length)."""
        return self.offset + len(self.raw)


Event = TextDelta | ReasoningDelta | ToolCallEvent | CutToolCall

# ToolCallEvent(call, id) for each (call, id) of two columns, without __init__:
# a list or a run of calls makes thousands of events (see calls.filler).
call_events = filler(ToolCallEvent, ("call", "id"))
_CALL, _ID = attrgetter("call"), attrgetter("id")


@dataclass(frozen=True)
class Marker:
    """Where a call in some format opens: its literal, offset and format names."""

    text: str
    offset: int
    formats: tuple[str, ...]

    def left_unread(self, reader: str) -> UnparsedToolCall:
        """The error for this marker when reader (who read the text) consumed no call here."""
        return UnparsedToolCall(
            f"{reader} left a tool call unread: {self.text!r} at offset "
            f"{self.offset} opens a call in the {'/'.join(self.formats)} format"
        )


def merge_deltas(events: list[Event]) -> list[Event]:
    """events with each run of adjacent deltas of one kind joined into one, empty ones dropped."""
    merged: list[Event] = []
    append = merged.append
    kind = None  # the type of merged[-1] when it is a delta
    texts: list[str] | None = None  # the texts of merged[-1]'s run, once it has two (joined once: linear)
    for event in events:
        current = type(event)
        if current is ToolCallEvent or current is CutToolCall:
            if texts is not None:
                merged[-1], texts = kind("".join(texts)), None
            append(event)
            kind = None
            continue
        if not event.text:
            continue
        if current is kind:
            if texts is None:
                texts = [merged[-1].text]
            texts.append(event.text)
            continue
        if texts is not None:
            merged[-1], texts = kind("".join(texts)), None
        append(event)
        kind = current
    if texts is not None:
        merged[-1] = kind("".join(texts))
    return merged


class Outbox:
    """The events a machine settled since it last returned some: what its next feed or close returns.

    pending: events not merged yet (they are never empty deltas). A run's or
    a list's thousands of events, merged among themselves already, are kept
    as they are in settled (``add_merged``), so ``take`` does not walk them
    again: only their first may join a delta before them, and only their
    last one after them.
    """

    __slots__ = ("pending", "settled")

    def __init__(self) -> None:
        self.pending: list[Event] = []
        self.settled: list[Event] = []

    def add(self, events: list[Event]) -> None:
        """Add events merged among themselves (no empty delta, no two deltas of a kind side by side)."""
        if len(events) > 2:
            self.add_merged(events)
        else:
            self.pending += events

    def add_merged(self, events: list[Event]) -> None:
        pending = self.pending
        pending.append(events[0])
        if len(events) == 1:
            return
        self.settled += merge_deltas(pending) if len(pending) > 1 else pending
        self.settled += events[1:-1]
        self.pending = [events[-1]]

    def take(self) -> list[Event]:
        """Every event added since the last take, merged; the outbox is then empty."""
        events, settled = self.pending, self.settled
        if settled:
            self.settled = []
        elif not events:
            return []
        self.pending = []
        # Events are never empty deltas, so a lone one is merged already.
        if len(events) > 1:
            events = merge_deltas(events)
        return settled + events if settled else events


def region_events(region: str, spans: list[CallSpan]) -> list[Event]:
    """The events of one call region: a call per span (at least one), the region's text around them as text.

    Spans that share a stretch (a list one marker opened: every span is the
    whole region) give their calls one after another; text between spans
    is text. No two deltas touch, so the result is merged already.
    """
    made = call_events(map(_CALL, spans), map(_ID, spans))
    first = spans[0]
    if first.start == 0 and first.end >= len(region):
        return made  # the first call spans the region (one call, or a list's): no text anywhere
    return _with_text_between(region, spans, made)


def _with_text_between(region: str, spans: list[CallSpan], made: list[Event]) -> list[Event]:
    """made (the call of each span) with the region's text before, between and after the spans."""
    events: list[Event] = []
    cursor = 0
    for span, event in zip(spans, made):
        if span.start > cursor:
            events.append(TextDelta(region[cursor : span.start]))
        events.append(event)
        cursor = max(cursor, span.end)
    if cursor < len(region):
        events.append(TextDelta(region[cursor:]))
    return events


__all__ = [
    "CutToolCall",
    "Event",
    "Marker",
    "Outbox",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallEvent",
    "call_events",
    "merge_deltas",
    "region_events",
]
