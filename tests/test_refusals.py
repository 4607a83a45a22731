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

from templatestudio.calls import ParsedToolCall
from templatestudio.formats import FORMATS
from templatestudio.guards import guard_of
from templatestudio.openings import Decision, Opening, tables

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
