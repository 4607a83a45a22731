"""Harmony's hand-written extents: a call message with the next message's start, and a message boundary.

``templatestudio.formats.harmony`` declares the literals (from its
``WIRE``) and passes them in; this module knows only how far a region
runs. Why the two extents exist:

- when a server does not stop at ``<|call|>`` (ignore_eos) the next
  message follows it, opened by ``<|start|>assistant``; the machine finds
  no marker there (``<|start|>`` would sit inside the
  ``<|end|><|start|>assistant`` boundary, which the machine reads
  differently whole and streamed), so the call's region takes that start,
  and one space after it (the role's, before ``to=``), as its own framing
  (``CallThenNextMessage``, and ``call_end`` for the reader, which reads
  the call without it);
- the space in ``<|start|>assistant to=…`` after a boundary is the
  header's, not content (``Boundary``).

Not handled: more than the one space the template writes between the
role and the recipient: a region takes that one space only.
"""

from __future__ import annotations

from templatestudio.wire.base import Extent
from templatestudio.wire.extents import TagExtent


def call_end(region: str, closers: tuple[str, ...], next_start: str) -> int:
    """Where a call's region ends without the next message's start that ``CallThenNextMessage`` took.

    closers: what ends a call message; next_start: what opens the next
    message (``<|start|>assistant``), taken whole with one space after it,
    or any start of it at the reply's end.
    """
    # The closer stands right before the taken start, if anywhere: only the tail is searched.
    near_end = max(0, len(region) - max(map(len, closers)) - len(next_start) - 1)
    for closer in closers:
        at = region.rfind(closer, near_end)
        if at == -1:
            continue
        tail = region[at + len(closer) :]  # (only the tail: a copy from -1 would copy the whole region)
        if tail and (next_start.startswith(tail) or tail == next_start + " "):
            return at + len(closer)
    return len(region)


def next_message(buffer: str, at: int, final: bool, next_start: str) -> int | None:
    """Length of the next message's start at buffer[at] (0: none), None while more text may change it.

    next_start and one space after it; at the reply's end a part of
    next_start (a reply cut there shows none of it).
    """
    rest = buffer[at : at + len(next_start) + 1]
    if rest.startswith(next_start):
        if len(rest) == len(next_start) and not final:
            return None  # a space may follow
        return len(next_start) + (rest[len(next_start) :] == " ")
    if rest and next_start.startswith(rest):
        return len(rest) if final else None
    return None if not rest and not final else 0


class CallThenNextMessage(Extent):
    """A call's extent (to one of closers, or the reply's end), then the next message's start (next_start).

    After a call's terminator nothing else can begin, so the region takes
    the next message's start as its own framing; the next header is then
    read by the openers as any header is. A reply that ends inside
    next_start shows none of it, as a reply cut inside any framing. A
    stream gives the call once what follows the terminator is settled: the
    next characters, or the reply's end.
    """

    def __init__(self, skip: int, closers: tuple[str, ...], next_start: str) -> None:
        # JSON strings are stepped over: a string may hold a closer as text.
        self._call = TagExtent(skip, closers, "json", close_at_end=True)
        self._next_start = next_start
        self._end: int | None = None
        self.examined = 0

    @property
    def found(self):
        return self._call.found

    @property
    def ended_by_reply(self) -> bool:
        return self._call.ended_by_reply

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        if self._end is None:
            before = self._call.examined
            self._end = self._call.advance(buffer, start, final)
            self.examined += self._call.examined - before
            if self._end is None:
                return None
        if self._call.ended_by_reply:
            return self._end
        more = next_message(buffer, self._end, final, self._next_start)
        if more is None:
            return None
        self.examined += more
        return self._end + more


class Boundary(Extent):
    """The message boundary (``<|end|><|start|>assistant``), and the space before a recipient in the role after it.

    boundary: the boundary's literal; recipient: the space and the
    recipient's literal (`` to=``) whose space the region takes. The
    opener has seen what follows the boundary (the recipient or a channel).
    """

    examined = 0

    def __init__(self, boundary: str, recipient: str) -> None:
        self._boundary, self._recipient = boundary, recipient

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        end = start + len(self._boundary)
        self.examined = len(self._boundary) + 1
        return end + 1 if buffer.startswith(self._recipient, end) else end
