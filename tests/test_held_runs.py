"""A held opening's leading run is matched on one character of it at the end of a text (``wire.base.HeldRun``).

The shortcut claims that a regex whose literal is followed by a possessive
run gives the same verdict on one character of that run as on all of it,
when the run reaches the end of the text. The oracle is the same regex over
the whole window (no shortcut): checked for every opener that declares such
a run, on texts whose run reaches the end and on texts where it stops
earlier; and reading held openings whole and streamed with the shortcut
switched off gives the same events or the same error.
"""

from __future__ import annotations

import random

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio.engine import read_events
from templatestudio.formats import FORMATS
from templatestudio.resumable_match import chars, either, leading_run, literal, run, sequence
from templatestudio.wire.final_matches import HeldRun
from test_reading_properties import outcome, random_pieces, stream_events

# Characters a held opening may hold: whitespace, name characters, markup, and Unicode
# whitespace and letters that a plain class and \s or \w could draw differently.
ALPHABET = list(" \t\n\r\x0b\x0c") + list("abcXYZ_09.-:/\"'<>{}[]=,|") + ["é", "\u00a0", "\u2028", "\u3000", "ｘ"]
HELD = [(name, opener) for name, fmt in FORMATS.items() for opener in fmt.openers
        if opener.held is not None or opener.cut_held is not None]
IDS = [f"{name}:{opener.literal}" for name, opener in HELD]


def _class_chars(held: HeldRun) -> list[str]:
    return [char for char in ALPHABET if regex.fullmatch(held.run.pattern[:-2], char)]


def _verdict(found) -> str:
    return "none" if found is None else "partial" if found.partial else "match"


def test_many_openers_declare_a_held_run():
    # The shortcut serves the common shape (a literal, then whitespace or a name): if no
    # opener declared one, the tests below would check nothing.
    assert len(HELD) >= 30
    assert all(_class_chars(opener.held or opener.cut_held) for _, opener in HELD)


@pytest.mark.parametrize(("name", "opener"), HELD, ids=IDS)
def test_a_run_to_the_end_is_matched_on_one_character(name, opener):
    for held in (opener.held, opener.cut_held):
        if held is None:
            continue
        char = _class_chars(held)[0]
        buffer = "prose " + held.literal + char * 500
        end, examined = held.end(buffer, 6)
        assert (end, examined) == (6 + len(held.literal) + 1, 500)
        # A run that stops before the end, or too short to shorten: the whole text.
        stopped = buffer + next(c for c in ALPHABET if c not in _class_chars(held))
        assert held.end(stopped, 6)[0] == len(stopped)
        assert held.end("prose " + held.literal + char, 6)[0] == len(buffer) - 499


@pytest.mark.parametrize(("name", "opener"), HELD, ids=IDS)
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_the_held_window_gives_the_whole_windows_verdict(name, opener, data):
    held = opener.held or opener.cut_held
    inside = _class_chars(held)
    run_text = data.draw(st.text(st.sampled_from(inside), max_size=60))
    tail = data.draw(st.text(st.sampled_from(ALPHABET), max_size=4))
    prefix = data.draw(st.sampled_from(["", "Sure. ", "a\n"]))
    buffer = prefix + held.literal + run_text + tail
    anchor = len(prefix)
    if opener.held is not None:
        end, _ = opener.held.end(buffer, anchor)
        whole = opener.compiled.match(buffer, anchor, len(buffer), partial=True)
        short = opener.compiled.match(buffer, anchor, end, partial=True)
        assert _verdict(short) == _verdict(whole)
    if opener.cut_held is not None:
        end, _ = opener.cut_held.end(buffer, anchor)
        whole = opener.cut_compiled.match(buffer, anchor, len(buffer))
        short = opener.cut_compiled.match(buffer, anchor, end)
        assert (short is None) == (whole is None)


@pytest.mark.parametrize(("name", "opener"), HELD, ids=IDS)
def test_held_openings_read_the_same_without_the_shortcut(name, opener, monkeypatch):
    fmt = FORMATS[name]
    rng = random.Random(name + opener.literal)
    held = opener.held or opener.cut_held
    texts = []
    for _ in range(12):
        body = "".join(rng.choice(_class_chars(held)) for _ in range(rng.randint(1, 300)))
        before = rng.choice(["", "Let me check.\n", "x "])
        texts.append(before + held.literal + body + rng.choice(["", "", rng.choice(ALPHABET)]))
    shortened = [(outcome(lambda: read_events(text, fmt)),
                  outcome(lambda: stream_events(fmt, random_pieces(text, rng)))) for text in texts]
    monkeypatch.setattr(HeldRun, "end", lambda self, buffer, anchor: (len(buffer), 0))
    whole = [(outcome(lambda: read_events(text, fmt)),
              outcome(lambda: stream_events(fmt, random_pieces(text, rng)))) for text in texts]
    assert shortened == whole


def test_only_a_literal_then_a_plain_class_run_is_a_held_run():
    assert leading_run(sequence(literal("<x>"), run(chars("[ab]")), literal(">"))) == ("<x>", "[ab]")
    assert leading_run(sequence(sequence(literal("<x>")), sequence(run(chars("[ab]"), at_least=1)))) == (
        "<x>", "[ab]")
    assert leading_run(sequence(literal("<x>"), either(run(chars("[ab]")), literal("c")))) is None
    assert leading_run(sequence(run(chars("[ab]")), literal("<x>"))) is None
    # \s and \w: re and regex may draw their Unicode sets differently, so no shortcut.
    assert HeldRun.of(sequence(literal("<x>"), run(chars(r"\s")))) is None
    assert HeldRun.of(sequence(literal("<x>"), run(chars(r"[\w.]")))) is None
    assert HeldRun.of(sequence(literal("<x>"), run(chars("[^<>\\n\"]")))) is not None


@pytest.mark.parametrize("at_least", [0, 1])
@pytest.mark.parametrize("rest", ["", ">", "[c]?"])
def test_the_window_keeps_the_verdict_of_patterns_the_registry_lacks(at_least, rest):
    # A run that ends the pattern, or is followed by something optional: the window must
    # keep one character of the run (none would fail ``<x>[ab]++`` where the text matches).
    pattern = sequence(literal("<x>"), run(chars("[ab]"), at_least=at_least))
    held = HeldRun.of(pattern)
    compiled = regex.compile(pattern.regex + rest)
    for size in range(0, 6):
        for text in ("<x>" + "ab"[size % 2] * size, "<x>" + "ab" * size):
            end, _ = held.end(text, 0)
            assert (compiled.match(text, 0, end) is None) == (compiled.match(text) is None), text
            assert _verdict(compiled.match(text, 0, end, partial=True)) == _verdict(
                compiled.match(text, partial=True)), text
