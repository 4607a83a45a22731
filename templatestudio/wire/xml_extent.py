"""Where a call whose values are XML-style text ends: ``ValueAwareExtent`` and ``parameter_extents``.

A value on these wires is unescaped text that may hold the wire's own
markers, so a call's closer ends the call only outside a value; inside one,
the value's boundary (``wire.xml_params.ValueEnds``, found by
``find_boundary``, the same rule the reader applies) says where the value
ends. So a stream and a whole reply agree on where the call ends.

Two steps spare that search where it cannot change the answer: until a
closer has arrived the call cannot end, so a stream's chunks are only
looked through for one (``str.find``); and the common call, whose values
hold no ``<``, is matched whole in one step (``plain_element``,
``plain_pairs``), since in such a value no boundary starts but its own
closer. Either step only decides sooner what the search decides.

Not handled: what ``wire.xml_params`` leaves out (a value holding the
template's boundary itself is read as the boundary); a boundary still
arriving is searched again from its start with each chunk.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import regex

from templatestudio.wire.arguments import XmlParameters
from templatestudio.wire.base import Extent
from templatestudio.wire.xml_params import Boundary, NamedElement, ValueEnds, find_boundary, parameter_ends
from templatestudio.wire.xml_plain import TAG_CHARS, plain_element


class ValueAwareExtent(Extent):
    """Ends just past ``close``, found outside values: a value's own markers do not end the call.

    Outside a value it looks for value_open (a regex: the tag a value follows)
    or close, passing over whole an element that passed_over names by its
    (opening, closing) literals: GLM's ``<arg_key>…</arg_key>``, whose text is
    the key's own. An opening whose closing never comes is text; once the
    whole reply shows no closing after it, none can follow a later opening
    either, so openings are no longer looked for (a flood of openings costs
    one search, not one each). Inside a value it looks for the value's
    boundary (``ValueEnds``), waiting while the text so far cannot tell. Each
    character is searched once but for the few a boundary still arriving
    makes it look at again.
    """

    def __init__(self, skip: int, value_open: str, close: str, ends: ValueEnds,
                 passed_over: tuple[str, str] | None = None, plain: re.Pattern | None = None) -> None:
        # plain: the common call whole, matched from the region's start in one step, ending
        # the region where the search would (``xml_plain.plain_element``);
        # tried once, when the first closer has come (a call it does not
        # match is then searched as always).
        self.plain = plain
        self._plain_tried = False
        self._value_open = value_open
        self._passed_over = passed_over
        self._outside = _outside(value_open, close, passed_over[0] if passed_over else None)
        self._at_markup = all(literal.startswith("<") for literal in (value_open, close, *(passed_over or ())))
        self._ends = ends
        self.close = close
        self.position = skip
        self.in_value = False
        self.examined = 0
        # How far past an element's opening its closing was already searched
        # for, so a closing still arriving costs each character one look.
        self._closing_searched = 0
        self._looked = skip  # region offset before which no closer starts (see _no_closer_yet)

    def _no_closer_yet(self, buffer: str, start: int, position: int) -> bool:
        """Whether no closer starts past the search's place (a stream's chunk mostly holds none).

        The call ends only at a closer, so until one arrives the search
        (a regex step per chunk) waits; it then runs over what came, with
        the whole call there to match ``plain`` in one step. The look is
        counted as examined: each character is looked at here once.
        """
        at = max(position, start + self._looked)
        found = buffer.find(self.close, at)
        if found != -1:
            # Looked at up to the closer; a search that stops short of it (a
            # boundary still arriving) finds it again next time.
            self.examined += found + len(self.close) - at
            self._looked = found - start
            return False
        safe = max(at, len(buffer) - len(self.close) + 1)
        self.examined += safe - at
        self._looked = safe - start
        return True

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        position = start + self.position
        length = len(buffer)
        if not final and self._no_closer_yet(buffer, start, position):
            return None
        if self.plain is not None and not self._plain_tried:
            self._plain_tried = True
            whole = self.plain.match(buffer, start)
            # A failed try is not counted: it stops by the first character the
            # search below examines again, so it at most doubles that work.
            if whole is not None and whole.group("closer") is not None:
                self.examined += whole.end() - position
                self.position = whole.end() - start
                return whole.end()
        try:
            while True:
                if self.in_value:
                    boundary = find_boundary(buffer, position, length, self._ends, final)
                    if not isinstance(boundary, Boundary):
                        if boundary == -1:
                            self.examined += length - position
                            position = length
                        else:
                            self.examined += boundary - position
                            position = boundary
                        return None
                    self.examined += boundary.resume - position
                    position, self.in_value = boundary.resume, False
                    continue
                look = position
                if self._at_markup:  # every alternative starts with "<": the search starts at the first one
                    look = buffer.find("<", position, length)
                    if look == -1:
                        self.examined += length - position
                        position = length
                        return None
                found = self._outside.search(buffer, look, length, partial=not final)
                if found is None:
                    self.examined += length - position
                    position = length
                    return None
                if found.partial:
                    self.examined += found.start() - position
                    position = found.start()
                    return None
                if found.group("over") is not None:
                    after = self._past_element(buffer, found.end(), final)
                    if after is None:  # its closing may still arrive: wait at the opening
                        self.examined += found.start() - position
                        position = found.start()
                        return None
                    self.examined += after - position
                    position = after
                    continue
                self.examined += found.end() - position
                position = found.end()
                if found.group("value") is not None:
                    self.in_value = True
                else:
                    return position
        finally:
            self.position = position - start

    def _past_element(self, buffer: str, inside: int, final: bool) -> int | None:
        """Where the passed-over element whose text starts at inside ends; None while its closing may arrive."""
        closing = self._passed_over[1]
        at = buffer.find(closing, inside + self._closing_searched)
        if at >= 0:
            self._closing_searched = 0
            return at + len(closing)
        if not final:
            # A closing may have begun in the buffer's last len(closing) - 1 characters.
            self._closing_searched = max(0, len(buffer) - inside - len(closing) + 1)
            return None
        # No closing anywhere after: this opening is text, and so is every later one.
        self._closing_searched = 0
        self._outside = _outside(self._value_open, self.close, None)
        return inside


@functools.lru_cache(maxsize=None)
def _outside(value_open: str, close: str, over_opening: str | None) -> regex.Pattern:
    over = f"(?P<over>{re.escape(over_opening)})|" if over_opening else "(?P<over>(?!))|"
    return regex.compile(f"(?P<value>{value_open})|{over}{re.escape(close)}", regex.S)


def parameter_extents(shape: XmlParameters, name: NamedElement, call: tuple[str, str] | None,
                      after_call: tuple[str, ...] = (), key_chars: str = TAG_CHARS) -> Callable[[], ValueAwareExtent]:
    """What makes a fresh extent for each call of a named element of parameters (an ``Opener``'s extent).

    call: the (opening, closing) literals of the wrapper around the element,
    or None for a bare element, which its own close ends. The patterns are
    built here, once per opener, not once per call.
    """
    call_open, call_close = call or ("", None)
    tag = f"{re.escape(shape.open)}{key_chars}+{re.escape(shape.name_close)}"
    ends = parameter_ends(shape, name.close, call_close, after_call, key_chars)
    plain = plain_element((name.open, name.name_close, name.close), shape, call_close, key_chars=key_chars,
                          call_open=call_open)
    skip = len(call_open or name.open)
    return functools.partial(ValueAwareExtent, skip, tag, call_close or name.close, ends, plain=plain)
