"""A literal the machine settles as prose without an ``Opening`` (``Tables.refuses``) is one an Opening calls prose.

``Tables.refuses`` is a shortcut: one look with every opener of a literal
(and one with its commitment, where it has one), no decision object; the
copies of a flood after it are taken where they stand (``refused_run``),
and a literal that alone matches its first opener opens a region at once
(``Tables.tokens``). None may say "prose" (or "opens") where the decision would say
anything else, so for every literal of every machine's tables (each
format's own, and the survey's), followed by every other format's written
calls, samples and near misses, a refusal is checked against what a fresh
``Opening`` decides on the same text, whole and at every window a stream
may see.
"""

from __future__ import annotations

import pytest

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.formats import FORMATS
from templatestudio.guards import guard_of
from templatestudio.engine import read_events
from templatestudio.events import CutToolCall, ToolCallEvent
from templatestudio import engine
from templatestudio.openings import Decision, Opening
from templatestudio.watch_tables import Tables, tables

FOLLOWERS = sorted({
    text
    for fmt in FORMATS.values()
    for text in (fmt.write_call(ParsedToolCall("get_weather", {"city": "Paris"})),
                 *(sample.text for sample in fmt.samples), *(miss.text for miss in fmt.near_misses))
} | {"", " ", "to=", "functions.f", "x" * 600, "{", "[", "\n"})


def _machines():
    yield "survey", None
    for name in sorted(FORMATS):
        yield name, FORMATS[name]


@pytest.mark.parametrize("label,own", list(_machines()), ids=[label for label, _ in _machines()])
def test_a_refused_literal_is_what_an_opening_decides_prose(label, own):
    found = tables(own, guard_of(None, own))
    checked = 0
    for literal in found.refusals:
        pairs = found.anywhere[literal]
        for follower in FOLLOWERS:
            buffer = "said " + literal + follower
            at = len("said ")
            for end in sorted({at + len(literal), at + len(literal) + 3, len(buffer)}):
                final = end == len(buffer)
                text = buffer[:end]
                if not found.refuses(literal, text, at, final):
                    continue
                checked += 1
                opening = Opening(pairs, at, False, found.commits.get(literal), found.first_looks.get(literal), own)
                decision, _ = opening.decide(text, True)
                assert decision is Decision.PROSE, (label, literal, text[:80], decision)
    assert checked, f"no literal of {label}'s tables was refused: the check above checked nothing"


def _counting(monkeypatch) -> tuple[list[str], list[int]]:
    """(literals asked Tables.refuses, anchors of the Openings the machine made), as the machine runs."""
    asked: list[str] = []
    openings: list[int] = []
    original = Tables.refuses

    def counted(self, literal, buffer, at, final, line_start=False):
        asked.append(literal)
        return original(self, literal, buffer, at, final, line_start)

    class CountedOpening(Opening):
        __slots__ = ()

        def __init__(self, pairs, anchor, *args, **kwargs):
            openings.append(anchor)
            super().__init__(pairs, anchor, *args, **kwargs)

    monkeypatch.setattr(Tables, "refuses", counted)
    monkeypatch.setattr(engine, "Opening", CountedOpening)
    return asked, openings


@pytest.mark.parametrize("name", sorted(name for name, fmt in FORMATS.items()
                                        if fmt.openers and tables(fmt, guard_of(None, fmt)).refusals))
def test_the_machine_asks_refuses_only_after_an_opening_decided_prose_there(name, monkeypatch):
    """A literal is looked at once: a call's literal goes straight to an Opening, a flood's copies to refuses.

    Refuses' look and the Opening's first look read the same text, so asking
    both at every call paid the look twice (llama3-json's stream, 1.8 us a
    call). In a flood of a literal that an opener's start follows but no
    opener matches, every copy after the first (which an Opening decided
    prose) is settled by refuses, with no Opening.
    """
    fmt = FORMATS[name]
    found = tables(fmt, guard_of(None, fmt))
    call = fmt.write_call(ParsedToolCall("get_weather", {"city": "Paris"}))
    asked, openings = _counting(monkeypatch)
    events = read_events(call * 3, fmt)
    assert any(isinstance(event, ToolCallEvent) for event in events)
    assert not [literal for literal in asked if call.startswith(literal)], (name, asked)
    floods = 0
    for literal in found.refusals:
        # Followed by each follower that refuses settles; the flood is 50 copies of the pair.
        for follower in FOLLOWERS:
            probe = "said " + literal + follower + " ok"
            if not found.refuses(literal, probe, len("said "), True) or len(follower) > 40:
                continue
            unit = literal + follower + " ok "
            flood = "said " + unit * 50
            asked.clear()
            openings.clear()
            try:
                events = read_events(flood, fmt)
            except UnparsedToolCall:
                continue  # another format's markup stands in it, refused loudly: not a flood of prose
            if any(isinstance(event, (ToolCallEvent, CutToolCall)) for event in events):
                continue  # the follower is a call of the format's own: not a flood of prose
            assert "".join(event.text for event in events) == flood  # all prose, nothing lost
            at_literal = [anchor for anchor in openings if flood.startswith(literal, anchor)]
            assert len(at_literal) <= 2, (name, literal, follower, len(at_literal))
            floods += 1
            break
    assert floods, f"no flood of {name}'s refusable literals was read"


def _copy_by_copy(found: Tables, literal: str, buffer: str, at: int, final: bool) -> int:
    """refused_run's oracle: the machine's own steps, one copy at a time.

    The first copy is asked refuses; each next copy is prose when the
    machine's search passes over it as text (no opener may follow it there)
    or finds it and refuses says so; the run ends at anything else, and
    where a stream would wait (nearer its end than the longest literal).
    """
    if not found.refuses(literal, buffer, at, final):
        return at
    end = at + len(literal)
    while buffer.startswith(literal, end) and (final or len(buffer) - end >= found.longest):
        match = found.literals.search(buffer, end)
        passed_over = match is None or match.start() >= end + len(literal)
        if not passed_over and (match.span() != (end, end + len(literal)) or not found.refuses(literal, buffer, end, final)):
            break
        end += len(literal)
    return end


@pytest.mark.parametrize("label,own", list(_machines()), ids=[label for label, _ in _machines()])
def test_a_refused_run_ends_where_refusing_copy_by_copy_would(label, own):
    """Every literal in the survey's tables (which hold every format's), each format's own in its machine's."""
    found = tables(own, guard_of(None, own))
    checked = 0
    mine = found.refusals if own is None else {opener.literal for opener in own.openers} & set(found.refusals)
    for literal in mine:
        for follower in FOLLOWERS:
            for copies in (1, 2, 5):
                buffer = "said " + literal * copies + follower
                for end in sorted({len(buffer) - 3, len(buffer) - 1, len(buffer)}):
                    if end < len("said ") + len(literal):
                        continue
                    text, final = buffer[:end], end == len(buffer)
                    expected = _copy_by_copy(found, literal, text, len("said "), final)
                    if literal in found.extended or literal in found.uncrossable:  # one copy at a time
                        expected = min(expected, len("said ") + len(literal))
                    if expected > len("said "):
                        # The last copy counts only as far as a literal may start inside it.
                        expected -= len(literal) - found.inner_starts[literal]
                    assert found.refused_run(literal, text, len("said "), final) == expected, (label, literal, text[:80])
                    checked += expected > len("said ")
    assert checked or own is not None, "no copy of any literal was refused: the check above checked nothing"


@pytest.mark.parametrize("label,own", list(_machines()), ids=[label for label, _ in _machines()])
def test_a_token_literal_is_opened_as_an_opening_would_open_it(label, own):
    """``Tables.tokens``: the machine opens the region at such a literal without an Opening; one would open it too."""
    found = tables(own, guard_of(None, own))
    for literal, pair in found.tokens.items():
        for follower in FOLLOWERS:
            buffer = "said " + literal + follower
            for end in sorted({len("said ") + len(literal), len(buffer)}):
                for final in (False, True):
                    opening = Opening(found.anywhere[literal], len("said "), False, found.commits.get(literal),
                                      found.first_looks.get(literal), own)
                    decision, _ = opening.decide(buffer[:end], final)
                    assert (decision, opening.chosen) == (Decision.OPENS, pair), (label, literal, buffer[:end][:80])
