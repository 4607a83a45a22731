"""A literal the machine settles as prose without an ``Opening`` (``Tables.refuses``) is one an Opening calls prose.

``Tables.refuses`` is a shortcut: one look with every opener of a literal,
no decision object. It must never say "prose" where the decision would say
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

    def counted(self, literal, buffer, at, final):
        asked.append(literal)
        return original(self, literal, buffer, at, final)

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
