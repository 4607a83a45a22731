"""A call opener followed at once by its format's stop token or framing: a call that holds nothing, never text.

A server that does not stop on PLaMo 3's ``<|plamo:tag|>`` leaves
``<|plamo:begin_tool_requests:plamo|><|plamo:tag|>``; Kimi K3's tools element
closed by the message's end, Command R7B's action token and then an answer
token are the same reply. Generated over every registered format: each
opener literal, then each of the format's declared stop tokens and framing
(``WireShape.stop_tokens``, ``WireShape.framing``), with whitespace between or
not, after prefixes, with text after it or not, read whole (strict or not)
and streamed in every chunking of a seeded set. The reading agrees with the
text without the token: where the literal alone (mid-line) is a cut call the
reply raises ``UnparsedToolCall`` and the survey flags the literal's offset;
where the literal alone is prose it stays prose, token or not.
"""

from __future__ import annotations

import random
import re

import pytest

from templatestudio.calls import UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.stream import ToolCallStream

PREFIXES = ("", "Sure. ", "Let me check.\n", "x")
BETWEEN = ("", " ", "\n")
AFTERS = ("", "\nThe answer follows.", " done")
ENDED = "the turn's end or a message boundary follows it at once"


def outcome(read) -> tuple:
    try:
        return ("events", read())
    except UnparsedToolCall as error:
        return ("raises", str(error))


def streamed(fmt, pieces: list[str], strict: bool = True) -> list:
    stream = ToolCallStream(fmt, strict=strict)
    events = [event for piece in pieces for event in stream.feed(piece)]
    return merge_deltas(events + stream.close())


def chunkings(text: str, rng: random.Random) -> list[list[str]]:
    cuts = [list(text), [text[:1], text[1:]]]
    for _ in range(3):
        points = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 4)))) if len(text) > 1 else []
        cuts.append([text[a:b] for a, b in zip([0, *points], [*points, len(text)])])
    return cuts


def cases():
    """(format name, literal, token): every non-framing opener literal of every format with each of its tokens."""
    found = []
    for name, fmt in FORMATS.items():
        if fmt.wire is None:
            continue
        tokens = tuple(dict.fromkeys((*fmt.wire.stop_tokens, *fmt.wire.framing)))
        for literal in dict.fromkeys(opener.literal for opener in fmt.openers):
            found += [(name, literal, token) for token in tokens if literal not in tokens]
    return found


CASES = cases()


def test_the_generator_covers_the_reported_formats():
    covered = {(name, literal, token) for name, literal, token in CASES}
    assert ("plamo3", "<|plamo:begin_tool_requests:plamo|>", "<|plamo:tag|>") in covered
    assert ("kimi-k3", "<|open|>tools<|sep|>", "<|close|>message<|sep|>") in covered
    assert ("command-r7b", "<|START_ACTION|>", "<|END_TEXT|>") in covered
    assert len(CASES) > 60


def _shown(events) -> str:
    return "".join(getattr(event, "text", "") for event in events)


def _cut_alone(fmt, literal: str) -> bool:
    """Whether the literal alone, mid-line, is a cut call (what the token after it must not change)."""
    return outcome(lambda: read_events("Sure. " + literal, fmt))[0] == "raises"


@pytest.mark.parametrize("name,literal,token", CASES, ids=[f"{n}:{l}+{t}" for n, l, t in CASES])
def test_opener_then_token_reads_as_the_opener_alone(name, literal, token):
    fmt = FORMATS[name]
    rng = random.Random(f"{name}{literal}{token}")
    cut = _cut_alone(fmt, literal)
    for prefix in PREFIXES:
        if not cut and outcome(lambda: read_events(prefix + literal, fmt))[0] == "raises":
            continue  # a cut only at a line start (or the reply's): test_line_start_cuts_then_a_token below
        for between in BETWEEN:
            for after in AFTERS:
                text = prefix + literal + between + token + after
                whole = outcome(lambda: read_events(text, fmt))
                if cut:
                    assert whole[0] == "raises", (text, whole)
                    # Not strict: refused, or (a region the token left open to the end) the cut call.
                    loose = outcome(lambda: read_events(text, fmt, strict=False))
                    assert loose[0] == "raises" or any(type(event).__name__ == "CutToolCall" for event in loose[1]), (
                        text, loose)
                    markers = find_call_markers(text)
                    assert [(m.text, m.offset) for m in markers][:1] == [(literal, len(prefix))], (text, markers)
                else:
                    # Prose stays prose: the token makes no call of it (a format's own reader may refuse
                    # what its opener opened, as it does without the token: Inkling's header then a space).
                    assert whole[0] == "events" or ENDED not in whole[1], (text, whole)
                    if whole[0] == "events" and not between:
                        alone = read_events(prefix + literal, fmt)
                        assert (literal in _shown(whole[1])) == (literal in _shown(alone)), (text, whole, alone)
                for pieces in chunkings(text, rng):
                    assert outcome(lambda: streamed(fmt, pieces)) == whole, (text, pieces)


def line_start_cases():
    """(name, literal, token, prefix): a literal that is a cut call only where it stands (a line's or the reply's start)."""
    found = []
    for name, literal, token in CASES:
        fmt = FORMATS[name]
        if _cut_alone(fmt, literal):
            continue
        found += [(name, literal, token, prefix) for prefix in PREFIXES
                  if outcome(lambda: read_events(prefix + literal, fmt))[0] == "raises"]
    return found


LINE_START = line_start_cases()


@pytest.mark.parametrize("name,literal,token,prefix", LINE_START,
                         ids=[f"{n}:{l}+{t}:{p!r}" for n, l, t, p in LINE_START])
def test_line_start_cuts_then_a_token(name, literal, token, prefix):
    # A literal that is a cut call alone only where it stands (functionary-v3.1's <function= at a line
    # start, qwen-xml's bare one at the reply's start), then the turn's end: a call that holds nothing
    # there (Tables.line_commits, Tables.start_commit); the same literal and token mid-line stay prose.
    fmt = FORMATS[name]
    rng = random.Random(f"{name}{literal}{token}{prefix}")
    for between in BETWEEN:
        for after in AFTERS:
            text = prefix + literal + between + token + after
            whole = outcome(lambda: read_events(text, fmt))
            assert whole[0] == "raises" and ENDED in whole[1], (text, whole)
            assert [(m.text, m.offset) for m in find_call_markers(text)][:1] == [(literal, len(prefix))], text
            for pieces in chunkings(text, rng):
                assert outcome(lambda: streamed(fmt, pieces)) == whole, (text, pieces)
            mid_line = "Sure, " + literal + between + token + after
            prose = outcome(lambda: read_events(mid_line, fmt))
            assert prose[0] == "events" or ENDED not in prose[1], (mid_line, prose)



# Literals whose reading depends on where they stand: a cut at a line start (Opener.cut_at_line) or
# at the reply's start (a start-only opener).
PLACED = sorted({opener.literal for fmt in FORMATS.values() for opener in fmt.openers
                 if opener.cut_at_line is not None or opener.start_only})
TURN_ENDS = sorted({token for fmt in FORMATS.values() if fmt.wire is not None
                    for token in (*fmt.wire.stop_tokens, *fmt.wire.framing)})
LINE_LITERALS = sorted({opener.literal for fmt in FORMATS.values() for opener in fmt.openers
                        if opener.cut_at_line is not None})


def _shifted(result: tuple, by: int) -> tuple:
    """An outcome with the offsets its message names moved back by `by` (the same text one line down)."""
    if result[0] != "raises":
        return result
    return ("raises", re.sub(r"offset (\d+)", lambda found: f"offset {int(found.group(1)) - by}", result[1]))


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_reply_start_is_a_line_start(name):
    # A literal cut only at a line start (functionary's <function=) is read at the reply's first
    # character as after a line break, whatever follows it, in every format's machine.
    fmt = FORMATS[name]
    for literal in LINE_LITERALS:
        for tail in ["", " ", "\t", "x", " x", "\n", *TURN_ENDS]:
            at_start = outcome(lambda: read_events(literal + tail, fmt))
            after_break = outcome(lambda: read_events("\n" + literal + tail, fmt))
            assert at_start[0] == after_break[0] and (at_start[0] == "events" or at_start == _shifted(after_break, 1)), (
                literal + tail, at_start, after_break)


@pytest.mark.parametrize("literal", PLACED)
def test_a_placed_literal_then_a_turn_end_is_refused_by_the_token_owner_and_flagged_once(literal):
    # Where any machine refuses the literal, the survey flags it at that offset, once; a refusal for a
    # turn end right after the literal names a format whose turn end it is (qwen-xml's inner ">" ends
    # "<|eot_id|>" too: the token decides first).
    for prefix in ("", "\n", "Hi\n", " ", "Hi ", "<think>x</think>\n"):
        for between in ("", " "):
            for token in TURN_ENDS:
                text = prefix + literal + between + token + " ok"
                offsets = [marker.offset for marker in find_call_markers(text)]
                assert len(offsets) == len(set(offsets)), (text, offsets)
                for name, fmt in FORMATS.items():
                    result = outcome(lambda: read_events(text, fmt))
                    if result[0] != "raises":
                        continue
                    assert int(re.search(r"offset (\d+)", result[1]).group(1)) in offsets, (name, text, result)
                    if ENDED in result[1]:
                        named = re.search(r"the (\S+) format cannot read", result[1]).group(1)
                        owner = FORMATS[named].wire
                        assert token in (*owner.stop_tokens, *owner.framing), (name, text, result)
