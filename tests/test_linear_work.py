"""Reading costs grow linearly with the reply, for every reader and every chunking.

Two measures, because each misses what the other sees:

- work: ``Machine.examined`` (``ToolCallStream.chars_examined``), the
  characters the machine searched, scanned or crossed. From 25 KB to 400 KB
  (16 times the text) it may grow at most 16 x 1.3 times. It is exact and
  noise-free, but it counts only what the machine chooses to count.
- wall time: best of five ``perf_counter`` runs (collector off). Over the last 4x of the
  sizes (100 KB to 400 KB for issue 11's cases) it may grow at most 6 times. This catches work the counter
  cannot see: string slicing and concatenation, a reader re-parsing a
  region, Python-level loops in a format's reader.

The cases are issue 11's (many pythonic calls in one list, qwen-xml
openers sharing one closer, prose fed a character at a time, a held
opening) at its sizes; the engine's own paths (prose whole and a character
at a time, a held opening) for every format's reader; for every format,
many small calls, one huge argument of plain letters and one of
backslashes in small chunks; and, through the record machine behind
``find_call_markers`` (which runs every format's openers and readers and
does not stop at a refusal, so it does the most work any reader does),
every opener's literal and every sample's opening repeated, every
format's calls interleaved, and every opening held open by a long run.
"""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path

import pytest

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import Machine
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.resumable_match import MATCHED, MORE

# Issue 11's sizes for the cases it measured, read by the format they aim at
# and by the leak survey; the registry-wide matrix (every format's reader,
# every format's cases) runs at a sixth of them so the file stays within
# about a minute: each spans 16x, and the timing compares the last two
# sizes (4x). Reads under TOO_FAST_TO_TIME at the largest size are not timed.
ISSUE_SIZES = (25_000, 100_000, 400_000)
MATRIX_SIZES = (4_000, 16_000, 64_000)
# Marker floods at a larger scale: a C-speed inner loop that is quadratic
# (str.count from the buffer's start on every refused region) only shows
# past a hundred kilobytes.
FLOOD_SIZES = (16_000, 64_000, 256_000)
ONE_CHAR_SIZES = (500, 2_000, 8_000)  # a feed call per character, for every reader: work only, too fast to time
WORK_GROWTH = 16 * 1.3
TIME_GROWTH = 6.0
# Reads shorter than this at the largest size are not timed: on a shared
# machine their ratio is cache and scheduler noise (an early refusal, or
# text that fits in a cache at one size and not the next).
TOO_FAST_TO_TIME = 0.05
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
    """Feed text to a machine (fmt None: the recording one) in chunks; return its work."""
    machine = Machine(fmt, record=fmt is None)
    step = chunk or len(text) or 1
    try:
        for start in range(0, len(text), step):
            machine.feed(text[start : start + step])
        machine.close()
    except UnparsedToolCall:
        pass  # a refusal is a documented answer; only its cost is measured here
    return machine.examined


def seconds_per_read(fmt, text: str, chunk: int | None) -> tuple[float, float]:
    """(wall, CPU) seconds one read takes, collector off, repeated until 20 ms of wall time have passed.

    A garbage collection that lands in one run, or a read too short for the
    clock, would otherwise make a linear reader look superlinear. The CPU
    time is the same run seen by ``process_time``: other processes on a
    shared machine stretch the wall clock, not this process's CPU time.
    """
    gc.collect()
    gc.disable()
    try:
        runs, started, cpu = 0, time.perf_counter(), time.process_time()
        while True:
            read(fmt, text, chunk)
            runs += 1
            elapsed = time.perf_counter() - started
            if elapsed >= 0.02:
                return elapsed / runs, (time.process_time() - cpu) / runs
    finally:
        gc.enable()


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
    CASES[f"{_fmt.name}: one huge argument"] = (
        (_fmt.name,), 4096, MATRIX_SIZES, lambda n, f=_fmt: f.write_call(ParsedToolCall("write_note", {"text": "x" * n})))
    # A string that ends, chunk after chunk, in a run of backslashes: the
    # reader must not walk back over the run on every chunk.
    CASES[f"{_fmt.name}: one huge argument of backslashes, 256-char chunks"] = (
        (_fmt.name,), 256, MATRIX_SIZES,
        lambda n, f=_fmt: f.write_call(ParsedToolCall("write_note", {"text": "\\" * (n // 2)})))
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
def test_work_and_wall_time_grow_linearly(case, reader):
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
    work, first_times = {}, {}
    for size in sizes:
        gc.collect()
        gc.disable()
        try:
            started, cpu = time.perf_counter(), time.process_time()
            work[size] = read(fmt, texts[size], chunk)
            first_times[size] = (time.perf_counter() - started, time.process_time() - cpu)
        finally:
            gc.enable()
    growth = work[sizes[-1]] / max(work[sizes[0]], 1)
    length_growth = len(texts[sizes[-1]]) / len(texts[sizes[0]])
    assert growth <= WORK_GROWTH * length_growth / 16, (
        f"work grew {growth:.1f}x for {length_growth:.0f}x the text: {work}"
    )
    # Best of five, but stop as soon as one pair of runs is linear: a busy
    # machine only ever makes one run slower, never the ratio smaller. The
    # wall clock decides; a ratio that only a busy machine's wall clock
    # shows (the process's CPU time grew linearly) is not a failure.
    timings = [{size: first_times[size] for size in sizes[1:]}]  # the work runs are the first round
    for round_ in range(5):
        if round_:
            timings.append({size: seconds_per_read(fmt, texts[size], chunk) for size in sizes[1:]})
        wall = {size: min(t[size][0] for t in timings) for size in sizes[1:]}
        cpu = {size: min(t[size][1] for t in timings) for size in sizes[1:]}
        if wall[sizes[-1]] < TOO_FAST_TO_TIME or wall[sizes[-1]] <= TIME_GROWTH * wall[sizes[1]]:
            return
        if cpu[sizes[-1]] <= TIME_GROWTH * cpu[sizes[1]]:
            return
        if cpu[sizes[-1]] > 1.5 * TIME_GROWTH * cpu[sizes[1]]:
            break  # far past what noise explains, on both clocks: no need for more rounds
    pytest.fail(
        f"wall time grew {wall[sizes[-1]] / wall[sizes[1]]:.1f}x from {sizes[1] // 1000} KB to {sizes[-1] // 1000} KB "
        f"({wall[sizes[1]] * 1000:.0f} ms -> {wall[sizes[-1]] * 1000:.0f} ms; CPU {cpu[sizes[-1]] / max(cpu[sizes[1]], 1e-9):.1f}x) "
        f"while work grew {work[sizes[-1]] / max(work[sizes[1]], 1):.1f}x: hidden superlinear work"
    )


def test_the_cases_cover_every_format_and_opener():
    covered = {reader for _, reader in RUNS}
    assert covered == {*FORMATS, None}
    held = {start[:-1] for _, start in held_openings()}
    assert held, "no opening can be held open: the held cases test nothing"
