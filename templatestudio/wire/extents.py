"""The shared ways a call region ends, each a resumable scanner (see ``base.Extent``).

- ``TagExtent``: at a closing literal, not counting closers inside strings
  (JSON strings with backslash escapes, or a format's own string delimiter);
  ``PastHeadTagExtent`` (``wire.past_head_extent``) searches for it only
  past a head literal that holds it (Command R+'s fence).
- ``ValueExtent`` (``wire.value_extent``): where the first bracketed value
  after the opener closes again, stepping over strings (JSON or Python quoting).

Each searches with compiled regexes from where it stopped, so a long
string argument is crossed at C speed and nothing is scanned twice. A literal
that may still be completing at the end of the buffer is left for the next
call, which is what keeps the answer independent of chunk boundaries.

A tag extent with JSON strings scans only once a closer has arrived (before
that the region cannot end: a stream's chunks are only searched for one),
and then first tries the quick path: the first JSON value after the
opener's head (DeepSeek's ``NAME<｜tool▁sep｜>``, Kimi's call id) decoded
whole by the C decoder, kept for the reader (``Extent.found``). So a
megabyte string argument is decoded once, not scanned quote by quote and
then decoded. A value extent cannot wait so (its end is a bracket, which
strings hold too): it scans each chunk as it comes.

The JSON scanning they share is ``wire.json_scan``; the searches a tag
extent compiles from its closers, and the facts its fast paths test, are
``wire.tag_closers``; a closing token that may follow a call's own end is
``wire.optional_closer``.

Not handled: strings in triple quotes; comments inside JSON.
"""

from __future__ import annotations

from templatestudio.wire.base import Extent, FoundJSON
from templatestudio.wire.json_scan import (
    SPACE, escape_resume_point, json_string_end, json_value_at, may_close,
)
from templatestudio.wire.tag_closers import tag_closers


# Below this many characters a region's first look goes from the front: the
# quick path's look from the end pays only over a long value.
_LONG_REGION = 4096


class TagExtent(Extent):
    """Ends just past ``close`` (or the first of several closers), found outside strings, searched from ``skip`` on.

    strings: None (no strings: the first closer ends the call), "json"
    (double-quoted with backslash escapes), or a delimiter that both opens
    and closes a string with nothing escaped (Gemma 4's ``<|"|>``).
    close_at_end: at the end of the reply an unclosed region ends there (its
    reader then decides whether what it holds is a whole call).
    """

    def __init__(self, skip: int, close: str | tuple[str, ...], strings: str | None = None, *,
                 close_at_end: bool = False) -> None:
        self.close = close
        self._closes = closes = (close,) if isinstance(close, str) else tuple(close)
        self.close_at_end = close_at_end
        self._skip = skip
        self.strings = strings
        self._json = strings == "json"
        self.position = skip
        self.in_string = False
        self.examined = 0
        opener = '"' if strings == "json" else strings
        looks = tag_closers(closes, opener, self._json)
        self._outside, self._first, self._longest, self._single = looks.outside, looks.first, looks.longest, looks.single
        self._shared_first = looks.shared_first
        self._cross = looks.cross
        self._delimiter = opener
        self._quick = looks.quick  # False once the quick path decoded (it is tried once)
        # Region offset where the next look for a closer starts (see _no_closer_yet): no closer starts
        # before it but inside a string the scan crossed. Kept at or past position, so the look per token
        # reads one field.
        self._looked = skip
        self._first_look = True
        self._closer_at = -1  # region offset of the closer the last look found

    def _no_closer_yet(self, buffer: str, start: int) -> bool:
        """Whether no closer starts in the text not looked at yet (a stream's chunk mostly holds none).

        Until a closer arrives the region cannot end, so the exact scan
        (strings and escapes, the costly part on text full of escaped
        quotes) waits for one: it then runs from where it stopped, or the
        quick path decodes the value whole, and a long string argument is
        crossed once instead of chunk by chunk. The look is counted as
        examined, up to the closer it finds or the end: a character is
        looked at here once and crossed by the scan or the decoder once.
        """
        at = start + self._looked
        length = len(buffer)
        closes = self._closes
        if self._shared_first is not None and buffer.find(self._shared_first, at) == -1:
            closes = ()  # (harmony's <|call|> and <|end|>: a chunk mostly holds no '<' at all)
        reach = at
        for item in closes:
            # The first character alone first: a one-character search runs several
            # times faster than a longer one, and most text holds no closer's start.
            found = buffer.find(item[0], at)
            if found != -1:
                found = buffer.find(item, found)
            if found != -1:
                self._closer_at = found - start
                self.examined += max(reach, found + len(item)) - at
                return False
            reach = length
        # A closer cut at the end of the buffer may still complete: looked for again.
        safe = max(at, length - self._longest + 1)
        self.examined += safe - at
        self._looked = safe - start
        return True

    def _value_first(self, buffer: str, start: int) -> int | None:
        """The quick path: the region's first JSON value decoded whole, or None (then the scan runs as always).

        Tried once, before anything is scanned, when the first bracket comes
        before any quote or closer and a closer stands somewhere after it:
        the scan would reach that bracket outside strings and cross the
        value to its end (a valid value's strings end where the scan ends
        them, and no closer can stand outside them: ``TagClosers.quick``). The
        decoded value is kept (``found``) for the reader. Returns the
        region's end when a closer follows the value; otherwise the scan
        goes on from the value's end.
        """
        at = start + self._skip
        first = self._first.search(buffer, at)
        if first is None or buffer[first.start()] not in "{[":
            return None
        index = first.start()
        closes = self._closes
        known = start + self._closer_at >= index  # the look found a closer after the bracket
        if not known and not any(buffer.rfind(item, index) != -1 for item in closes) or not may_close(buffer, index):
            return None
        self._quick = False
        # The value likely ends before the closer the look found: the decoder's first window reaches it.
        # Without a look (a reply's first look, from the end) the window reaches the first copy of a
        # closer's first character (one memchr, ``_first_closer``), never as far as the last closer:
        # that would cost a refused region the whole reply (a flood of them). Harmony's 1 MB call:
        # two failed windows cost 0.2 ms of its 1.2.
        window = start + self._closer_at + self._longest - index if known else self._first_closer(buffer, index)
        whole = json_value_at(buffer, index, window)
        if whole is None:
            return None
        value, stop = whole
        self.found = FoundJSON(index - start, value, stop - start)
        self._looked = max(self._looked, stop - start)
        after = SPACE.match(buffer, stop).end()
        if buffer.startswith(closes, after):
            end = after + max(len(item) for item in closes if buffer.startswith(item, after))
            self.examined += end - at
            self.position = end - start
            return end
        self.examined += stop - at
        self.position = stop - start
        return None

    def _first_closer(self, buffer: str, index: int) -> int:
        """The window from index past the first copy of a closer's first character after index, or 0.

        Every JSON extent's closer starts with ``<`` or a backtick, which a
        valid value holds only in its strings, so the value ends in this
        window unless a string holds the character (then the windows grow
        from there, as they would for a closer starting with a character of
        JSON's own syntax). It need not start a closer: Kimi K2's call closer
        comes before the section's closer, and ends the value as well.
        """
        found = buffer.find(self._shared_first or self._closes[0][0], index)
        return 0 if found == -1 else found + self._longest - index

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        if self._json and not final:
            if self._first_look:
                # A reply read whole mostly ends with its closer: the quick path,
                # which looks for one from the end, spares a look from the front
                # over a long value. Tried on the first look only (in a stream a
                # closer found from the end every chunk would cost the whole
                # text), and only over a long region: a short one's front look
                # costs less than the try (a stream's first chunk is short).
                self._first_look = False
                if self._quick and len(buffer) - start >= _LONG_REGION:
                    end = self._value_first(buffer, start)
                    if end is not None:
                        return end
            single = self._single
            if single is not None:
                # _no_closer_yet for one closer, written out: a stream calls this per token
                # (64 KB of small calls in 4-character chunks, timed in alternation with
                # b915f27: 1.44x -> 1.26x of its time with this instead of the call).
                at = start + self._looked
                found = buffer.find(single[0], at)
                if found != -1:
                    found = buffer.find(single, found)
                if found == -1:
                    safe = len(buffer) - self._longest + 1
                    if safe < at:
                        safe = at
                    self.examined += safe - at
                    self._looked = safe - start
                    return None
                self._closer_at = found - start
                self.examined += found + len(single) - at
            elif self._no_closer_yet(buffer, start):
                return None
        # Over a short region the scan below costs less: the reader decodes the
        # call anyway (a run's shortcut reads a written call whole), so a decode
        # here would be a second one (64 KB of small calls in 4-character chunks,
        # timed in alternation with b915f27: 1.20x -> 1.10x of its time).
        if self._quick and self.position == self._skip and (final or len(buffer) - start >= _LONG_REGION):
            end = self._value_first(buffer, start)
            if end is not None:
                return end
        position = start + self.position
        length = len(buffer)
        single = self._single
        if self._delimiter is None and single is not None:
            # No strings and one closer: the region ends at its first copy. str.find
            # crosses a long region several times faster than the compiled
            # alternation (Apriel's 1 MB call: 0.39 ms -> 0.04); its first character
            # alone first (memchr), then the whole closer from there. Written out
            # here: a stream asks this per token.
            found = buffer.find(single[0], position)
            if found != -1:
                found = buffer.find(single, found)
            if found != -1:
                end = found + len(single)
                self.examined += end - position
                self.position = end - start
                return end
            # A closer cut at the buffer's end may still complete, unless the reply ended.
            safe = length if final else max(position, length - self._longest + 1)
            self.examined += safe - position
            self.position = safe - start
        else:
            if self._scan(buffer, start, position, final):
                return start + self.position
            if self.position > self._looked:
                self._looked = self.position
        if final and self.close_at_end:
            self.ended_by_reply = True
            return length
        return None

    def _scan(self, buffer: str, start: int, position: int, final: bool) -> bool:
        """Cross strings and look for a closer outside them from position; True when one ends the region at self.position."""
        length = len(buffer)
        while True:
            if self.in_string:
                if self._json:
                    # (A JSON tag extent scans once a closer has arrived, not per token: the
                    # function's own first step is the str.find most strings need.)
                    end = json_string_end(buffer, position)
                    if end == -1:
                        resume = escape_resume_point(buffer, position)
                        self.examined += resume - position
                        self.position = resume - start
                        break
                    self.examined += end - position
                    position = end
                else:
                    end = buffer.find(self._delimiter, position)
                    if end == -1:
                        safe = length if final else max(position, length - len(self._delimiter) + 1)
                        self.examined += safe - position
                        self.position = safe - start
                        break
                    self.examined += end + len(self._delimiter) - position
                    position = end + len(self._delimiter)
                self.in_string = False
            if self._cross is not None:
                # Text and whole strings crossed in one match, up to a closer, an unclosed string or the end.
                end = self._cross.match(buffer, position).end()
                if end == length:
                    # No string is open past the last quote: a closer cut at the end may still complete there.
                    safe = length if final else max(position, buffer.rfind('"', position) + 1, length - self._longest + 1)
                    self.examined += safe - position
                    self.position = safe - start
                    break
                if buffer[end] == '"':
                    self.examined += end + 1 - position
                    position = end + 1
                    self.in_string = True
                    continue
                end += max(len(item) for item in self._closes if buffer.startswith(item, end))
                self.examined += end - position
                self.position = end - start
                return True
            found = self._outside.search(buffer, position)
            if found is None:
                # A closer cut at the buffer's end may still complete, unless the reply ended.
                safe = length if final else max(position, length - self._longest + 1)
                self.examined += safe - position
                self.position = safe - start
                break
            end = found.end()
            self.examined += end - position
            position = end
            if found.group() in self._closes:
                self.position = position - start
                return True
            self.in_string = True
        return False

