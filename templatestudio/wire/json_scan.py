"""Scanning JSON inside a longer text: where a string or a value ends, without decoding the text twice.

The extents (``wire.extents``) find where a call region ends by crossing
JSON at C speed; these are the pieces they share:

- ``json_string_end``: past the closing quote of a string, counting only
  the backslashes right before each quote;
- ``json_value_at`` / ``json_container_at``: the whole JSON value at an
  index, decoded in growing windows so a refused value late in a long reply
  does not cost the whole reply;
- ``escape_resume_point``: where to search again in a string still open at
  the end of a chunk (a lone backslash waits for its partner);
- ``may_close``: whether a bracket's value can be whole in the text so far.

Not handled: comments inside JSON, strings in single quotes (the Python
strings of ``ValueExtent`` are scanned there).
"""

from __future__ import annotations

import json
import re

_DECODER = json.JSONDecoder()
SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, in any amount


def json_string_end(buffer: str, position: int) -> int:
    """Past the closing quote of the JSON string whose body starts at position, or -1 while open.

    ``str.find`` jumps from quote to quote at C speed; only the backslashes
    right before a quote are counted, to tell an escaped quote from the end.
    """
    while True:
        quote = buffer.find('"', position)
        if quote == -1:
            return -1
        back = quote - 1
        while back >= position and buffer[back] == "\\":
            back -= 1
        if (quote - 1 - back) % 2 == 0:
            return quote + 1
        position = quote + 1


_FIRST_WINDOW = 4096
_GROWTH = 16
_NEAR_THE_END = 64


def json_value_at(buffer: str, index: int) -> tuple[object, int] | None:
    """The JSON value at buffer[index] and the offset past it, or None when no whole value starts there.

    The decoder is given windows of the buffer that grow sixteenfold, not
    the whole buffer: a failed decode builds a ``JSONDecodeError``, whose
    line count runs from the start of the text it was given, so decoding a
    region late in a long reply would cost the whole reply each time and a
    reply of many refused regions would take quadratic time. A window that
    fails well before its end (and not inside a string it cut) settles the
    question; otherwise the next, larger window is tried. A value that
    closes inside a window ends where it would in the whole buffer: JSON
    values end at a bracket. The extents keep the value they decoded
    (``Extent.found``) so that the reader does not decode it again.
    """
    rest = len(buffer) - index
    size = _FIRST_WINDOW
    while True:
        whole = size >= rest
        if whole and index <= size:
            text, at = buffer, index  # a failure's line count costs no more than the window
        else:
            text, at = buffer[index : index + size], 0
        try:
            value, end = _DECODER.raw_decode(text, at)
        except RecursionError:
            return None
        except json.JSONDecodeError as error:
            settled = error.pos - at < size - _NEAR_THE_END and not error.msg.startswith("Unterminated string")
            if whole or settled:
                return None
            size *= _GROWTH
            if 2 * size > rest:
                size = rest  # the whole rest rather than a window nearly as large
            continue
        except ValueError:  # e.g. an integer past the interpreter's digit limit
            return None
        return value, (end if text is buffer else index + end)


def json_container_at(buffer: str, index: int) -> tuple[int, object, int] | None:
    """(start, value, end) of a whole JSON object or list at index (whitespace first), or None."""
    index = SPACE.match(buffer, index).end()
    if index >= len(buffer) or buffer[index] not in "{[":
        return None
    found = json_value_at(buffer, index)
    if found is None:
        return None
    return index, found[0], found[1]


def escape_resume_point(buffer: str, position: int) -> int:
    """Where to search again in an open string that was searched from position (an escape boundary).

    Backslashes at the end pair up from the start of their run; a whole
    pair is settled, so the search resumes after the pairs and only an odd
    last backslash waits for its partner. Walking back stops at position,
    so each call costs only the text added since the last one.
    """
    end = len(buffer)
    while end > position and buffer[end - 1] == "\\":
        end -= 1
    return len(buffer) - (len(buffer) - end) % 2


_SHORT_REST = 256


def may_close(buffer: str, at: int) -> bool:
    """Whether the value opening at buffer[at] ('{' or '[') may be whole in the buffer so far.

    A short rest without its kind of closing bracket cannot hold the whole
    value: decoding it would only build an error, so a stream that has
    delivered just the start of a call does not ask the decoder. (A longer
    rest is not searched: the search could run past the region's end.)
    """
    return len(buffer) - at > _SHORT_REST or buffer.find("}" if buffer[at] == "{" else "]", at) != -1
