"""A call whose head holds its own closer: ``PastHeadTagExtent``, a tag extent searched from past the head.

Command R+ fences its call's JSON after ``Action:``, and the fence that
opens the call begins with the fence that closes it: searched for from
the opening, the closer would be found at once. This extent finds the
head literal first, then hands the rest of the region to a
``wire.extents.TagExtent`` with JSON strings, adding its work to its own
and passing on what it decoded (``Extent.found``).

Not handled here: the closer's own search (``wire.extents``); a head the
region does not hold (the opener put it there: the region then ends only
with the reply).
"""

from __future__ import annotations

from templatestudio.wire.base import Extent
from templatestudio.wire.extents import TagExtent


class PastHeadTagExtent(Extent):
    """A ``TagExtent`` searched from just past a head literal: a call whose head holds its own closer.

    Command R+'s call is ``Action:`` then a ```` ```json ```` fence, closed by
    ```` ``` ````: the closer is searched for (outside JSON strings) from just
    past the head literal after the opening (``skip`` characters). The opener
    has matched when this is first advanced, so the buffer holds the head.
    """

    def __init__(self, skip: int, head: str, close: str) -> None:
        self._skip, self._head, self._close = skip, head, close
        self.inner: TagExtent | None = None
        self.examined = 0

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        if self.inner is None:
            head = buffer.find(self._head, start + self._skip)
            if head == -1:  # not reached through the opener; nothing to close
                return len(buffer) if final else None
            self.examined += head + len(self._head) - start
            self.inner = TagExtent(head + len(self._head) - start, self._close, "json")
        before = self.inner.examined
        end = self.inner.advance(buffer, start, final)
        self.examined += self.inner.examined - before
        self.found, self.ended_by_reply = self.inner.found, self.inner.ended_by_reply
        return end


__all__ = ["PastHeadTagExtent"]
