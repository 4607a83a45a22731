"""A closing token that may follow a call: ``ThenOptionalCloser`` and the reader's check ``only_closer_after``.

Some formats end a call with its own region (a JSON value, a closing tag)
and may then write one more token that belongs to the call, not to the text
after it: DeepSeek's section closer after the last call, GigaChat's end of
message. The extent waits while the text so far could still become that
token, so its answer does not depend on where chunks were cut.

Not handled: text other than whitespace between the call and the token
(then the token is the next region's business, or text).
"""

from __future__ import annotations

from templatestudio.wire.base import Extent
from templatestudio.wire.json_scan import SPACE


class ThenOptionalCloser(Extent):
    """Ends where ``inner`` ends, or past ``closer`` when only whitespace stands between them.

    For calls that a closing token may follow (DeepSeek's section closer,
    GigaChat's end of message): the token belongs to the call, not to the
    text after it. While the text so far could still become the closer it
    waits, so the answer does not depend on where chunks were cut. A reply
    that ends inside the closer ends the region there (``only_closer_after``
    lets the reader accept the cut token).
    """

    def __init__(self, inner: Extent, closer: str) -> None:
        self._inner = inner
        self._closer = closer
        self._after: int | None = None  # offset from start just past the inner region, once found
        self._gap = 0  # whitespace passed over after it
        self.examined = 0

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        if self._after is None:
            end = self._inner.advance(buffer, start, False)
            self.examined = self._inner.examined
            if end is None:
                if final:  # the inner region's own answer at the end of the reply
                    end = self._inner.advance(buffer, start, True)
                    self.examined = self._inner.examined
                    self.ended_by_reply = self._inner.ended_by_reply
                    self.found = self._inner.found
                return end
            self._after = end - start
            self.found = self._inner.found  # offsets from start: the closer after it changes nothing
        position = SPACE.match(buffer, start + self._after + self._gap).end()
        self.examined += position - (start + self._after + self._gap)
        self._gap = position - start - self._after
        tail = buffer[position : position + len(self._closer)]
        if tail == self._closer:
            self.examined += len(tail)
            return position + len(self._closer)
        if tail and self._closer.startswith(tail):
            if not final:
                return None  # a piece of the closer so far: wait for more
            self.examined += len(tail)
            return len(buffer)  # the reply ended inside the closer
        if position == len(buffer):
            # Whitespace so far: the closer may follow. At the end of the reply
            # it is the same cut, with none of the closer written yet.
            return len(buffer) if final else None
        return start + self._after


def only_closer_after(region: str, position: int, closer: str) -> bool:
    """Whether region[position:] is whitespace, then closer or a start of it, and nothing more.

    A start of the closer can only end a region that ``ThenOptionalCloser``
    ended at the end of the reply: the reply was cut while the model wrote
    the closing token after a whole call. The call is read; the fragment,
    part of a special token, is not shown.
    """
    return closer.startswith(region[SPACE.match(region, position).end() :])
