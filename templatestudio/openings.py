"""Whether a call opens at a literal the machine found: the decision at each.

At a literal (found with the tables of ``templatestudio.watch_tables``),
``Opening.decide`` tries the openers the literal may start, in order (own
format first), and says whether a call opens there, the literal is prose,
more text is needed, or the text ended inside an opening that was far
enough in to count as a cut call. Each opener's regex decides most openings
at once; one it cannot settle (text still arriving) goes to the opener's
automaton, which keeps its place, so held text is read once however it is
chunked. A literal that no opener can start there is mostly settled before
any of that, by ``watch_tables.Tables.refuses``.

Not handled here: what happens once a call opens (its extent and reader,
run by ``templatestudio.engine``).
"""

from __future__ import annotations

from enum import Enum

import regex

from templatestudio.literal_search import REGEX_FIRST_LOOK, Pair, markup_after
from templatestudio.resumable_match import MATCHED, MORE, Scan
from templatestudio.wire.base import Format, Opener
from templatestudio.wire.final_matches import HeldRun

# Held text this short past an opener's literal goes to the automaton at once (see Opening.decide).
SHORT_HOLD = 4


class Decision(Enum):
    """What ``Opening.decide`` found at a literal."""

    OPENS = "a call opens at the literal (Opening.chosen)"
    WAITS = "more text is needed"
    PROSE = "the literal is prose"
    CUT = "the text ended inside an opening far enough in to be a call (Opening.chosen)"
    MALFORMED = "no opener matches, but the format's own call markup follows the literal (Opening.chosen)"


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

    def cut_short(self, line_start: bool) -> bool:
        """Whether the text ended while this opening was still possible, far enough in to count
        (``Opener.cut_at_line`` where it stands at a line start)."""
        return self.verdict == MORE and self.fed - self.anchor >= self.opener.cut_length_at(line_start)

    def committed(self, buffer: str) -> bool:
        """Whether this still-possible opening of buffer came as far as its opener's ``cut_from``: a cut call."""
        cut = self.opener.cut_compiled
        if self.verdict != MORE or cut is None:
            return False
        held, end = self.opener.cut_held, self.fed
        if held is not None and end == len(buffer):  # the end of the text: its run's window will do (HeldRun)
            end, _ = held.end(buffer, self.anchor)
        return cut.match(buffer, self.anchor, end) is not None


class Opening:
    """The decision at one literal: the openers it may start, tried in order.

    The first opener that matches wins (own format first: ``watch_tables.watched`` put
    it first), so openers are tried in order and the choice is made as
    soon as no earlier one is still undecided; at the end of the text an
    undecided one no longer blocks a later match, unless it came as far as
    its opener's ``cut_from`` (a cut call); a cut counted by ``cut_after``
    of another format does not stand where own's opening was still possible
    (own's verdict on its own literal decides). ``trying`` is the
    candidate whose automaton waits for more text, ``undecided`` those
    still possible when the text ended. ``from_start``: the literal
    stands at the start of the reply (a start-only opener's place);
    ``line_start``: right after a line break (``Opener.cut_at_line``).
    """

    __slots__ = ("pairs", "anchor", "from_start", "line_start", "commit", "first_look", "own", "next", "trying",
                 "undecided", "chosen", "settled", "final_windows", "ended")

    def __init__(self, pairs: list[Pair], anchor: int, from_start: bool, commit: regex.Pattern | None = None,
                 first_look: tuple[int, regex.Pattern] | None = None, own: Format | None = None,
                 after: Opening | None = None, line_start: bool = False) -> None:
        self.pairs = pairs
        self.line_start = line_start
        # after: the reply start's Opening at this same literal, which found it prose. It tried
        # every opener of its pairs on the same text: each one failed, or is among its undecided
        # (none cut short, or it had not said prose). Those openers are not tried again here
        # (a held opening at the reply's start was otherwise read twice at its end), and the
        # undecided ones count as undecided here too. Opener id -> its undecided candidate or None.
        self.settled: dict[int, Candidate | None] | None = None
        if after is not None:
            self.settled = dict.fromkeys((id(opener) for _, opener in after.pairs), None)
            self.settled.update((id(candidate.opener), candidate) for candidate in after.undecided)
        self.own = own  # the machine's format (None: a survey)
        self.commit = commit
        self.first_look = first_look  # (index, pairs[index:]'s openers in one pattern: ``watch_tables.any_opener``), or None
        self.anchor = anchor
        self.from_start = from_start
        self.next = 0
        self.trying: Candidate | None = None
        self.undecided: list[Candidate] = []
        self.chosen: Pair | None = None
        self.ended = False  # MALFORMED by the turn's end or framing right after the literal (watch_tables)
        # HeldRun -> the window its run gives at the end of the text (found once, shared by the openers that share it).
        self.final_windows: dict[HeldRun, int] | None = None

    def decide(self, buffer: str, final: bool) -> tuple[Decision, int]:
        """(decision, characters examined) for the literal at buffer[anchor], with final when the text ended."""
        anchor, pairs, work = self.anchor, self.pairs, 0
        shared_from, shared = self.first_look if self.first_look is not None else (-1, None)
        settled = self.settled
        while self.next < len(pairs):
            if settled is not None and self.trying is None and id(pairs[self.next][1]) in settled:
                carried = settled[id(pairs[self.next][1])]
                if carried is not None:
                    self.undecided.append(carried)
                self.next += 1
                continue
            if self.next == shared_from and self.trying is None:
                # The same window the next opener's own look would read (see below).
                if final:
                    window, looked = self._final_window(buffer, [opener for _, opener in pairs[shared_from:]])
                    work += looked
                else:
                    window = min(len(buffer), anchor + REGEX_FIRST_LOOK)
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
                if final:
                    window, looked = self._final_window(buffer, [opener])
                    work += looked
                else:
                    window = min(len(buffer), anchor + REGEX_FIRST_LOOK)
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
        cut = next((candidate for candidate in self.undecided if candidate.cut_short(self.line_start)), None)
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

    def _final_window(self, buffer: str, openers: list[Opener]) -> tuple[int, int]:
        """(the window a match of these openers reads at the end of the text, characters examined to find it).

        The whole text, or one character into the openers' shared leading run
        when that run reaches the end (``wire.final_matches.HeldRun``: the same verdict
        for one regex pass less per opener over a long held opening).
        """
        held = openers[0].held
        if held is None or any(opener.held != held for opener in openers[1:]):
            return len(buffer), 0
        # The openers sharing a literal mostly share its run too (three at <tool_calls>): the
        # window is found once, and only the first look counts its characters.
        windows = self.final_windows
        if windows is None:
            windows = self.final_windows = {}
        elif held in windows:
            return windows[held], 0
        window, looked = held.end(buffer, self.anchor)
        windows[held] = window
        return window, looked

    def _undecided(self, candidate: Candidate, buffer: str) -> bool:
        """Keep a candidate still possible when the text ended; True when it is a cut call at once (``committed``:
        whatever a later opener would match) and is chosen."""
        if candidate.committed(buffer):
            self.chosen = (candidate.format, candidate.opener)
            return True
        self.undecided.append(candidate)
        return False

    def _committed(self, buffer: str, final: bool, work: int) -> tuple[Decision, int]:
        """No opener matched: MALFORMED where the format's markup follows the literal, else PROSE
        (``watch_tables.markup_after`` looks, over a window that does not depend on the chunking)."""
        anchor = self.anchor
        found, settled = markup_after(self.commit, buffer, anchor, final)
        work += (found.end() if found is not None else anchor + 1) - anchor
        if found is None:
            return Decision.PROSE, work
        if not found.partial:
            inner = found.group()
            # The format whose stop token or framing (``watch_tables``), else whose inner markup, ends the
            # look: a turn end first, as an inner literal (qwen-xml's ``>``) may end one (``<|eot_id|>``).
            declared = [pair for pair in self.pairs if pair[0].wire is not None]
            self.chosen = next((pair for pair in declared if inner.endswith(pair[0].wire.turn_ends)), None) or next(
                (pair for pair in declared if inner.endswith(pair[0].wire.inner_literals)), self.pairs[0])
            wire = self.chosen[0].wire
            rest = inner[len(self.pairs[0][1].literal) :].lstrip(" \t\r\n")
            self.ended = wire is not None and rest in wire.turn_ends
            return Decision.MALFORMED, work
        return (Decision.PROSE if settled else Decision.WAITS), work


__all__ = ["Candidate", "Decision", "Opening", "SHORT_HOLD"]
