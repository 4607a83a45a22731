"""What a tag extent derives from its closers and string delimiter: ``TagClosers``, made by ``tag_closers``.

``wire.extents.TagExtent`` ends a call region at a closing literal found
outside strings. The compiled searches it runs (a closer or a string
opening; the quick path's first bracket, quote or closer; JSON strings
crossed whole up to a closer) and the facts its fast paths test (one
closer, a shared first character, whether no closer can stand outside a
valid JSON value's strings) depend only on the closers and the delimiter,
so they are made once per set and cached: a stream makes an extent per
call.

Not handled here: the scanning itself (``wire.extents``), and the JSON
string scanning it shares with the value extent (``wire.json_scan``).
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple


# Characters JSON writes outside its strings: a closer holding none of them
# cannot stand inside a valid value except in a string.
_JSON_OUTSIDE_STRINGS = frozenset("{}[],: \t\n\r0123456789+-.eEtruefalsn")


class TagClosers(NamedTuple):
    """What a tag extent derives from its closers and string delimiter (made once per pair: a stream makes an extent per call)."""

    outside: re.Pattern  # one of the closers (longest first), or a string opening
    first: re.Pattern  # what the quick path looks for first: a bracket that opens a value, a quote or a closer
    longest: int  # the longest closer or delimiter
    quick: bool  # JSON strings, and no closer can be found outside the strings of a valid JSON value
    single: str | None  # the closer, when there is one (most formats: see TagExtent.advance)
    shared_first: str | None  # the first character of every closer, when they share it (see TagExtent._no_closer_yet)
    cross: re.Pattern | None  # JSON strings: text and whole strings up to a closer or an unclosed string (see TagExtent._scan)


@functools.lru_cache(maxsize=None)
def tag_closers(closes: tuple[str, ...], delimiter: str | None, json_strings: bool) -> TagClosers:
    parts = [re.escape(item) for item in sorted(closes, key=len, reverse=True)]
    parts += [re.escape(delimiter)] if delimiter else []
    return TagClosers(
        outside=re.compile("|".join(parts)),
        first=_first(closes),
        longest=max(*map(len, closes), len(delimiter or "")),
        quick=json_strings and all(set(item) - _JSON_OUTSIDE_STRINGS for item in closes),
        single=closes[0] if len(closes) == 1 else None,
        shared_first=closes[0][0] if len({item[0] for item in closes}) == 1 else None,
        cross=_cross(closes) if json_strings and not any(item.startswith('"') for item in closes) else None,
    )


def _first(closes: tuple[str, ...]) -> re.Pattern:
    """Finds the first bracket that opens a value, quote, or closer: one character class, then the closer's rest.

    A search for the plain alternation tries every branch at every character;
    led by one class, ``re`` skips ahead at C speed and looks behind once at a
    candidate (256K of spaces: 2.4 ms -> 0.9). The match starts where the
    alternation's would.
    """
    starts = sorted({'{', '[', '"', *(item[0] for item in closes)})
    rests = {}
    for item in sorted(closes, key=len, reverse=True):
        rests.setdefault(item[0], []).append(re.escape(item[1:]))
    branches = ["(?<=[{[\"])"] + [f"(?<={re.escape(char)})(?:{'|'.join(rest)})" for char, rest in rests.items()]
    return re.compile(f"[{''.join(map(re.escape, starts))}](?:{'|'.join(branches)})")


def _cross(closes: tuple[str, ...]) -> re.Pattern:
    """Matches, at a point outside strings, the text and whole JSON strings before a closer or an unclosed string.

    One C-speed match crosses a region's strings (a call's arguments are
    mostly strings), where a search per string cost a Python step each. A
    closer's first character that starts no closer is text; the quantifiers
    are possessive, so a string never open to a second reading.
    """
    firsts = re.escape("".join(sorted({item[0] for item in closes} - {'"'})))
    closers = "|".join(re.escape(item) for item in closes)
    return re.compile(f'(?:[^"\\\\{firsts}]++|"(?:[^"\\\\]++|\\\\[\\s\\S])*+"|\\\\|(?!{closers})[{firsts}])*+')


__all__ = ["TagClosers", "tag_closers"]
