"""Where a call may open, and whether one does: the literals a machine watches and the decision at each.

A machine reading for one format watches the openers of that format first,
then those of every format it guards against (``templatestudio.guards``), so
that a call written in another format is seen as a leak instead of passing
as text. ``tables``
builds, once per (format, guard), what the machine looks up: the literal
of every opener, a pattern that finds any of them, the starts of literals
(held at a chunk's end), and the run shape (``run_shapes``) that fits
these literals.

At a literal, ``Opening.decide`` tries the openers the literal may start,
in order (own format first), and says whether a call opens there, the
literal is prose, more text is needed, or the text ended inside an opening
that was far enough in to count as a cut call. Each opener's regex decides
most openings at once; one it cannot settle (text still arriving) goes to
the opener's automaton, which keeps its place, so held text is read once
however it is chunked. Before any of that, ``Tables.refuses`` settles a
literal that no opener can start there (one look with all of them, for a
literal without a commitment) as prose with no decision at all, so a flood
of one is read in the machine's text step (``tests/test_refusals.py``
checks it against ``Opening.decide``).

Not handled here: what happens once a call opens (its extent and reader,
run by ``templatestudio.engine``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import Enum

import regex

from templatestudio.canonical_runs import RunShape
from templatestudio.literal_search import commitment, literal_search
from templatestudio.resumable_match import MATCHED, MORE, Scan
from templatestudio.run_shapes import run_shape
from templatestudio.wire.base import Format, Opener

# Held text up to this length is decided by the regex first (see Opening.decide).
REGEX_FIRST_LOOK = 512
# Held text this short past an opener's literal goes to the automaton at once (see Opening.decide).
SHORT_HOLD = 4

Pair = tuple[Format, Opener]


class Decision(Enum):
    """What ``Opening.decide`` found at a literal."""

    OPENS = "a call opens at the literal (Opening.chosen)"
    WAITS = "more text is needed"
    PROSE = "the literal is prose"
    CUT = "the text ended inside an opening far enough in to be a call (Opening.chosen)"
    MALFORMED = "no opener matches, but the format's own call markup follows the literal (Opening.chosen)"


@dataclass(frozen=True)
class Tables:
    """What a machine for one format and guard looks up, built once by ``tables``."""

    anywhere: dict[str, list[Pair]]  # literal -> the openers it may start, own format first
    start: list[Pair]  # openers that only open a reply
    start_literals: frozenset[str]
    literals: regex.Pattern  # any literal of ``anywhere`` that may open a call there, longest first
    longest: int
    first_chars: re.Pattern  # a first character of any literal
    starts: frozenset[str]  # every non-empty start of a literal, whole literals included
    proper_starts: frozenset[str]  # the starts shorter than their literal
    runs: RunShape | None  # the own format's run shape, if the rules give one
    commits: dict[str, regex.Pattern]  # literal -> its commitment (``literal_search.commitment``), where it has one
    # literal -> (index, one pattern for the openers it may start from pairs[index] on), where it
    # starts several (``any_opener``); index 1 when the first is the own format's (see ``tables``)
    first_looks: dict[str, tuple[int, regex.Pattern]]
    # literal -> one pattern for every opener it may start, where it has no commitment (see refuses)
    refusals: dict[str, regex.Pattern]

    def refuses(self, literal: str, buffer: str, at: int, final: bool) -> bool:
        """Whether the literal at buffer[at] is prose for certain: no opener matches there, nor may with more text.

        What an ``Opening`` would decide after trying each opener's first look,
        settled by one look and no ``Opening`` (a flood of ``to=`` or
        ``[TOOL_CALLS]`` that nothing follows cost a decision per copy, three
        times this). Never True for a literal with a commitment (its refusal
        may be a malformed call) or where an opener may still match.
        """
        pattern = self.refusals.get(literal)
        if pattern is None:
            return False
        window = len(buffer) if final else min(len(buffer), at + REGEX_FIRST_LOOK)
        return pattern.match(buffer, at, window, partial=True) is None

    def starts_at_reply(self, head: str, final: bool) -> list[Pair] | None:
        """The start-only openers whose literal head starts with; None while head may still grow into one."""
        if not final and any(len(head) < len(item) and item.startswith(head) for item in self.start_literals):
            return None
        return [(fmt, opener) for fmt, opener in self.start if head.startswith(opener.literal)]

    def pending_literal(self, buffer: str, at: int) -> int | None:
        """The first index from max(at, ...) at which the buffer's end is a proper start of a literal, if any."""
        return self._first_tail(buffer, max(at, len(buffer) - self.longest + 1), self.proper_starts)

    def partial_literal(self, buffer: str, at: int) -> int:
        """Length of the longest end of buffer (from at) that starts some literal."""
        index = self._first_tail(buffer, max(at, len(buffer) - self.longest + 1), self.starts)
        return 0 if index is None else len(buffer) - index

    def _first_tail(self, buffer: str, start: int, tails: frozenset[str]) -> int | None:
        # Looked up in a set only where a literal's first character stands.
        found = self.first_chars.search(buffer, start)
        while found is not None:
            if buffer[found.start() :] in tails:
                return found.start()
            found = self.first_chars.search(buffer, found.start() + 1)
        return None


# How far past a literal its commitment looks for the format's own markup.
COMMIT_LOOK = REGEX_FIRST_LOOK


def watched(own: Format | None, guard: tuple[Format, ...]) -> list[Pair]:
    """Every (format, opener) a machine for own watches: own's first, then the guard's in its order."""
    formats = list(guard) if own is None else [own, *(fmt for fmt in guard if fmt is not own)]
    return [(fmt, opener) for fmt in formats for opener in fmt.openers]


@functools.lru_cache(maxsize=None)
def tables(own: Format | None, guard: tuple[Format, ...]) -> Tables:
    """The tables of a machine for own (None: a survey, every call foreign) that guards against guard."""
    pairs = watched(own, guard)
    anywhere: dict[str, list[Pair]] = {}
    for pair in pairs:
        if not pair[1].start_only:
            anywhere.setdefault(pair[1].literal, []).append(pair)
    literals = sorted(anywhere, key=len, reverse=True)
    firsts = re.escape("".join(sorted({item[0] for item in literals})))
    start = [pair for pair in pairs if pair[1].start_only]
    # Own's verdict on its own literal decides at the reply's start too: where another format's
    # start-only opener shares a literal with own's openers (qwen-xml's bare <function= and
    # functionary's), own's are tried first, so a reply cut in own's opening is not that format's cut call.
    shared = dict.fromkeys(opener.literal for fmt, opener in start if fmt is not own)
    start = [pair for literal in shared for pair in anywhere.get(literal, ()) if pair[0] is own] + start
    owners = {literal: openers[0][0] for literal, openers in anywhere.items()}
    never = re.compile("(?!)")  # a guard may leave no literal to look for
    commits = {literal: found for literal, pairs in anywhere.items() if (found := commitment(literal, pairs)) is not None}
    return Tables(
        anywhere=anywhere,
        start=start,
        start_literals=frozenset(opener.literal for _, opener in start),
        literals=literal_search(anywhere, literals, set(commits)) if literals else never,
        longest=max(map(len, literals), default=0),
        # For the end of a chunk: which tails could still grow into a literal
        # (looked up in a set, at the few places a literal's first character stands).
        first_chars=re.compile(f"[{firsts}]") if literals else never,
        starts=frozenset(item[:size] for item in literals for size in range(1, len(item) + 1)),
        proper_starts=frozenset(item[:size] for item in literals for size in range(1, len(item))),
        runs=None if own is None else run_shape(own, owners),
        commits=commits,
        first_looks=_first_looks(own, anywhere),
        refusals={literal: any_opener(tuple(opener for _, opener in pairs))
                  for literal, pairs in anywhere.items() if literal not in commits},
    )


def _first_looks(own: Format | None, anywhere: dict[str, list[Pair]]) -> dict[str, tuple[int, regex.Pattern]]:
    """The ``Tables.first_looks`` of a machine for own.

    The own format's opener is tried alone first: what follows its literal
    is mostly its own call, which that opener's look settles, and a look
    for all of them first would cost each call a second look. The shared
    pattern then covers the guard's openers after it.
    """
    looks = {}
    for literal, pairs in anywhere.items():
        index = 1 if own is not None and pairs[0][0] is own else 0
        if len(pairs) - index > 1:
            looks[literal] = (index, any_opener(tuple(opener for _, opener in pairs[index:])))
    return looks


@functools.lru_cache(maxsize=None)
def any_opener(openers: tuple[Opener, ...]) -> regex.Pattern:
    """One pattern that matches (or, partly, may still match) where any of openers' patterns does.

    Where several formats share a literal (``to=``, ``<tool_call>``), a
    literal that opens none of them is settled by this one look instead of
    one per opener; where it matches, each opener is tried in order as
    always. So a flood of a shared literal costs one look per occurrence.
    """
    return regex.compile("|".join(f"(?:{opener.opening.regex})" for opener in openers))


class Candidate:
    """One opener being tried at a literal: its format and its automaton's scan."""

    __slots__ = ("format", "opener", "scan", "anchor", "fed", "verdict")

    def __init__(self, fmt: Format, opener: Opener, anchor: int) -> None:
        self.format = fmt
        self.opener = opener
        self.scan: Scan | None = None  # made only when the regex alone cannot decide
        self.anchor = anchor  # buffer index of the literal's first character
        self.fed = anchor  # buffer index up to which the scan has read
        self.verdict = MORE

    def read(self, buffer: str) -> int:
        """Feed the automaton the buffer past what it read (its verdict is then set); the characters it examined."""
        scan = self.scan
        before = scan.examined
        self.verdict, _ = scan.feed(buffer, self.fed)
        self.fed = len(buffer)
        return scan.examined - before

    @property
    def cut_short(self) -> bool:
        """Whether the text ended while this opening was still possible, far enough in to count."""
        return self.verdict == MORE and self.fed - self.anchor >= self.opener.cut_length

    def committed(self, buffer: str) -> bool:
        """Whether this still-possible opening of buffer came as far as its opener's ``cut_from``: a cut call."""
        cut = self.opener.cut_compiled
        return self.verdict == MORE and cut is not None and cut.match(buffer, self.anchor, self.fed) is not None


class Opening:
    """The decision at one literal: the openers it may start, tried in order.

    The first opener that matches wins (own format first: ``watched`` put
    it first), so openers are tried in order and the choice is made as
    soon as no earlier one is still undecided; at the end of the text an
    undecided one no longer blocks a later match, unless it came as far as
    its opener's ``cut_from`` (a cut call); a cut counted by ``cut_after``
    of another format does not stand where own's opening was still possible
    (own's verdict on its own literal decides). ``trying`` is the
    candidate whose automaton waits for more text, ``undecided`` those
    still possible when the text ended. ``from_start``: the literal
    stands at the start of the reply (a start-only opener's place).
    """

    __slots__ = ("pairs", "anchor", "from_start", "commit", "first_look", "own", "next", "trying", "undecided",
                 "chosen")

    def __init__(self, pairs: list[Pair], anchor: int, from_start: bool, commit: regex.Pattern | None = None,
                 first_look: tuple[int, regex.Pattern] | None = None, own: Format | None = None) -> None:
        self.pairs = pairs
        self.own = own  # the machine's format (None: a survey)
        self.commit = commit
        self.first_look = first_look  # (index, pairs[index:]'s openers in one pattern: ``any_opener``), or None
        self.anchor = anchor
        self.from_start = from_start
        self.next = 0
        self.trying: Candidate | None = None
        self.undecided: list[Candidate] = []
        self.chosen: Pair | None = None

    def decide(self, buffer: str, final: bool) -> tuple[Decision, int]:
        """(decision, characters examined) for the literal at buffer[anchor], with final when the text ended."""
        anchor, pairs, work = self.anchor, self.pairs, 0
        shared_from, shared = self.first_look if self.first_look is not None else (-1, None)
        while self.next < len(pairs):
            if self.next == shared_from and self.trying is None:
                # The same window the next opener's own look would read (see below).
                window = len(buffer) if final else min(len(buffer), anchor + REGEX_FIRST_LOOK)
                found = shared.match(buffer, anchor, window, partial=True)
                work += (found.end() if found is not None else anchor + 1) - anchor
                if found is None:  # no opener from here on matches, nor may yet: each one's own look would say so
                    self.next = len(pairs)
                    break
            fmt, opener = pairs[self.next]
            candidate = self.trying
            if candidate is None and not final and len(buffer) - anchor <= len(opener.literal) + SHORT_HOLD:
                # A stream's chunk has just brought the literal: with so little after
                # it the regex could only say "still possible", and the automaton
                # would read it all again. It starts at once.
                candidate = self.trying = Candidate(fmt, opener, anchor)
                candidate.scan = opener.automaton.scan()
            if candidate is None:
                # First look: the regex settles most openings at once, reading at
                # most REGEX_FIRST_LOOK characters (the end of that window counts
                # as the end of the text, so a failure there is final); an opening
                # still possible at the window's end goes to the automaton, which
                # then reads the held text once, however long it grows.
                window = len(buffer) if final else min(len(buffer), anchor + REGEX_FIRST_LOOK)
                found = opener.compiled.match(buffer, anchor, window, partial=True)
                work += (found.end() if found is not None else anchor + 1) - anchor
                if found is None:
                    self.next += 1
                    continue
                if not found.partial:
                    self.chosen = (fmt, opener)
                    return Decision.OPENS, work
                candidate = Candidate(fmt, opener, anchor)
                if final:  # the text ended while the opening was still possible: the regex said all
                    candidate.fed = len(buffer)
                    if self._undecided(candidate, buffer):
                        return Decision.CUT, work
                    self.next += 1
                    continue
                self.trying = candidate
                candidate.scan = opener.automaton.scan()
            work += candidate.read(buffer)  # (a settled scan, fed again, reads nothing)
            if candidate.verdict == MATCHED:
                self.chosen = (fmt, opener)
                return Decision.OPENS, work
            if candidate.verdict == MORE:
                if not final:
                    return Decision.WAITS, work
                if self._undecided(candidate, buffer):
                    return Decision.CUT, work
            self.trying = None
            self.next += 1
        cut = next((candidate for candidate in self.undecided if candidate.cut_short), None)
        if cut is not None and cut.format is not self.own:
            mine = next((item for item in self.undecided if item.format is self.own), None)
            if mine is not None:
                # The own format's opening, still possible here, decides: after text it calls
                # a cut here prose (Muse's to=); at the reply's start, where another format's
                # start-only opener calls the literal a cut call (qwen-xml's bare <function=), the
                # cut is own's (functionary's <function=NAME> cut short).
                cut = mine if self.from_start else None
        if cut is not None:
            self.chosen = (cut.format, cut.opener)
            return Decision.CUT, work
        if self.commit is None:
            return Decision.PROSE, work
        return self._committed(buffer, final, work)

    def _undecided(self, candidate: Candidate, buffer: str) -> bool:
        """Keep a candidate still possible when the text ended; True when it is a cut call at once (``committed``:
        whatever a later opener would match) and is chosen."""
        if candidate.committed(buffer):
            self.chosen = (candidate.format, candidate.opener)
            return True
        self.undecided.append(candidate)
        return False

    def _committed(self, buffer: str, final: bool, work: int) -> tuple[Decision, int]:
        """No opener matched: MALFORMED where the format's markup follows the literal, else PROSE.

        The look ends COMMIT_LOOK characters past the literal whatever the
        chunking (the end of that window counts as the end of the text), so
        a stream decides as the whole text does.
        """
        anchor = self.anchor
        limit = anchor + COMMIT_LOOK
        found = self.commit.match(buffer, anchor, min(len(buffer), limit), partial=True)
        work += (found.end() if found is not None else anchor + 1) - anchor
        if found is None:
            return Decision.PROSE, work
        if not found.partial:
            inner = found.group()
            self.chosen = next(((fmt, opener) for fmt, opener in self.pairs if fmt.wire is not None
                                and any(inner.endswith(item) for item in fmt.wire.inner_literals)), self.pairs[0])
            return Decision.MALFORMED, work
        if final or len(buffer) >= limit:
            return Decision.PROSE, work
        return Decision.WAITS, work


__all__ = ["COMMIT_LOOK", "Candidate", "Decision", "Opening", "REGEX_FIRST_LOOK", "SHORT_HOLD", "Tables", "any_opener",
           "tables", "watched"]
