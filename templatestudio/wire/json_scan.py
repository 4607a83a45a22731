"""Scanning JSON inside a longer text: where a string or a value ends, without decoding the text twice.

The extents (``wire.extents``) find where a call region ends by crossing
JSON at C speed; these are the pieces they share:

- ``json_string_end``: past the closing quote of a string, escaped quotes
  crossed by one regex search (look-behinds on the backslash runs);
- ``json_value_at``: the whole JSON value at an index, decoded in growing
  windows so a refused value late in a long reply does not cost the whole
  reply;
- ``escape_resume_point``: where to search again in a string still open at
  the end of a chunk (a lone backslash waits for its partner);
- ``may_close``: whether a bracket's value can be whole in the text so far.

Not handled: comments inside JSON, strings in single quotes (the Python
strings of ``ValueExtent`` are scanned there).
"""

from __future__ import annotations

import json
import re

# The body of a Python string literal in ' or " quotes, escapes included (one line: Python's
# short strings end at a newline), up to its closing quote.
PYTHON_STRING_BODY = {
    "'": re.compile(r"(?:[^'\\\n]++|\\.)*+", re.S),
    '"': re.compile(r'(?:[^"\\\n]++|\\.)*+', re.S),
}

_DECODER = json.JSONDecoder()
SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, in any amount


# A quote that no run of one, three or five backslashes escapes (each run
# bounded by a non-backslash before it): it closes the string unless six or
# more backslashes stand before it, which ``json_string_end`` counts.
_BACKSLASH = re.escape("\\")
_CLOSING_QUOTE = re.compile('"' + "".join("(?<![^" + _BACKSLASH + "]" + _BACKSLASH * run + '")' for run in (1, 3, 5)))
_COUNTED_RUN = 6


def json_string_end(buffer: str, position: int) -> int:
    """Past the closing quote of the JSON string whose body starts at position, or -1 while open.

    position must be an escape boundary (the body's start, or a point
    ``escape_resume_point`` gave). ``str.find`` answers a string whose first
    quote has no backslash before it; otherwise one regex search crosses the
    escaped quotes in C, its look-behinds telling a quote escaped by a run of
    one, three or five backslashes from a closing one. A run reaching back
    before position was settled in pairs from its start, so its parity is the
    same counted from either. Not handled at C speed: runs of six or more
    backslashes before a quote (JSON inside JSON inside JSON), counted here
    one by one, each run once.
    """
    quote = buffer.find('"', position)
    if quote == -1 or quote == position or buffer[quote - 1] != "\\":
        return -1 if quote == -1 else quote + 1
    while True:
        found = _CLOSING_QUOTE.search(buffer, quote)
        if found is None:
            return -1
        quote = found.start()
        if quote >= _COUNTED_RUN and buffer[quote - _COUNTED_RUN] != "\\":
            return quote + 1
        back = quote - 1  # a long run (or one that starts the buffer): counted, down to position
        while back >= position and buffer[back] == "\\":
            back -= 1
        if (quote - 1 - back) % 2 == 0:
            return quote + 1
        quote += 1


_FIRST_WINDOW = 4096
_GROWTH = 16
_NEAR_THE_END = 64


def json_value_at(buffer: str, index: int, first_window: int = _FIRST_WINDOW) -> tuple[object, int] | None:
    """The JSON value at buffer[index] and the offset past it, or None when no whole value starts there.

    The decoder is given windows of the buffer that grow sixteenfold, not
    the whole buffer: a failed decode builds a ``JSONDecodeError``, whose
    line count runs from the start of the text it was given, so decoding a
    region late in a long reply would cost the whole reply each time and a
    reply of many refused regions would take quadratic time. A window that
    fails well before its end (and not inside a string it cut) settles the
    question; otherwise the next, larger window is tried. A value that
    closes inside a window ends where it would in the whole buffer: JSON
    values end at a bracket. A caller that knows where the value likely
    ends (a closer after it) gives first_window so, and spares the smaller
    windows' failed decodes. The extents keep the value they decoded
    (``Extent.found``) so that the reader does not decode it again.
    """
    if not _may_start_value(buffer, index):
        return None
    rest = len(buffer) - index
    size = max(first_window, _FIRST_WINDOW)
    if 2 * size > rest:
        size = rest
    narrow = not buffer.isascii() and _dense_in_escapes(buffer, index)
    while True:
        whole = size >= rest
        if narrow:
            text, at = _narrow_window(buffer, index, index + size), 0
        elif whole and index <= size:
            text, at = buffer, index  # a failure's line count costs no more than the window
        else:
            text, at = buffer[index : index + size], 0
        try:
            value, end = _DECODER.raw_decode(text, at)
        except RecursionError:
            return None
        except json.JSONDecodeError as error:
            # Settled: the value failed well before the end of the text it was given.
            near_end = len(text) - _NEAR_THE_END
            settled = error.pos < near_end and not error.msg.startswith("Unterminated string")
            if whole or settled:
                return None
            size *= _GROWTH
            if 2 * size > rest:
                size = rest  # the whole rest rather than a window nearly as large
            continue
        except ValueError:  # e.g. an integer past the interpreter's digit limit
            return None
        return value, (end if text is buffer else index + end)


# A value with more than one backslash per this many characters (in its first window) is decoded
# from a narrowed slice: the break-even measured here for a 1 MB string in a wide text is between
# one escape per 64 and per 128 characters (in place 0.88 ms, sliced 0.86 at 64; 0.79 / 0.81 at 256).
_CHARACTERS_PER_ESCAPE = 100


def _dense_in_escapes(buffer: str, index: int) -> bool:
    """Whether the value at index holds escapes densely enough that a narrowed slice decodes faster."""
    window = min(_FIRST_WINDOW, len(buffer) - index)
    return buffer.count("\\", index, index + window) * _CHARACTERS_PER_ESCAPE > window


def _narrow_window(buffer: str, index: int, stop: int) -> str:
    """buffer[index:stop] cut just past its last closing bracket, for a buffer that is not ASCII.

    A slice of a str holds only as wide a character kind as its own
    characters need, and the C decoder cuts a wide string's JSON string
    into a new string at every escape, narrowing each piece (a 1 MB code
    argument in DeepSeek's reply, whose markers are past U+00FF, one escape
    every six characters: 2.7 ms in place, 2.0 sliced). Where escapes are
    rare the copy costs more than it saves (``_dense_in_escapes``). The value at index is an
    object or a list, so it ends at a closing bracket: cutting after the
    window's last one loses no value that ends in the window, and leaves the
    closer that follows it (the wide marker) out of the slice. A value that
    runs past the cut fails at the slice's end, which ``json_value_at``
    does not count as settled.
    """
    cut = max(buffer.rfind("}", index, stop), buffer.rfind("]", index, stop)) + 1
    return buffer[index:cut]


# What may follow an opening bracket (after JSON whitespace) in a valid value.
_AFTER_BRACE = frozenset('"}')
_AFTER_BRACKET = frozenset('{["-0123456789tfn]')


def _may_start_value(buffer: str, index: int) -> bool:
    """Whether the bracket at buffer[index] may open a valid JSON value, from the first token inside it.

    The decoder would refuse the rest at that token, but its refusal builds a
    ``JSONDecodeError`` (which counts the lines before it): a flood of
    brackets no value follows (Mistral's ``[TOOL_CALLS]`` repeated) is
    settled by this look instead, four times cheaper. A bracket at the
    buffer's end may still open one.
    """
    inside = SPACE.match(buffer, index + 1).end()
    if inside == len(buffer):
        return True
    return buffer[inside] in (_AFTER_BRACE if buffer[index] == "{" else _AFTER_BRACKET)


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
