"""A region that is one token and nothing else: ``TokenExtent`` (see ``base.Extent``).

Some formats declare an opener for a framing token alone (a message's end,
``<|eom|>``, ``<|eot|>``, ``<|return|>``), so that the token is dropped
rather than shown: the region it opens is the token itself. A ``TagExtent``
closing at that same token says so too, but builds a scanner per region;
a flood of the token paid that per copy. This one holds no state (the
region's end is known when it opens), so one instance serves every region.

Not handled: a token whose region goes on past it (use ``TagExtent``).
"""

from __future__ import annotations

from templatestudio.wire.base import Extent


class TokenExtent(Extent):
    """Ends just past the token that opened the region: its length characters from the region's start."""

    def __init__(self, token: str) -> None:
        self._length = len(token)
        self.examined = len(token)  # the token, looked at once: all a region of it holds

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        end = start + self._length
        return end if end <= len(buffer) else None

    def __call__(self) -> TokenExtent:
        """The opener's extent factory: the one instance (it holds no state)."""
        return self
