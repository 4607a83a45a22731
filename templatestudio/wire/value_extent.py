"""Where a bracketed value that follows a call's opener ends: ``ValueExtent`` (see ``base.Extent``).

For formats whose call is a JSON or Python value with no closing tag of its
own (Llama 3's JSON, Mistral's ``[TOOL_CALLS]`` list, Phi-4-mini, xLAM,
GigaChat, pythonic lists): the region ends where the first bracketed value
after the opener closes, stepping over strings. Its end is a bracket, which
strings hold too, so unlike ``TagExtent`` it cannot stop at the first
closer it sees; but it cannot end before a closing bracket (or a stop
literal) arrives, so a stream's chunks wait for one with a single search,
and the scan then crosses all the text since it stopped, resumably, with
compiled regexes. A stream's JSON list is read item by item as the scan
passes each item's end (``wire.list_items``), and handed to the reader
whole: its last ``]`` costs the last batch, not the list.

Not handled: strings in triple quotes; comments inside JSON.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

from templatestudio.wire.base import Extent, FoundJSON
from templatestudio.wire.list_items import READ_EVERY, ListItems
from templatestudio.wire.json_scan import (
    PYTHON_STRING_BODY, escape_resume_point, json_string_end, json_value_at, may_close,
)


@functools.lru_cache(maxsize=None)
def _value_patterns(brackets: str, quotes: str, units: tuple[str, ...]) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(inside the value: brackets and quotes; before it: unit and bracket first characters;
    inside a JSON-quoted value: the run of text and whole strings up to the next bracket or open string)."""
    inside = re.compile("[" + re.escape(brackets + quotes) + "]")
    firsts = {unit[0] for unit in units} | set(brackets[0::2])
    cross = re.compile(r'(?:[^"' + re.escape(brackets) + r']++|"(?:[^"\\]++|\\.)*+")*+', re.S)
    return inside, re.compile("[" + re.escape("".join(sorted(firsts))) + "]"), cross


# Text up to this long, not yet looked at, is first searched for a character that may end the region
# (a stream's token); a longer stretch is scanned at once.
_TOKEN = 256


@functools.lru_cache(maxsize=None)
def _ending(brackets: str, stops: tuple[str, ...]) -> re.Pattern:
    """A character without which the region cannot end: a closing bracket, or a stop literal's first character."""
    return re.compile("[" + re.escape("".join(sorted(set(brackets[1::2]) | {stop[0] for stop in stops}))) + "]")


@functools.lru_cache(maxsize=None)
def _head_pairs(units: tuple[str, ...], stops: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """What ``ValueExtent._head_step`` tries, in order: each head unit, then each stop literal."""
    return tuple(("unit", unit) for unit in units) + tuple(("stop", stop) for stop in stops)


class ValuePlan(NamedTuple):
    """What a ``ValueExtent`` looks up that depends only on its arguments (``value_extent``'s): built once."""

    quotes: str  # the quote characters that open a string
    json: bool
    opening: str  # the opening brackets
    heads: tuple[str, ...]  # the head units and stop literals
    head_pairs: tuple[tuple[str, str], ...]  # ``_head_pairs``
    inside: re.Pattern
    head: re.Pattern
    cross: re.Pattern
    ending: re.Pattern


def value_extent(skip: int, *, quotes: str = "json", brackets: str = "[]{}", head_units: tuple[str, ...] = (),
                 stop_at: tuple[str, ...] = ()) -> Callable[[], ValueExtent]:
    """An opener's extent factory: each call makes a ``ValueExtent`` with these arguments.

    skip: characters to pass over first (the opener's literal); quotes:
    "json" (``"`` strings) or "python" (``'`` and ``"`` strings); brackets:
    the pairs that nest. Before the value opens, head_units are passed over
    whole (Mistral's ``[ARGS]`` is not a bracket), and a stop_at literal
    ends the region just before it (the next call's marker). Quotes before
    the value opens are ordinary characters. What depends only on these is
    built here, once: a region is opened per call, and per copy of a flood
    of its marker (a flood of ``[TOOL_CALLS]`` paid 1 us a copy to build it).
    """
    return functools.partial(ValueExtent, skip, value_plan(quotes, brackets, head_units, stop_at))


def value_plan(quotes: str = "json", brackets: str = "[]{}", head_units: tuple[str, ...] = (),
               stop_at: tuple[str, ...] = ()) -> ValuePlan:
    """The ``ValuePlan`` of ``value_extent``'s arguments (for an extent class built on ``ValueExtent``)."""
    delimiters = "\"'" if quotes == "python" else '"'
    return ValuePlan(delimiters, quotes != "python", brackets[0::2], head_units + stop_at,
                     _head_pairs(head_units, stop_at), *_value_patterns(brackets, delimiters, head_units + stop_at),
                     _ending(brackets, stop_at))


class ValueExtent(Extent):
    """Ends just past the bracketed value that follows the opener (made by ``value_extent``, which says how)."""

    def __init__(self, skip: int, plan: ValuePlan) -> None:
        self.position = skip
        self._skip = skip
        self.depth = 0
        self.quote: str | None = None
        self.examined = 0
        (self._quotes, self._json, self._opening, self._heads, self._head_units, self._inside, self._head,
         self._cross, self._ending) = plan
        self._quiet_to = skip  # region offset from which the next look for an ending character starts
        self._items: ListItems | None = None  # a stream's JSON list: its items, read as they arrive

    def _string_end(self, buffer: str, position: int) -> tuple[int, bool]:
        """(index, closed): just past the string, or where to resume while it is open."""
        if self._quotes == '"':
            end = json_string_end(buffer, position)
            return (escape_resume_point(buffer, position), False) if end == -1 else (end, True)
        end = PYTHON_STRING_BODY[self.quote].match(buffer, position).end()
        if end >= len(buffer) or buffer[end] == "\\":  # open, or a lone backslash awaiting its pair
            return end, False
        # Past the closing quote; a newline (which ends no string) breaks the
        # value, and the region ends there for the reader to refuse.
        return (end + 1 if buffer[end] == self.quote else end), True

    def _head_step(self, buffer: str, at: int, final: bool) -> tuple[str, int]:
        """What starts at buffer[at] before the value opens: unit, stop, open, wait or skip."""
        for kind, unit in self._head_units:
            if buffer.startswith(unit, at):
                return kind, at + len(unit)
            if not final and len(buffer) - at < len(unit) and unit.startswith(buffer[at : at + len(unit)]):
                return "wait", at
        return ("open", at + 1) if buffer[at] in self._opening else ("skip", at + 1)

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        at = start + self._quiet_to
        if not final and len(buffer) - at < _TOKEN:
            # The region ends only at a closing bracket or a stop literal: until a
            # character that may begin one arrives, the scan waits (a stream's token
            # mostly brings none), and then crosses all the text since it stopped at
            # once. Each character is looked at here once and scanned once. (Not over
            # a long text, a whole reply's: the scan reads it anyway, and a regex class
            # search over 1 MB costs seven decodes of it.)
            if self._ending.search(buffer, at) is None:
                self.examined += len(buffer) - at
                self._quiet_to = len(buffer) - start
                return None
        if self.position == self._skip and self._json and not self.depth and self.quote is None:
            at = start + self._skip
            # A head unit or a stop literal is no JSON value (none starts like one: tests/test_extent_oracles.py),
            # so the decoder is not tried there (a flood of [TOOL_CALLS] tried it per copy).
            if (at < len(buffer) and buffer[at] in "{[" and not buffer.startswith(self._heads, at)
                    and may_close(buffer, at)):
                found = json_value_at(buffer, at)
                if found is not None:  # a whole value: its end is where the bracket count closes
                    self.found = FoundJSON(at - start, found[0], found[1] - start)
                    self.examined += found[1] - start
                    return found[1]
        position = start + self.position
        length = len(buffer)
        try:
            while True:
                if self.quote is not None:
                    if self._json:
                        # json_string_end's first step and escape_resume_point's, written out:
                        # a stream's chunk mostly ends inside a string with no backslash in it.
                        quote = buffer.find('"', position)
                        if quote > position and buffer[quote - 1] == "\\":
                            end = json_string_end(buffer, position)  # backslashes before it: counted there
                        else:
                            end = -1 if quote == -1 else quote + 1
                        if end == -1:
                            end = length if buffer[length - 1] != "\\" else escape_resume_point(buffer, position)
                            self.examined += end - position
                            position = end
                            return None
                    else:
                        end, closed = self._string_end(buffer, position)
                        if not closed:
                            self.examined += end - position
                            position = end
                            return None
                    self.examined += end - position
                    position, self.quote = end, None
                if not self.depth:
                    found = self._head.search(buffer, position)
                    if found is None:
                        self.examined += length - position
                        position = length
                        return None
                    kind, after = self._head_step(buffer, found.start(), final)
                    self.examined += after - position
                    if kind == "wait":
                        position = found.start()
                        return None
                    if kind == "stop":
                        position = found.start()
                        return position
                    if kind == "open" and self._json and buffer[found.start()] in "{[" and may_close(buffer, found.start()):
                        # The value opens after a head (Mistral's NAME[ARGS]): the
                        # decoder's quick path applies here as at the start.
                        whole = json_value_at(buffer, found.start())
                        if whole is not None:
                            self.found = FoundJSON(found.start() - start, whole[0], whole[1] - start)
                            self.examined += whole[1] - after
                            position = whole[1]
                            return position
                    position = after
                    if kind == "open":
                        self.depth = 1
                        if self._json and not final and buffer[found.start()] == "[":
                            self._items = ListItems(after - start)
                    continue
                if self._json:
                    # Text and whole strings are crossed in one C-speed match, up
                    # to the next bracket or a string still open.
                    end = self._cross.match(buffer, position).end()
                    if end == length:
                        self.examined += end - position
                        position = end
                        return None
                    token = buffer[end]
                    end += 1
                    self.examined += end - position
                    position = end
                else:
                    found = self._inside.search(buffer, position)
                    if found is None:
                        self.examined += length - position
                        position = length
                        return None
                    self.examined += found.end() - position
                    position = found.end()
                    token = found.group()
                if token in self._quotes:
                    self.quote = token
                elif token in self._opening:
                    self.depth += 1
                else:
                    self.depth -= 1
                    if self.depth == 0:
                        items = self._items
                        if items is not None and items.read(buffer, start, position - 1 - start, last=True):
                            self.found = FoundJSON(items.at - 1, items.values, position - start)
                        return position
                    if self.depth == 1 and self._items is not None \
                            and position - start - self._items.read_to >= READ_EVERY:
                        if not self._items.read(buffer, start, position - start):
                            self._items = None
        finally:
            # The next look starts where the scan stopped: a stop literal or a string
            # cut at the buffer's end is still being read there.
            self.position = self._quiet_to = position - start
