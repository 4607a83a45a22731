"""Cutting literals out of renders: where a literal may start and end, and what two texts share.

``derive_arguments`` and ``derive_text`` compare renders that differ in one
thing; the text they share is a literal only when it is cut at a markup
boundary (``_at_boundary``): two renders may share characters across a
boundary by chance (``…calls_begin|>`` and ``…call_end|>`` end alike in
``|>``), and a literal never starts inside a word. ``refuse`` is the
refusal every stage of a derivation raises.

Not handled here: what a literal means (a call's opening, a separator, a
section); the stages that use these helpers decide that.
"""

from __future__ import annotations

import re

from templatestudio.calls import NoToolCallFormat
from templatestudio.wire.base import JSON_SPACE

__all__ = ["SPACE", "common_prefix", "common_suffix", "literal_pieces", "refuse", "split_space"]

SPACE = JSON_SPACE  # the whitespace a template writes as layout
_OPENING, _CLOSING = "<[{(", ">]})"
# A literal's pieces: whitespace, a tag (closed or still open: "<function="), a bracketed token, a word.
_PIECES = re.compile(r"\s+|<[^<>\n]*>?|\[[^\[\]\s]*\]?|[^\s<\[]+")


def refuse(why: str) -> NoToolCallFormat:
    return NoToolCallFormat(why)


def _at_boundary(text: str, at: int) -> bool:
    """Whether a literal may start or end at text[at]: a text end, or markup or whitespace on one side."""
    return at <= 0 or at >= len(text) or text[at - 1] in _CLOSING + SPACE or text[at] in _OPENING + SPACE


def common_suffix(left: str, right: str) -> int:
    size = 0
    while size < min(len(left), len(right)) and left[-1 - size] == right[-1 - size]:
        size += 1
    while size and not (_at_boundary(left, len(left) - size) and _at_boundary(right, len(right) - size)):
        size -= 1
    return size


def common_prefix(left: str, right: str) -> int:
    size = 0
    while size < min(len(left), len(right)) and left[size] == right[size]:
        size += 1
    while size and not (_at_boundary(left, size) and _at_boundary(right, size)):
        size -= 1
    return size


def split_space(text: str) -> tuple[str, str, str]:
    """(leading whitespace, the rest stripped, trailing whitespace)."""
    stripped = text.strip(SPACE)
    if not stripped:
        return text, "", ""
    start = text.index(stripped)
    return text[:start], stripped, text[start + len(stripped) :]


def literal_pieces(text: str) -> list[str]:
    """The literal pieces of text (``_PIECES``), its whitespace left out."""
    return [piece for piece in _PIECES.findall(text) if piece.strip(SPACE)]
