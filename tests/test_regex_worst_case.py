"""No parser, marker search or stream may take superlinear time on crafted input.

Each case is 100 KB of text built to hurt a scanner: the same opener
repeated (every one a fresh place to start a match), strings that never
close, long runs of whitespace or name characters after an opener (where a
regex with two adjacent ``\\s*``-like pieces backtracks quadratically), and
openers followed by one closer at the very end. Every parser's ``scan``,
``find_call_markers`` and ``ToolCallStream`` (the whole text as one chunk,
and in 256-character chunks so re-scanning held text shows) must finish
each case within 100 ms.

Timing is the best of three runs, so a busy machine does not fail the
test. Smaller versions of the case (1, 3, 10, 30 KB) run first: the first
one over budget fails the test with the timings so far, so a quadratic case
fails in about a second instead of running for minutes at 100 KB.
"""

from __future__ import annotations

import time

import pytest

from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers
from templatestudio.stream import ToolCallStream
from templatestudio.tools import UnparsedToolCall

BUDGET = 0.100  # seconds, for the 100 KB input
SIZE = 100_000


def repeated(unit: str, size: int, tail: str = "") -> str:
    return unit * (size // len(unit)) + tail


# name -> (format the case aims at, builder of a text of about `size` characters)
CASES = {
    "hermes openers": ("hermes", lambda n: repeated("<tool_call>", n)),
    "hermes openers then one closer": ("hermes", lambda n: repeated("<tool_call>", n, "</tool_call>")),
    "hermes unterminated string": ("hermes", lambda n: '<tool_call>{"name": "' + "a" * n),
    "hermes whitespace after opener": ("hermes", lambda n: "<tool_call>" + " " * n),
    "hermes deep brackets": ("hermes", lambda n: '<tool_call>{"name": "f", "arguments": ' + "[" * n),
    "qwen-xml parameters then one closer": (
        "qwen-xml",
        lambda n: repeated("<tool_call><function=f><parameter=a>", n, "</tool_call>"),
    ),
    "qwen-xml long function name": ("qwen-xml", lambda n: "<tool_call><function=" + "a" * n),
    "fenced openers": ("fenced-json", lambda n: repeated("```json", n)),
    "fenced whitespace after opener": ("fenced-json", lambda n: "```json" + " " * n + "x"),
    "gemma4 openers": ("gemma4", lambda n: repeated("<|tool_call>call:", n)),
    "gemma4 unterminated strings": ("gemma4", lambda n: repeated('<|tool_call>call:f{a:<|"|>', n)),
    "gemma4 long name": ("gemma4", lambda n: "<|tool_call>call:" + "a" * n),
    "mistral openers": ("mistral", lambda n: repeated("[TOOL_CALLS]", n)),
    "mistral long name": ("mistral", lambda n: "[TOOL_CALLS]" + "a" * n),
    "mistral openers with names": ("mistral", lambda n: repeated("[TOOL_CALLS]a", n)),
    "llama3 unterminated name": ("llama3-json", lambda n: '{"name": "' + "a" * n),
    "llama3 whitespace after python_tag": ("llama3-json", lambda n: "<|python_tag|>" + " " * n + "x"),
    "llama3 whitespace after brace": ("llama3-json", lambda n: "{" + " " * n),
    "pythonic unterminated string": ("pythonic", lambda n: "[f(a='" + "a" * n),
    "pythonic openers": ("pythonic", lambda n: repeated("[f(", n)),
    "think never closed": ("hermes", lambda n: "<think>" + "a" * n),
}


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


def stream_through(fmt: str, chunk: int):
    def run(text: str) -> None:
        stream = ToolCallStream(fmt)
        try:
            for start in range(0, len(text), chunk):
                stream.feed(text[start : start + chunk])
            stream.close()
        except UnparsedToolCall:
            pass  # a truncated call is the documented outcome; only the time matters here

    return run


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMATS)
@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_parser_scan_is_fast(case, fmt):
    within_budget(FORMATS[fmt].parser.scan, CASES[case][1])


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_find_call_markers_is_fast(case):
    within_budget(find_call_markers, CASES[case][1])


@pytest.mark.parametrize("chunk", [SIZE * 2, 256], ids=["one chunk", "256-char chunks"])
@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_stream_is_fast(case, chunk):
    within_budget(stream_through(CASES[case][0], chunk), CASES[case][1])
