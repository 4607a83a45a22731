"""No reader, marker search or stream may take superlinear time on crafted input.

Each case is 100 KB of text built to hurt a scanner: the same opener
repeated (every one a fresh place to start a match), strings that never
close, long runs of whitespace or name characters after an opener (where a
regex with two adjacent ``\\s*``-like pieces backtracks quadratically), and
openers followed by one closer at the very end. Besides the hand-built
cases, every opener in the registry gets two: its literal repeated, and
its literal held open by a long run. Each case is read by the formats
whose markers it holds (whole, and streamed as one chunk and in
256-character chunks, so re-scanning held text shows) and by
``find_call_markers``, which runs every format's reader over the text
without stopping at a refusal: a format that finds no marker in a text
refuses or passes it at its first marker, in constant time. Each must
finish within 100 ms.

Timing is the best of three runs, so a busy machine does not fail the
test. Smaller versions of the case (1, 3, 10, 30 KB) run first: the first
one over budget fails the test with the timings so far, so a quadratic case
fails in about a second instead of running for minutes at 100 KB.
"""

from __future__ import annotations

import time

import pytest

from templatestudio.calls import UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.resumable_match import MORE
from templatestudio.stream import ToolCallStream

BUDGET = 0.100  # seconds, for the 100 KB input
SIZE = 100_000


def repeated(unit: str, size: int, tail: str = "") -> str:
    return unit * (size // len(unit)) + tail


# The hand-built cases of the old table; which formats read each one is
# found from its markers, not written down.
CASES = {
    "tool_call openers": lambda n: repeated("<tool_call>", n),
    "tool_call openers then one closer": lambda n: repeated("<tool_call>", n, "</tool_call>"),
    "hermes unterminated string": lambda n: '<tool_call>{"name": "' + "a" * n,
    "hermes whitespace after opener": lambda n: "<tool_call>" + " " * n,
    "hermes deep brackets": lambda n: '<tool_call>{"name": "f", "arguments": ' + "[" * n,
    "qwen-xml parameters then one closer": lambda n: repeated("<tool_call><function=f><parameter=a>", n, "</tool_call>"),
    "qwen-xml long function name": lambda n: "<tool_call><function=" + "a" * n,
    "fenced openers": lambda n: repeated("```json", n),
    "fenced whitespace after opener": lambda n: "```json" + " " * n + "x",
    "gemma4 openers": lambda n: repeated("<|tool_call>call:", n),
    "gemma4 unterminated strings": lambda n: repeated('<|tool_call>call:f{a:<|"|>', n),
    "gemma4 long name": lambda n: "<|tool_call>call:" + "a" * n,
    "mistral openers": lambda n: repeated("[TOOL_CALLS]", n),
    "mistral long name": lambda n: "[TOOL_CALLS]" + "a" * n,
    "mistral openers with names": lambda n: repeated("[TOOL_CALLS]a", n),
    "llama3 unterminated name": lambda n: '{"name": "' + "a" * n,
    "llama3 whitespace after python_tag": lambda n: "<|python_tag|>" + " " * n + "x",
    "llama3 whitespace after brace": lambda n: "{" + " " * n,
    "pythonic unterminated string": lambda n: "[f(a='" + "a" * n,
    "pythonic openers": lambda n: repeated("[f(", n),
    "think never closed": lambda n: "<think>" + "a" * n,
}
for _fmt in FORMATS.values():
    for _opener in _fmt.openers:
        CASES.setdefault(f"repeated {_opener.literal!r}", lambda n, u=_opener.literal: repeated(u, n))
        for _char in "a_ \n":
            if _opener.automaton.scan().feed(_opener.literal + _char * 64)[0] == MORE:
                CASES.setdefault(f"{_opener.literal!r} held by {_char!r}",
                                 lambda n, u=_opener.literal, c=_char: u + c * n)
                break


def readers_of(text: str) -> list[str]:
    found = [marker.formats[0] for marker in find_call_markers(text)]
    return list(dict.fromkeys(found)) or ["hermes"]


def best_time(function, text: str, runs: int = 3) -> float:
    """Best of up to runs timings; stops early when one run settles the question."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        function(text)
        best = min(best, time.perf_counter() - started)
        if best <= BUDGET or best > 5 * BUDGET:
            break  # under budget, or too far over for CPU contention to explain
    return best


# Sizes tried in turn; the first one over budget fails the test, so a
# quadratic or cubic case costs about a second, not the minutes its
# 100 KB run would take.
LADDER = (1_000, 3_000, 10_000, 30_000, SIZE)


def within_budget(function, build) -> None:
    timings = []
    for size in LADDER:
        seconds = best_time(function, build(size))
        timings.append(f"{size // 1000} KB: {seconds * 1000:.1f} ms")
        assert seconds <= BUDGET, "over the 100 ms budget: " + ", ".join(timings)


def whole(name: str):
    def run(text: str) -> None:
        try:
            read_events(text, FORMATS[name])
        except UnparsedToolCall:
            pass  # a refusal is the documented outcome; only the time matters here

    return run


def stream_through(name: str, chunk: int):
    def run(text: str) -> None:
        stream = ToolCallStream(name)
        try:
            for start in range(0, len(text), chunk):
                stream.feed(text[start : start + chunk])
            stream.close()
        except UnparsedToolCall:
            pass

    return run


RUNS = [(case, name) for case, build in CASES.items() for name in readers_of(build(1_000))]


@pytest.mark.parametrize(("case", "name"), RUNS, ids=[f"{c} | {n}" for c, n in RUNS])
def test_the_reader_is_fast(case, name):
    within_budget(whole(name), CASES[case])


@pytest.mark.parametrize("case", CASES)
def test_find_call_markers_is_fast(case):
    within_budget(find_call_markers, CASES[case])


@pytest.mark.parametrize("chunk", [SIZE * 2, 256], ids=["one chunk", "256-char chunks"])
@pytest.mark.parametrize(("case", "name"), RUNS, ids=[f"{c} | {n}" for c, n in RUNS])
def test_the_stream_is_fast(case, name, chunk):
    within_budget(stream_through(name, chunk), CASES[case])
