"""Wall time of the reading cases whose work the default run counts.

``make test`` proves linearity by counted work (``tests/test_linear_work.py``,
the floods of ``tests/test_formats.py``, the megabyte inputs of
``tests/test_fuzz.py``). The clock sees what a counter cannot: string
slicing and concatenation, a reader re-parsing a region, a C-level loop (a
line count inside the JSON decoder) that is quadratic while the count stays
linear. It also sees every other process on the machine, so these run in
``make bench-smoke``, a step of their own (``tests/wallclock/conftest.py``),
retried before a failure counts.
"""

from __future__ import annotations

import gc
import time

import pytest

from templatestudio import FORMATS, UnparsedToolCall, read_events
from templatestudio.leaks import find_call_markers
from test_formats import FLOODS
from test_fuzz import check_everything, megabyte_texts, owners
from test_linear_work import CASES, RUN_IDS, RUNS, fmt_of, read

# Over the last 4x of a case's sizes (100 KB to 400 KB for issue 11's cases)
# wall time may grow at most 6 times.
TIME_GROWTH = 6.0
# Reads shorter than this at the largest size are not timed: on a shared
# machine their ratio is cache and scheduler noise (an early refusal, or
# text that fits in a cache at one size and not the next).
TOO_FAST_TO_TIME = 0.05


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


@pytest.mark.parametrize(("case", "reader"), RUNS, ids=RUN_IDS)
def test_wall_time_grows_linearly(case, reader):
    _, chunk, sizes, build = CASES[case]
    fmt = fmt_of(reader)
    texts = {size: build(size) for size in sizes[1:]}
    # Best of five, but stop as soon as one pair of runs is linear: a busy
    # machine only ever makes one run slower, never the ratio smaller. The
    # wall clock decides; a ratio that only a busy machine's wall clock
    # shows (the process's CPU time grew linearly) is not a failure.
    timings = []
    for _ in range(5):
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
        f"({wall[sizes[1]] * 1000:.0f} ms -> {wall[sizes[-1]] * 1000:.0f} ms; "
        f"CPU {cpu[sizes[-1]] / max(cpu[sizes[1]], 1e-9):.1f}x): hidden superlinear work"
    )


@pytest.mark.parametrize("text", FLOODS, ids=[flood[:14] for flood in FLOODS])
def test_a_megabyte_of_repeated_markers_is_read_within_seconds(text):
    """By the formats whose markers flood it, and by the leak survey; quadratic takes minutes here."""
    readers = {fmt for fmt in FORMATS.values() for o in fmt.openers if text.startswith(o.literal)}
    started = time.perf_counter()
    for fmt in readers:
        try:
            read_events(text, fmt)
        except UnparsedToolCall:
            pass  # a refusal is a documented answer; its time is what is measured
    find_call_markers(text)
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("label", list(megabyte_texts()))
def test_a_megabyte_input_is_checked_within_a_minute(label):
    text = megabyte_texts()[label]
    started = time.perf_counter()
    check_everything(text, [text[i : i + 4096] for i in range(0, len(text), 4096)], readers=owners(text[:5000]))
    assert time.perf_counter() - started < 60, "1 MB took more than a minute"
