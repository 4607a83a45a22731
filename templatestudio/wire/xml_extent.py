"""Where a call whose values are XML-style text ends: ``ValueAwareExtent`` and ``parameter_extent``.

A value on these wires is unescaped text that may hold the wire's own
markers, so a call's closer ends the call only outside a value; inside one,
the value's boundary (``wire.xml_params.ValueEnds``, found by
``find_boundary``, the same rule the reader applies) says where the value
ends. So a stream and a whole reply agree on where the call ends.

Not handled: what ``wire.xml_params`` leaves out (a value holding the
template's boundary itself is read as the boundary); a boundary still
arriving is searched again from its start with each chunk.
"""

from __future__ import annotations

import functools
import re

import regex

from templatestudio.wire.arguments import XmlParameters
from templatestudio.wire.base import Extent
from templatestudio.wire.xml_params import TAG_CHARS, Boundary, ValueEnds, find_boundary, parameter_ends


class ValueAwareExtent(Extent):
    """Ends just past ``close``, found outside values: a value's own markers do not end the call.

    Outside a value it looks for value_open (a regex: the tag a value follows)
    or close, passing over whole what passed_over matches (a regex: GLM's
    ``<arg_key>…</arg_key>``, whose text is the key's own); inside one, for
    the value's boundary (``ValueEnds``), waiting while the text so far
    cannot tell. Each character is searched once but for the few a boundary
    still arriving makes it look at again.
    """

    def __init__(self, skip: int, value_open: str, close: str, ends: ValueEnds, passed_over: str | None = None) -> None:
        self._outside = _outside(value_open, close, passed_over)
        self._ends = ends
        self.close = close
        self.position = skip
        self.in_value = False
        self.examined = 0

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        position = start + self.position
        length = len(buffer)
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
                found = self._outside.search(buffer, position, length, partial=not final)
                if found is None:
                    self.examined += length - position
                    position = length
                    return None
                if found.partial:
                    self.examined += found.start() - position
                    position = found.start()
                    return None
                self.examined += found.end() - position
                position = found.end()
                if found.group("value") is not None:
                    self.in_value = True
                elif found.group("over") is None:
                    return position
        finally:
            self.position = position - start


@functools.lru_cache(maxsize=None)
def _outside(value_open: str, close: str, passed_over: str | None) -> regex.Pattern:
    over = f"(?P<over>{passed_over})|" if passed_over else "(?P<over>(?!))|"
    return regex.compile(f"(?P<value>{value_open})|{over}{re.escape(close)}", regex.S)


def parameter_extent(skip: int, shape: XmlParameters, element_close: str, call_close: str | None,
                     after_call: tuple[str, ...] = (), key_chars: str = TAG_CHARS) -> ValueAwareExtent:
    """The extent of an element of parameters: closed by call_close, or by element_close when bare."""
    tag = f"{re.escape(shape.open)}{key_chars}+{re.escape(shape.name_close)}"
    ends = parameter_ends(shape, element_close, call_close, after_call, key_chars)
    return ValueAwareExtent(skip, tag, call_close or element_close, ends)
