"""Reading costs grow linearly with the reply, for every reader and every chunking.

Measured here as work: ``Machine.examined`` (``ToolCallStream.chars_examined``),
the characters the machine searched, scanned or crossed. From 25 KB to 400 KB
(16 times the text) it may grow at most 16 x 1.3 times. It is exact and
noise-free, but it counts only what the machine chooses to count, so it is
also held to a bound of its own: a read that reaches the reply's end has
looked at every character (less a reasoning opener it recognises whole), so
a count that skips a path or is halved fails here, not only a count that
grows too fast.

Wall time, which catches work the counter cannot see (string slicing and
concatenation, a reader re-parsing a region, a C-level loop), is measured
on the same cases by ``tests/wallclock/test_wall_time.py``: a clock belongs
in ``make bench-smoke``, a step of its own, never in ``make test``.

The cases are issue 11's (many pythonic calls in one list, qwen-xml
openers sharing one closer, prose fed a character at a time, a held
opening) at its sizes; the engine's own paths (prose whole and a character
at a time, a held opening) for every format's reader; for every format,
many small calls, one huge argument of plain letters (streamed and whole), one of
backslashes in small chunks and one of source code (escaped quotes);
and, through the record machine behind ``find_call_markers`` (which runs
every format's openers and readers and does not stop at a refusal, so it
does the most work any reader does),
every opener's literal and every sample's opening repeated, every
format's calls interleaved, and every opening held open by a long run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import Machine
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.resumable_match import MATCHED, MORE
from templatestudio.literal_search import COMMIT_LOOK, REGEX_FIRST_LOOK

# Issue 11's sizes for the cases it measured, read by the format they aim at
# and by the leak survey; the registry-wide matrix (every format's reader,
# every format's cases) runs at a sixth of them so the file stays within
# about a minute: each spans 16x (the wall-clock check, tests/wallclock,
# compares the last two sizes, 4x).
ISSUE_SIZES = (25_000, 100_000, 400_000)
MATRIX_SIZES = (4_000, 16_000, 64_000)
# Marker floods at a larger scale: a C-speed inner loop that is quadratic
# (str.count from the buffer's start on every refused region) only shows
# past a hundred kilobytes.
FLOOD_SIZES = (16_000, 64_000, 256_000)
ONE_CHAR_SIZES = (500, 2_000, 8_000)  # a feed call per character, for every reader: work only, too fast to time
WORK_GROWTH = 16 * 1.3
PROSE = " ".join(
    answer["text"]
    for answer in json.loads((Path(__file__).parent / "fixtures" / "prose_answers.json").read_text(encoding="utf-8"))["answers"]
    if answer["topic"] != "quotes-call-syntax"
)


def repeat(unit: str, size: int, tail: str = "") -> str:
    return unit * max(1, size // len(unit)) + tail


def prose(size: int) -> str:
    """size characters of the tuning set's answers (one answer set is longer than the small sizes)."""
    return ((PROSE + " ") * (size // len(PROSE) + 1))[:size]


def read(fmt, text: str, chunk: int | None) -> int:
    """Feed text to a machine (fmt None: the recording one) in chunks; return its work.

    A read that reaches the end must have counted every character but a
    reasoning opener (see the module's docstring); a refused one stops early.
    """
    machine = Machine(fmt, record=fmt is None)
    step = chunk or len(text) or 1
    try:
        for start in range(0, len(text), step):
            machine.feed(text[start : start + step])
        machine.close()
    except UnparsedToolCall:
        return machine.examined  # a refusal is a documented answer; only its cost is measured here
    unscanned = len(fmt.reasoning[0]) if fmt is not None and fmt.reasoning else 0
    assert machine.examined >= len(text) - unscanned, (
        f"{machine.examined} characters counted for a {len(text)}-character reply read to its end"
    )
    return machine.examined


# --- the cases, from the registry -------------------------------------------------------------


def openings() -> list[str]:
    """For each opener, the text from a sample's marker to where its opening pattern matched (the first such)."""
    found: dict[tuple[str, str], str] = {}
    for fmt in FORMATS.values():
        for sample in fmt.samples:
            for marker in find_call_markers(sample.text):
                for opener in FORMATS[marker.formats[0]].openers:
                    verdict, end = opener.automaton.scan().feed(sample.text, marker.offset)
                    if opener.literal == marker.text and verdict == MATCHED:
                        found.setdefault((marker.formats[0], opener.literal), sample.text[marker.offset : end])
                        break
    return list(dict.fromkeys(found.values()))


def held_openings() -> list[tuple[str, str]]:
    """(format, literal + run) for each opener that a long run of one character keeps undecided."""
    held = []
    for fmt in FORMATS.values():
        for opener in fmt.openers:
            for char in "a_ \n":
                if opener.automaton.scan().feed(opener.literal + char * 64)[0] == MORE:
                    held.append((fmt.name, opener.literal + char))
                    break
    return held


SMALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
EVERY = (*FORMATS, None)  # every format's reader, then the leak survey

# name -> (readers: format names, None for the leak survey; chunk size, None for one feed; sizes; builder of ~n chars)
CASES: dict[str, tuple[tuple[str | None, ...], int | None, tuple[int, ...], object]] = {}
ISSUE_CASES = {
    "pythonic: many calls in one list": ("pythonic", None, lambda n: "[" + repeat("f(a=1), ", n) + "f(a=1)]"),
    "qwen-xml: many openers sharing one </parameter>": (
        "qwen-xml", None, lambda n: repeat("<tool_call>\n<function=f>\n<parameter=a>\n", n, "</parameter>\n</function>\n</tool_call>")),
    "prose, one character at a time": ("hermes", 1, prose),
    "prose, whole": ("hermes", None, prose),
    "held '<tool_call>' + spaces, 256-char chunks": ("hermes", 256, lambda n: "<tool_call>" + " " * n),
}
# What issue 11 measured, at its sizes, by the format it aims at and the survey.
for _case, (_target, _chunk, _build) in ISSUE_CASES.items():
    CASES[_case] = ((_target,) if _chunk == 1 else (_target, None), _chunk, ISSUE_SIZES, _build)
# The engine's own paths (prose searched whole or a character at a time, an
# opening held across chunks) for every format's reader. The other issue
# cases cost every foreign reader what the owning format's reader costs,
# since each hands the region to it: measured above.
for _case in ("prose, one character at a time", "prose, whole", "held '<tool_call>' + spaces, 256-char chunks"):
    _, _chunk, _build = ISSUE_CASES[_case]
    CASES[f"{_case} (every reader)"] = (EVERY, _chunk, ONE_CHAR_SIZES if _chunk == 1 else MATRIX_SIZES, _build)
for _fmt in FORMATS.values():
    _small = _fmt.write_call(SMALL)
    CASES[f"{_fmt.name}: many small calls"] = ((_fmt.name,), None, MATRIX_SIZES, lambda n, s=_small: repeat(s + "\n", n))
    # Streamed in chunks below the smallest text (a quarter of MATRIX_SIZES[0]), so that every size is
    # read the same way: a reply read whole can end a call at the first look (the closer found from the
    # end), which a stream cannot; the whole read is a case of its own.
    CASES[f"{_fmt.name}: one huge argument"] = (
        (_fmt.name,), 512, MATRIX_SIZES, lambda n, f=_fmt: f.write_call(ParsedToolCall("write_note", {"text": "x" * n})))
    CASES[f"{_fmt.name}: one huge argument, whole"] = (
        (_fmt.name,), None, MATRIX_SIZES, lambda n, f=_fmt: f.write_call(ParsedToolCall("write_note", {"text": "x" * n})))
    # In a token's size of chunk: a value extent waits for a character that may end it (each
    # character looked at once for one, and scanned once when one came), a tag extent for its closer.
    CASES[f"{_fmt.name}: one huge argument of source code, 16-char chunks"] = (
        (_fmt.name,), 16, MATRIX_SIZES,
        lambda n, f=_fmt: f.write_call(ParsedToolCall("write_note", {"text": repeat('print("a [b]", {"C": 1}) ', n)})))
    CASES[f"{_fmt.name}: one huge argument, 16-char chunks"] = (
        (_fmt.name,), 16, MATRIX_SIZES, lambda n, f=_fmt: f.write_call(ParsedToolCall("write_note", {"text": "x" * n})))
    # A string that ends, chunk after chunk, in a run of backslashes: the
    # reader must not walk back over the run on every chunk.
    CASES[f"{_fmt.name}: one huge argument of backslashes, 256-char chunks"] = (
        (_fmt.name,), 256, MATRIX_SIZES,
        lambda n, f=_fmt: f.write_call(ParsedToolCall("write_note", {"text": "\\" * (n // 2)})))
    # Quotes JSON escapes, some after an escaped backslash (issue 23): the
    # string's end is found past every escaped quote, the call's closer once
    # it arrives; neither may be looked for again from the start per chunk.
    CASES[f"{_fmt.name}: one huge argument of source code"] = (
        (_fmt.name,), 512, MATRIX_SIZES,
        lambda n, f=_fmt: f.write_call(ParsedToolCall("write_note", {"text": repeat('print("a \\"b\\"", "C:\\\\") ', n)})))
# The survey tries every format's openers at every marker and reads every
# region with its format's reader without stopping at a refusal: the most
# work any reader does on marker-dense text.
_SMALLS = "\n".join(f.write_call(SMALL) for f in FORMATS.values()) + "\n"
CASES["every format's small calls, interleaved"] = ((None,), None, FLOOD_SIZES, lambda n: repeat(_SMALLS, n))
for _unit in sorted({o.literal for f in FORMATS.values() for o in f.openers} | set(openings())):
    CASES[f"repeated {_unit!r}"] = ((None,), None, FLOOD_SIZES, lambda n, u=_unit: repeat(u, n))
for _name, _start in held_openings():
    CASES[f"held {_start[:-1]!r} + {_start[-1]!r} run, 256-char chunks"] = (
        (None,), 256, MATRIX_SIZES, lambda n, s=_start: s[:-1] + s[-1] * n)

RUNS = [(case, reader) for case, (readers, _, _, _) in CASES.items() for reader in readers]
RUN_IDS = [f"{case} | {reader or 'leak survey'}" for case, reader in RUNS]


def fmt_of(reader: str | None):
    return FORMATS[reader] if reader is not None else None


@pytest.mark.parametrize(("case", "reader"), RUNS, ids=RUN_IDS)
def test_work_grows_linearly(case, reader):
    _, chunk, sizes, build = CASES[case]
    fmt = fmt_of(reader)
    # A quarter of the smallest size first: a quadratic case fails here in
    # seconds instead of running for minutes at the largest size.
    ladder = [build(sizes[0] // 4), build(sizes[0])]
    first = [read(fmt, text, chunk) for text in ladder]
    early = first[1] / max(first[0], 1)
    assert early <= WORK_GROWTH / 16 * len(ladder[1]) / len(ladder[0]), (
        f"work grew {early:.1f}x for {len(ladder[1]) / len(ladder[0]):.0f}x the text: {first}"
    )
    texts = {size: build(size) for size in sizes}
    work = {size: read(fmt, texts[size], chunk) for size in sizes}
    growth = work[sizes[-1]] / max(work[sizes[0]], 1)
    length_growth = len(texts[sizes[-1]]) / len(texts[sizes[0]])
    assert growth <= WORK_GROWTH * length_growth / 16, (
        f"work grew {growth:.1f}x for {length_growth:.0f}x the text: {work}"
    )


def test_the_cases_cover_every_format_and_opener():
    covered = {reader for _, reader in RUNS}
    assert covered == {*FORMATS, None}
    held = {start[:-1] for _, start in held_openings()}
    assert held, "no opening can be held open: the held cases test nothing"


def _holds(opener, text: str) -> bool:
    return opener.automaton.scan().feed(text)[0] == MORE


@pytest.mark.parametrize("fmt", FORMATS.values(), ids=list(FORMATS))
def test_an_opening_at_the_reply_start_is_looked_at_once_per_opener(fmt):
    """A held opening at the reply's start costs what it costs after text, plus the start-only openers' reads.

    At the reply's start the literal is decided twice: by the start's
    Opening (start-only openers and the others at that literal), then, when
    that says prose, by the anywhere Opening. The second takes the first's
    verdicts on the openers both try; re-reading them doubled the cost of a
    held opening at the end of the reply (functionary's ``<function=`` and a
    run of spaces: read twice at close). Every start-only opener that holds
    the text may read it once more, a regex's first look at most
    ``REGEX_FIRST_LOOK`` characters more, and the start's commitment
    (``Tables.start_commit``: a start literal then the turn's end) at most
    ``COMMIT_LOOK`` more.
    """
    n = 16_000
    for opener in fmt.openers:
        for char in "a_ \n":
            if not _holds(opener, opener.literal + char * 64):
                continue
            text = opener.literal + char * n
            extra = sum(_holds(other, opener.literal + char * 64) for other_fmt in FORMATS.values()
                        for other in other_fmt.openers if other.start_only and other.literal == opener.literal)
            for chunk in (256, None):
                at_start, after_text = read(fmt, text, chunk), read(fmt, "Hi. " + text, chunk) - len("Hi. ")
                bound = after_text + extra * len(text) + REGEX_FIRST_LOOK + COMMIT_LOOK
                assert at_start <= bound, (opener.literal, char, chunk, at_start, after_text)
