"""Patterns that can be matched a piece of text at a time, never going back.

A stream sees the opening of a call one chunk at a time. Running a regex
again over everything held since the opening began costs the held length on
every chunk, which turns quadratic when an opening is followed by a long
run of whitespace or name characters. A pattern built here from a few
pieces (literal text, a character class, runs, choices, sequences) gives
both its regex, for searching whole texts, and an automaton whose
``Scan`` takes text in pieces and keeps its place, so every character is
examined once whatever the chunking.

The automaton is simulated as a set of states, and each (state set,
character) step is remembered, so a step usually costs one dict look-up.

Not handled: captures, anchors, look-around and back-references. The
regex form writes runs as possessive (``*+``), which is what keeps it
linear; that agrees with the automaton only when what follows a run cannot
start with one of the run's own characters, and every pattern built here
must keep to that.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import regex

# The step cache is shared by every scan of a pattern; adversarial text
# drawn from all of Unicode must not grow it without end.
_MAX_CACHED_STEPS = 50_000


class Pattern:
    """A piece of a pattern: its regex and how it adds itself to an automaton."""

    regex: str

    def _build(self, automaton: Automaton, out: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError


class _Literal(Pattern):
    def __init__(self, text: str) -> None:
        self.text = text
        self.regex = regex.escape(text)

    def _build(self, automaton: Automaton, out: int) -> int:
        for char in reversed(self.text):
            out = automaton._add_test(char.__eq__, out)
        return out


class _Chars(Pattern):
    def __init__(self, char_class: str) -> None:
        self.regex = char_class
        self._test = regex.compile(char_class).fullmatch

    def _build(self, automaton: Automaton, out: int) -> int:
        return automaton._add_test(lambda char: self._test(char) is not None, out)


class _Run(Pattern):
    def __init__(self, piece: Pattern, at_least: int) -> None:
        self.piece = piece
        self.at_least = at_least
        body = piece.regex if isinstance(piece, _Chars) else f"(?:{piece.regex})"
        self.regex = body + ("++" if at_least else "*+")

    def _build(self, automaton: Automaton, out: int) -> int:
        loop = automaton._add_split(())
        body = self.piece._build(automaton, loop)
        automaton._nodes[loop] = ("split", (body, out))
        return body if self.at_least else loop


class _Choice(Pattern):
    def __init__(self, pieces: tuple[Pattern, ...], regex_text: str) -> None:
        self.pieces = pieces
        self.regex = regex_text

    def _build(self, automaton: Automaton, out: int) -> int:
        return automaton._add_split(tuple(piece._build(automaton, out) for piece in self.pieces))


class _Sequence(Pattern):
    def __init__(self, pieces: tuple[Pattern, ...]) -> None:
        self.pieces = pieces
        self.regex = "".join(
            f"(?:{piece.regex})" if isinstance(piece, _Choice) else piece.regex for piece in pieces
        )

    def _build(self, automaton: Automaton, out: int) -> int:
        for piece in reversed(self.pieces):
            out = piece._build(automaton, out)
        return out


def literal(text: str) -> Pattern:
    """Exactly text."""
    return _Literal(text)


def chars(char_class: str) -> Pattern:
    """One character matching char_class, a regex class such as ``\\s`` or ``[\\w.]``."""
    return _Chars(char_class)


def run(piece: Pattern, *, at_least: int = 0) -> Pattern:
    """piece repeated; at_least is 0 or 1."""
    if at_least not in (0, 1):
        raise ValueError(f"run(at_least={at_least}): only 0 or 1 is supported")
    return _Run(piece, at_least)


def either(*pieces: Pattern) -> Pattern:
    """Any one of pieces."""
    return _Choice(pieces, "|".join(piece.regex for piece in pieces))


def optional(piece: Pattern) -> Pattern:
    """piece or nothing."""
    return _Choice((piece, sequence()), f"(?:{piece.regex})?")


def sequence(*pieces: Pattern) -> Pattern:
    """pieces one after another."""
    return _Sequence(pieces)


def leading_run(pattern: Pattern) -> tuple[str, str] | None:
    """(literal, character class) when pattern opens with a literal and then a run of one class.

    The run is possessive (``run``): once it has read to the end of a text,
    what follows it meets the end of the text however many characters it
    read (``wire.final_matches.HeldRun.end`` rests on this), whether the run
    may be empty or not. None for any other start.
    """
    pieces = [pattern]
    while pieces and isinstance(pieces[0], _Sequence):  # a sequence's first piece may be a sequence
        pieces = [*pieces[0].pieces, *pieces[1:]]
    if len(pieces) < 2 or not isinstance(pieces[0], _Literal):
        return None
    following = pieces[1]
    while isinstance(following, _Sequence) and following.pieces:
        following = following.pieces[0]
    if isinstance(following, _Run) and isinstance(following.piece, _Chars):
        return pieces[0].text, following.piece.regex
    return None


MORE, MATCHED, FAILED = "more", "matched", "failed"


class Automaton:
    """A pattern compiled for scanning text piece by piece.

    States of the underlying automaton are nodes: ("test", accepts(char),
    next) or ("split", nexts); node 0 is the end of a match. A scan's state
    is a set of nodes, numbered the first time it is reached.
    """

    def __init__(self, pattern: Pattern) -> None:
        self.pattern = pattern
        self._nodes: list[tuple] = [("end",)]
        start = pattern._build(self, 0)
        self._sets: list[frozenset[int]] = []
        self._status: list[str] = []  # per numbered state: MORE, MATCHED or FAILED
        self._numbers: dict[frozenset[int], int] = {}
        # Per numbered state, the state each character read so far leads to
        # (one dict per state: a scan looks up a character, not a pair).
        self._rows: list[dict[str, int]] = []
        self._cached = 0  # transitions kept in _rows, at most _MAX_CACHED_STEPS
        self._after: dict[str, int] = {}
        self._lock = threading.Lock()
        self.start = self._number(self._closure((start,)))

    def scan(self, after: str = "") -> Scan:
        """A fresh scan, positioned where a match would begin, or past the text after.

        after is text already known to be there (a marker's literal), read
        once per automaton rather than once per scan.
        """
        state = self._after.get(after)
        if state is None:
            state = self.start
            for char in after:
                state = self.step(state, char)
            self._after[after] = state
        return Scan(self, state)

    def _add_test(self, accepts: Callable[[str], bool], out: int) -> int:
        self._nodes.append(("test", accepts, out))
        return len(self._nodes) - 1

    def _add_split(self, outs: tuple[int, ...]) -> int:
        self._nodes.append(("split", outs))
        return len(self._nodes) - 1

    def _closure(self, nodes) -> frozenset[int]:
        seen: set[int] = set()
        todo = list(nodes)
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            if self._nodes[node][0] == "split":
                todo.extend(self._nodes[node][1])
        return frozenset(node for node in seen if self._nodes[node][0] != "split")

    def _number(self, nodes: frozenset[int]) -> int:
        number = self._numbers.get(nodes)
        if number is None:
            number = self._numbers[nodes] = len(self._sets)
            self._sets.append(nodes)
            self._status.append(MATCHED if 0 in nodes else FAILED if not nodes else MORE)
            self._rows.append({})
        return number

    def step(self, state: int, char: str) -> int:
        following = self._rows[state].get(char)
        if following is None:
            # Automata are shared by every stream, which may run in threads:
            # numbering a new state set must not interleave.
            with self._lock:
                reached = [
                    self._nodes[node][2]
                    for node in self._sets[state]
                    if self._nodes[node][0] == "test" and self._nodes[node][1](char)
                ]
                following = self._number(self._closure(reached))
                if self._cached < _MAX_CACHED_STEPS:
                    self._rows[state][char] = following
                    self._cached += 1
        return following


class Scan:
    """How far a match of an automaton's pattern has got in the text fed so far.

    ``feed(text, start)`` reads text[start:] and returns (verdict, index):
    (MATCHED, index just past the shortest match), (FAILED, index of the
    character that ruled every match out) or (MORE, len(text)) while the
    text fed is still the beginning of a possible match. After MATCHED or
    FAILED the scan is settled and further feeds return the same verdict.
    ``examined`` counts the characters read.
    """

    def __init__(self, automaton: Automaton, state: int) -> None:
        self._automaton = automaton
        self._state = state
        self.verdict = automaton._status[self._state]
        self.examined = 0

    def feed(self, text: str, start: int = 0) -> tuple[str, int]:
        if self.verdict != MORE:
            return self.verdict, start
        automaton = self._automaton
        rows, status = automaton._rows, automaton._status
        state = self._state
        for index, char in enumerate(text[start:], start):
            following = rows[state].get(char)
            state = automaton.step(state, char) if following is None else following
            verdict = status[state]
            if verdict is not MORE:  # the three verdicts are these very strings
                self._state, self.verdict = state, verdict
                self.examined += index + 1 - start
                return verdict, index + (verdict == MATCHED)
        self._state = state
        self.examined += len(text) - start
        return MORE, len(text)
