"""What a reading machine watches: the literals that may open a call, and how they are looked up.

``tables`` builds, once per (format, guard), what ``engine.Machine`` looks
up: the literal of every opener (``watched``: the own format's openers
first, then those of every format it guards against,
``templatestudio.guards``), one pattern that finds any of them
(``literal_search``), the starts of literals (held at a chunk's end), the
commitments and first looks of shared literals, and the run shape
(``run_shapes``) that fits these literals. ``Tables.refuses`` settles a
literal that no opener can start there (one look with all of them, and
one with its commitment) as prose with no decision at all, so a flood
of one is read in the machine's text step (``tests/test_refusals.py``
checks it against ``openings.Opening.decide``).

Not handled here: the decision at a literal (``templatestudio.openings``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import regex

from templatestudio.canonical_runs import RunShape
from templatestudio.literal_search import REGEX_FIRST_LOOK, Pair, commitment, inner_start, literal_search, markup_after
from templatestudio.openings import Decision, Opening
from templatestudio.resumable_match import MATCHED
from templatestudio.run_shapes import run_shape
from templatestudio.wire.base import Format, Opener



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
    # literal -> its commitment where it stands at a line start, for a literal that is a cut call alone
    # only there (functionary's <function=): the turn's end right after it (``_line_ends``)
    line_commits: dict[str, regex.Pattern]
    # the commitment of a start-only opening at the reply's start: each start literal that is a cut
    # call alone there, then (whitespace between) its formats' turn end (qwen-xml's bare <function=)
    start_commit: regex.Pattern | None
    # literal -> (index, one pattern for the openers it may start from pairs[index] on), where it
    # starts several (``any_opener``); index 1 when the first is the own format's (see ``tables``)
    first_looks: dict[str, tuple[int, regex.Pattern]]
    # literal -> (one pattern for every opener it may start, its commitment or None): see refuses
    refusals: dict[str, tuple[regex.Pattern, regex.Pattern | None]]
    extended: frozenset[str]  # the literals a longer literal starts with (see refused_run)
    # literal -> its first (format, opener), where that opener's pattern is matched by the literal
    # alone: an Opening there opens it at once, whatever follows (a framing token's drop, <|eom|>)
    tokens: dict[str, Pair]
    # literal -> the first offset inside it at which a literal may start, its length when none
    # (``literal_search.inner_start``): a literal found prose is settled as text only that far.
    inner_starts: dict[str, int]
    # the literals whose copies, back to back, may hold another literal across them (see refused_run)
    uncrossable: frozenset[str]

    def refuses(self, literal: str, buffer: str, at: int, final: bool, line_start: bool = False) -> bool:
        """Whether the literal at buffer[at] is prose for certain: what an ``Opening`` would decide, without one.

        No opener matches there, nor may with more text (each opener's first
        look, in one pattern, over the same window), and where the literal
        has a commitment, no markup of its format follows it either (the
        commitment's look, over the same window ``Opening`` gives it, and
        decided as it decides). Settled by one or two looks and no
        ``Opening``: a flood of ``to=``, ``[TOOL_CALLS]`` or ``<function=``
        that nothing follows cost a decision per copy, three times this.
        """
        found = self.refusals.get(literal)
        if found is None:
            return False
        openers, commit = found
        if line_start:
            commit = self.line_commits.get(literal, commit)
        length = len(buffer)
        if openers.match(buffer, at, length if final else min(length, at + REGEX_FIRST_LOOK), partial=True) is not None:
            return False
        if commit is None:
            return True
        markup, settled = markup_after(commit, buffer, at, final)
        return markup is None or markup.partial and settled

    def refused_run(self, literal: str, buffer: str, at: int, final: bool, line_start: bool = False) -> int:
        """The end of the copies of literal standing back to back from buffer[at] that ``refuses`` calls prose.

        at itself when the first copy is not prose for certain. The last copy
        counts only as far as a literal may start inside it (``inner_starts``),
        and where copies back to back may hold another literal
        (``uncrossable``) only the first copy is taken. The copies
        after the first are taken where they stand, without the search for
        the next literal, which would find each one there: no longer literal
        starts with this one (else the search might find that one), and in a
        stream a copy is taken only as far from the buffer's end as the
        longest literal (nearer, the machine waits to see what grows there).
        """
        if not self.refuses(literal, buffer, at, final, line_start):
            return at
        size = len(literal)
        # Settled only as far as a literal may start inside the last copy crossed (Tables.inner_starts):
        # the search looks there next (``[TOOL_CALLS]`` then ``]<]minimax[>[``).
        short = size - self.inner_starts[literal]
        end = at + size
        if literal in self.extended or literal in self.uncrossable:
            return end - short
        last = len(buffer) - (size if final else max(size, self.longest))
        again = literal[-1] == "\n"  # a copy after a copy stands at a line start only after a line break
        while end <= last and buffer.startswith(literal, end) and self.refuses(literal, buffer, end, final, again):
            end += size
        return end - short

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
    commits = {literal: found for literal, pairs in anywhere.items() if (found := _committing(literal, pairs)) is not None}
    start_ends = _start_ends(start)
    line_ends = {literal: ends for literal, pairs in anywhere.items()
                 if (ends := _line_ends(literal, pairs, own, start_ends.get(literal, ()))) is not None}
    # Start literals too: a malformed call a survey records at the reply's start is text that far.
    inner_starts = {literal: inner_start(literal, literals)
                    for literal in dict.fromkeys([*literals, *(opener.literal for _, opener in start)])}
    longest = max(map(len, literals), default=0)
    return Tables(
        anywhere=anywhere,
        start=start,
        start_literals=frozenset(opener.literal for _, opener in start),
        # A literal with a commitment at a line start is found whatever follows it, as one with a commitment.
        literals=literal_search(anywhere, literals, {*commits, *line_ends}, inner_starts) if literals else never,
        longest=longest,
        # For the end of a chunk: which tails could still grow into a literal
        # (looked up in a set, at the few places a literal's first character stands).
        first_chars=re.compile(f"[{firsts}]") if literals else never,
        starts=frozenset(item[:size] for item in literals for size in range(1, len(item) + 1)),
        proper_starts=frozenset(item[:size] for item in literals for size in range(1, len(item))),
        runs=None if own is None else run_shape(own, owners),
        commits=commits,
        line_commits={literal: _with_commitment(_ending(literal, ends), commits.get(literal))
                      for literal, ends in line_ends.items()},
        start_commit=_start_committing(start_ends),
        first_looks=_first_looks(own, anywhere),
        refusals={literal: (any_opener(tuple(opener for _, opener in pairs)), commits.get(literal))
                  for literal, pairs in anywhere.items()},
        extended=frozenset(item for item in literals if any(other != item and other.startswith(item) for other in literals)),
        tokens={literal: pairs[0] for literal, pairs in anywhere.items() if _opened_by(pairs[0][1], literal)},
        inner_starts=inner_starts,
        uncrossable=frozenset(literal for literal in literals if _holds_another(literal, literals, longest)),
    )


def _committing(literal: str, pairs: list[Pair]) -> regex.Pattern | None:
    """``literal_search.commitment``, or the literal's formats' stop token or framing right after it.

    A literal that alone at the reply's end is a cut call, followed at once
    (whitespace between) by the turn's end or a message boundary of a
    format it opens (``<|plamo:tag|>`` after PLaMo 3's section token: a
    server that did not stop on it), opened a call that holds nothing:
    malformed, never prose. Prose naming the literal has words before the
    boundary; a literal that is itself framing commits to none. A literal
    that is a cut call alone only at a line start gets that rule there
    only (``Tables.line_commits``).
    """
    found = commitment(literal, pairs)
    ends = _turn_ends(literal, pairs) if _cut_alone(literal, pairs) else ()
    return _with_commitment(_ending(literal, ends), found) if ends else found


def _start_ends(start: list[Pair]) -> dict[str, tuple[str, ...]]:
    """Start literal -> the turn ends of the formats whose opener alone makes it a cut call at the reply's
    start (qwen-xml's bare <function=: <|im_end|>), for the literals that have any."""
    found = {}
    for literal in dict.fromkeys(opener.literal for _, opener in start):
        ends = _turn_ends(literal, [pair for pair in start if pair[1].literal == literal and _cut_by(pair, from_start=True)])
        if ends:
            found[literal] = ends
    return found


def _start_committing(start_ends: dict[str, tuple[str, ...]]) -> regex.Pattern | None:
    """``Tables.start_commit``: each start literal that has turn ends, then one of them."""
    return regex.compile("|".join(_ending(literal, ends) for literal, ends in start_ends.items())) if start_ends else None


def _line_ends(literal: str, pairs: list[Pair], own: Format | None, at_start: tuple[str, ...]) -> tuple[str, ...] | None:
    """The turn ends that commit literal at a line start only: where it is a cut call alone there, not mid-line
    (as a machine for own decides: own's opening still possible there decides, ``Opening``).

    They are those of the formats whose opener alone makes it a cut there
    (functionary's <function=: <|eot_id|>, <|eom_id|>) and at_start, those
    of its start-only openers (``_start_ends``): a line start after a
    reasoning block is a reply start to a machine that reads the block, and
    a line start to one that does not (the survey), and the two agree.
    """
    if _cut_alone(literal, pairs) or Opening(pairs, 0, False, own=own, line_start=True).decide(literal, True)[0] \
            is not Decision.CUT:
        return None
    cutting = _turn_ends(literal, [pair for pair in pairs if _cut_by(pair, line_start=True)])
    ends = tuple(sorted(set(cutting) | set(at_start), key=lambda token: (-len(token), token)))
    return ends or None


def _cut_by(pair: Pair, *, from_start: bool = False, line_start: bool = False) -> bool:
    """Whether pair's opener alone makes its literal, where the text ends, a cut call there."""
    return Opening([pair], 0, from_start, line_start=line_start).decide(pair[1].literal, True)[0] is Decision.CUT


def _turn_ends(literal: str, pairs: list[Pair]) -> tuple[str, ...]:
    """The stop tokens and framing of the formats literal opens, longest first (none when literal is one)."""
    ends = {token for fmt, _ in pairs if fmt.wire is not None for token in fmt.wire.turn_ends}
    return () if literal in ends else tuple(sorted(ends, key=lambda token: (-len(token), token)))


def _ending(literal: str, ends: tuple[str, ...]) -> str:
    """A pattern for literal, then (whitespace between) one of ends."""
    return f"{regex.escape(literal)}[ \\t\\r\\n]*+(?:{'|'.join(map(regex.escape, ends))})"


def _with_commitment(way: str, found: regex.Pattern | None) -> regex.Pattern:
    return regex.compile("|".join([way, *([found.pattern] if found is not None else [])]))


def _cut_alone(literal: str, pairs: list[Pair]) -> bool:
    """Whether the literal alone, where the text ends, is a cut call (``openings.Opening``'s decision)."""
    return Opening(pairs, 0, False).decide(literal, True)[0] is Decision.CUT


def _holds_another(literal: str, literals: list[str], longest: int) -> bool:
    """Whether copies of literal back to back hold another literal (none longer than longest) starting inside one copy."""
    copies = literal * (2 + longest // len(literal))
    return any(copies.startswith(other, offset) for offset in range(1, len(literal)) for other in literals)


def _opened_by(opener: Opener, literal: str) -> bool:
    """Whether the literal alone is a whole match of the opener (its regex's, and its automaton's verdict)."""
    found = opener.compiled.match(literal, partial=True)
    return found is not None and not found.partial and opener.automaton.scan().feed(literal)[0] == MATCHED


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


__all__ = ["Tables", "any_opener", "tables", "watched"]
