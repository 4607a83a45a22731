"""What a machine makes of a call region once its extent found the end: events, text, or a refusal.

A region in the machine's own format is read by the format's reader (or,
when it is one call written exactly as the writer writes it, by the run
shape's ``read_one``): its calls become ``ToolCallEvent``, the text around
them ``TextDelta``. A region another format opened is a leak:
``UnparsedToolCall`` names its marker, offset and format, or, in a survey
(``record``), it is listed as a ``Marker`` and kept as text. A region the
reader refuses raises with the reader's reason. A reply that ended inside
a region, or inside an opening far enough in to be a call, raises too when
the machine is strict; otherwise (``cut_events``) the calls of the region
that closed before the cut are read as calls (in a section or a JSON list;
a list of Python calls, one expression, only once its ``]`` came), and the
rest is one ``CutToolCall``, named when the declaration says where its
name stands.

Not handled in a cut region: more than ``_TRIES`` candidate call ends
(then the calls before the cut stay in the cut call's ``raw``), and a name
the declaration leaves hand-written (the cut call's name is then None).

Not handled here: where regions start and end (``templatestudio.engine``,
``templatestudio.openings`` and each format's extent).
"""

from __future__ import annotations

import functools
import json
import re

from templatestudio.calls import UnparsedToolCall
from templatestudio.canonical_runs import RunShape
from templatestudio.events import CutToolCall, Event, Marker, TextDelta, ToolCallEvent, region_events
from templatestudio.wire.arguments import Invoke, NameBetween, NameKey
from templatestudio.wire.base import CallSyntaxError, Extent, Format, Opener
from templatestudio.wire.json_scan import json_string_end


class Regions:
    """Reads the call regions of one machine: own is its format (None: every call is foreign).

    strict: a reply that ends inside a call of own raises; otherwise the
    cut call is a ``CutToolCall`` event.
    """

    def __init__(self, own: Format | None, record: bool, runs: RunShape | None, strict: bool = True) -> None:
        self.own = own
        self.record = record
        self.runs = runs
        self.strict = strict
        self.markers: list[Marker] = []  # the leaks a survey recorded

    def read(self, buffer: str, start: int, end: int, fmt: Format, opener: Opener, extent: Extent,
             offset: int) -> list[Event] | None:
        """The events of the region buffer[start:end] that fmt's opener opened at reply offset offset.

        None: the region is text (a region the reader says is no call, or
        a leak a survey recorded). An empty list: the format's own way of
        saying "no call" (LFM2's empty block): the region shows nothing.
        """
        region = buffer[start:end]
        if self.runs is not None and fmt is self.own and extent.found is None:
            # A call written exactly as the writer writes it: read as a run
            # reads its calls (a stream's usual case: one region per call).
            # Not where the extent decoded the value already (a long region
            # read whole): the reader takes that value, decoded once.
            made = self.runs.read_one(region)
            if made is not None and not beyond_wire(fmt, (made,)):
                return [made]
        try:
            spans = fmt.read_region(region, opener, extent.found)
        except CallSyntaxError as error:
            if extent.ended_by_reply:
                return self.cut(fmt, opener, offset, region, str(error))
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

    def cut(self, fmt: Format, opener: Opener, offset: int, text: str, reason: str = "") -> list[Event] | None:
        """The reply ended inside a call of fmt opened at offset; text is all of it from its marker.

        Raises when strict (or the call is another format's: a leak);
        otherwise the events of ``cut_events``. None: a survey recorded a
        leak, and the text stays text.
        """
        if fmt is not self.own:
            self.foreign(fmt, opener, offset)
            return None
        if not self.strict:
            return cut_events(fmt, opener, text, offset)
        # reason: what the reader found in the unclosed region (read as if a
        # stop string had removed its closer), kept for whoever debugs it.
        raise UnparsedToolCall(
            f"the reply ended inside a tool call: {text[:24]!r} at offset {offset} was never closed"
            + (f" ({reason})" if reason else "")
        )

    def _reader(self) -> str:
        return f"the {self.own.name} format" if self.own is not None else "the reader"


def beyond_wire(fmt: Format, events) -> bool:
    """Whether a call among events has arguments that fmt's reader reads as text (``WireLimit.read_as_text``).

    A run shape reads a call as written; the format's reader may read such
    a call otherwise (Llama 3 takes schema-shaped arguments for a tool's
    schema: text), so a run leaves it to the reader, and so does a stream.
    Only those limits are looked at: the others cannot hold inside a call
    read whole, and walking every string of every call would cost a run
    half its speed (Apriel's small calls: 79 MB/s down to 37).
    """
    limits = _wire_limits(fmt)
    return bool(limits) and any(type(event) is ToolCallEvent and any(applies(event.call.arguments) for applies in limits)
                                for event in events)


@functools.cache
def _wire_limits(fmt: Format) -> tuple:
    return tuple(limit.applies for limit in fmt.wire_limits if limit.where == "wire" and limit.read_as_text)


def cut_events(fmt: Format, opener: Opener, text: str, offset: int) -> list[Event]:
    """The events of text, a call region of fmt opened at reply offset offset that the reply cut.

    The calls that closed before the cut are read as the machine reads a
    region whose closer never came (a section's closer a server stopped
    on): text is cut where a call ended (``_call_ends``) and the prefix is
    read, as it stands or followed by the closers the declaration says
    would close it (``_endings``: a section's, a list's, the call's). Those
    closers are handed to the reader only, never shown as events, and the
    reader decides: the first prefix (from the last call end) that the
    extent takes whole and the reader reads as calls gives the calls. What
    follows it, or all of text, is the ``CutToolCall``; when that is only
    the start of a closer its name is None (no call was cut; the strict
    reader raises there too). At most ``_TRIES`` call ends are tried, so a
    cut call whose arguments hold many closers costs a bounded time: past
    them, the calls before it stay in the cut call's raw.
    """
    endings = _endings(fmt.wire)
    for boundary in _call_ends(fmt, text)[:_TRIES]:
        for ending in endings:
            region = text[:boundary] + ending
            extent = opener.extent()
            if extent.advance(region, 0, True) != len(region):
                continue
            try:
                spans = fmt.read_region(region, opener, extent.found)
            except CallSyntaxError:
                continue
            if spans:
                rest = text[boundary:]
                events = _without_ending(region_events(region, spans), ending)
                return [*events, CutToolCall(cut_name(fmt, rest), rest, offset + boundary)]
    return [CutToolCall(cut_name(fmt, text), text, offset)]


_TRIES = 32
# Where a call in a list may have ended: a closing bracket with the list's
# comma after it, or the list's own closing bracket.
_ITEM_END = re.compile(r"[}\)](?=[ \t\n\r]*,)|\]")
_LIST_END = re.compile(r"\]")  # a bracketed section's close: where its calls may have ended (_call_ends)


def _endings(shape) -> tuple[str, ...]:
    """What may close a region cut after a whole call: nothing, or the declared section, list, call closers."""
    if shape is None:
        return ("",)
    inner = [""]
    if shape.section is not None:
        inner += [shape.section.close, shape.section.tail + shape.section.close]
    listed = getattr(shape.arguments, "listed", None)
    if listed is not None:
        inner += [listed.close, "]", "\n]"]
    outer = ["", shape.call.tail + shape.call.close, *(wrapper.close for wrapper in shape.wrappers)]
    return tuple(dict.fromkeys(first + second for first in inner for second in outer))


def _without_ending(events: list[Event], ending: str) -> list[Event]:
    """events less the ending cut_events handed the reader, where the region's text after the calls shows it."""
    last = events[-1]
    if not ending or not isinstance(last, TextDelta) or not last.text.endswith(ending):
        return events
    kept = last.text[: -len(ending)]
    return events[:-1] + ([TextDelta(kept)] if kept else [])


def _call_ends(fmt: Format, text: str) -> list[int]:
    """Offsets in text (not its end) where a call may have ended, last first.

    Just past each literal closer of fmt, and in a JSON list of calls just
    past each bracket that a comma follows and each ``]``. In a section
    opened by a bracket (pythonic's Python list) only past each ``]``: the
    list is one expression, read whole or not at all (as Meta's and vLLM's
    pythonic readers parse it), so a list cut before its ``]`` keeps none
    of its calls; a wrapped list cut inside its wrapper's closer keeps them.
    In a section of calls that have no closer of their own (OLMo 3's), past
    each closing bracket the declared separator follows. Never past any
    other bracket in other formats: one may close any value inside the
    arguments. (Each end is only a candidate: the reader decides.)
    """
    ends = set()
    for closer in fmt.closers:
        if len(closer) < 2:
            continue
        found = text.find(closer)
        while found != -1:
            ends.add(found + len(closer))
            found = text.find(closer, found + 1)
    shape = fmt.wire
    if shape is not None and getattr(shape.arguments, "listed", None) is not None:
        ends.update(found.end() for found in _ITEM_END.finditer(text))
    elif shape is not None and shape.section is not None and shape.section.open == "[":
        ends.update(found.end() for found in _LIST_END.finditer(text))
    elif shape is not None and shape.section is not None and not shape.call.close and shape.separator:
        # Calls with no closer of their own, one after another in a section (OLMo 3's Python calls,
        # a newline between two): a call may have ended at a bracket the separator follows.
        after = re.compile(rf"[}}\)](?={re.escape(shape.separator)})")
        ends.update(found.end() for found in after.finditer(text))
    ends.discard(len(text))
    return sorted(ends, reverse=True)


def cut_name(fmt: Format, raw: str) -> str | None:
    """The name of the one call raw (a cut call's text) opens, where fmt's declaration says it stands.

    Read only when it is whole and unambiguous: a name between two literals
    (or in an element's opening tag) that raw opens once and closes; a JSON
    call object's name key when it is the key of raw's first object and no
    bracket comes before that object (a list, whose first object may be a
    whole call). None otherwise, and for a name the declaration leaves
    hand-written: a name is never guessed.
    """
    part = getattr(fmt.wire, "name", None)
    if isinstance(part, NameBetween) and not part.index or isinstance(part, Invoke):
        close = part.close if isinstance(part, NameBetween) else part.name_close
        opening = part.open or fmt.wire.call.open  # "": the name follows the call's own opener (Mistral's)
        first = raw.find(opening) if opening else -1
        if first == -1 or raw.find(opening, first + 1) != -1:
            return None
        start = first + len(opening)
        end = raw.find(close, start)
        if isinstance(part, NameBetween):  # the name, and the id the declaration allows after it (inner())
            found = re.fullmatch(part.inner(), raw[start:end]) if end != -1 else None
            return found.group(1) if found is not None else None
        name = raw[start:end] if end != -1 else ""
        return name if name and re.fullmatch(r"[^<>\n]+", name) else None
    if isinstance(part, NameKey):
        found = re.compile(r'\{[ \t\n\r]*"' + re.escape(part.key) + r'"[ \t\n\r]*:[ \t\n\r]*"').search(raw)
        if found is None or "{" in raw[: found.start()] or "[" in raw[: found.start()]:
            return None
        end = json_string_end(raw, found.end())
        if end == -1:
            return None
        try:
            name = json.loads(raw[found.end() - 1 : end])
        except ValueError:  # an escape JSON does not know: not a name as written
            return None
        return name or None
    return None


__all__ = ["Regions", "beyond_wire", "cut_events", "cut_name"]
