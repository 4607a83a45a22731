"""What a machine makes of a call region once its extent found the end: events, text, or a refusal.

A region in the machine's own format is read by the format's reader (or,
when it is one call written exactly as the writer writes it, by the run
shape's ``read_one``): its calls become ``ToolCallEvent``, the text around
them ``TextDelta``. A region another format opened is a leak:
``UnparsedToolCall`` names its marker, offset and format, or, in a survey
(``record``), it is listed as a ``Marker`` and kept as text. A region the
reader refuses raises with the reader's reason; so does a reply that ended
inside a region, or inside an opening far enough in to be a call.

Not handled here: where regions start and end (``templatestudio.engine``,
``templatestudio.openings`` and each format's extent).
"""

from __future__ import annotations

from templatestudio.calls import UnparsedToolCall
from templatestudio.canonical_runs import RunShape
from templatestudio.events import Event, Marker, region_events
from templatestudio.wire.base import CallSyntaxError, Extent, Format, Opener


class Regions:
    """Reads the call regions of one machine: own is its format (None: every call is foreign)."""

    def __init__(self, own: Format | None, record: bool, runs: RunShape | None) -> None:
        self.own = own
        self.record = record
        self.runs = runs
        self.markers: list[Marker] = []  # the leaks a survey recorded

    def read(self, buffer: str, start: int, end: int, fmt: Format, opener: Opener, extent: Extent,
             offset: int) -> list[Event] | None:
        """The events of the region buffer[start:end] that fmt's opener opened at reply offset offset.

        None: the region is text (a region the reader says is no call, or
        a leak a survey recorded). An empty list: the format's own way of
        saying "no call" (LFM2's empty block): the region shows nothing.
        """
        region = buffer[start:end]
        if self.runs is not None and fmt is self.own:
            # A call written exactly as the writer writes it: read as a run
            # reads its calls (a stream's usual case: one region per call).
            made = self.runs.read_one(region)
            if made is not None:
                return [made]
        try:
            spans = fmt.read_region(region, opener, extent.found)
        except CallSyntaxError as error:
            if extent.ended_by_reply:
                self.cut(fmt, opener, offset, buffer[start : start + 24], str(error))
            else:
                self.refuse(fmt, opener, offset, str(error))
            return None  # recorded: the region is kept as text
        if spans is None or fmt is not self.own:
            if spans:
                self.foreign(fmt, opener, offset)
            return None
        return region_events(region, spans) if spans else []

    def foreign(self, fmt: Format, opener: Opener, offset: int) -> None:
        """A call of fmt opened at offset, where fmt is not the machine's: raise, or record it."""
        marker = Marker(opener.literal, offset, (fmt.name,))
        if not self.record:
            raise marker.left_unread(self._reader())
        self.markers.append(marker)

    def refuse(self, fmt: Format, opener: Opener, offset: int, reason: str) -> None:
        if fmt is not self.own:
            self.foreign(fmt, opener, offset)
            return
        raise UnparsedToolCall(
            f"{self._reader()} cannot read the tool call at offset {offset} ({opener.literal!r}): {reason}"
        )

    def cut(self, fmt: Format, opener: Opener, offset: int, shown: str, reason: str = "") -> None:
        """The reply ended inside a call of fmt opened at offset; shown is the start of its text."""
        if fmt is not self.own:
            self.foreign(fmt, opener, offset)
            return
        # reason: what the reader found in the unclosed region (read as if a
        # stop string had removed its closer), kept for whoever debugs it.
        raise UnparsedToolCall(
            f"the reply ended inside a tool call: {shown!r} at offset {offset} was never closed"
            + (f" ({reason})" if reason else "")
        )

    def _reader(self) -> str:
        return f"the {self.own.name} format" if self.own is not None else "the reader"


__all__ = ["Regions"]
