"""How an opener's patterns are matched at the end of a text, where one match reads all of a held opening.

A stream holds an opening it cannot yet decide (``<function=`` and then
spaces) and decides it at the reply's end: each opener sharing the literal
matched over the whole held text, and the cut check (``Opener.cut_from``)
once more. ``whole_pattern`` compiles a pattern matched whole (never
partially) with ``re``, which crosses such text faster; ``HeldRun`` finds a
shorter window with the same verdict when the text after the literal is one
possessive run to the end. Used by ``wire.base.Opener`` and
``openings.Opening``.

Not handled: a run of ``\\s``, ``\\w`` or ``\\d`` (no shortcut: see ``HeldRun``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import regex

from templatestudio.resumable_match import Pattern, leading_run


def whole_pattern(pattern: str) -> re.Pattern | regex.Pattern:
    """A pattern matched whole, never partially: the standard ``re`` where it compiles, else ``regex``.

    The cut check (``Opener.cut_from``) runs once, at a reply's end, over all
    the held opening: ``re`` crosses it about twice as fast (functionary's
    ``<function=`` and 256K spaces: 1.8 ms -> 0.9).
    """
    try:
        return re.compile(pattern)
    except re.error:
        return regex.compile(pattern)


# A run's class that ``re`` reads as ``regex`` does: characters and these escapes only
# (no \\s, \\w or \\d, whose Unicode sets the two modules may draw differently).
_PLAIN_CLASS = re.compile(r"\[\^?(?:[^\\\]]|\\[tnrfv\\\]\-^\[\"'<>{}])+\]")


@dataclass(frozen=True)
class HeldRun:
    """A pattern's leading literal and the possessive run of one class after it (``resumable_match.leading_run``).

    At the end of a text, a match from the literal whose run reads to the end
    has the same verdict on one character of the run as on all of it: the run
    is possessive, so the rest of the pattern meets the end of the text
    either way. ``end`` finds that shorter window with one ``re`` pass, where
    the verdict would otherwise cost a ``regex`` pass per opener (a held
    opening of 256K spaces: 1.5 ms each). None when the class is not a plain
    bracket class (``re`` and ``regex`` might read it differently).
    """

    literal: str
    run: re.Pattern

    @staticmethod
    def of(pattern: Pattern) -> HeldRun | None:
        found = leading_run(pattern)
        if found is None or _PLAIN_CLASS.fullmatch(found[1]) is None:
            return None
        return HeldRun(found[0], re.compile(f"{found[1]}*+"))

    def end(self, buffer: str, anchor: int) -> tuple[int, int]:
        """(where a match from buffer[anchor] may stop at the end of the text, characters examined to know it)."""
        start, length = anchor + len(self.literal), len(buffer)
        if length - start < 2 or not buffer.startswith(self.literal, anchor):
            return length, 0
        reach = self.run.match(buffer, start).end()
        return (start + 1 if reach == length else length), reach - start


__all__ = ["HeldRun", "whole_pattern"]
