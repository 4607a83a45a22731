"""Recall and false-positive rate of the leak check, next to the course's looks_like_tool_call.

Recall: every format's sample replies (samples.FORMAT_SAMPLES) read by every
other format's parser; a pair counts as caught when a call marker is left
unconsumed, so parse_tool_calls would raise instead of returning no calls.
False positives: the ordinary answers in tests/fixtures/prose_answers.json
that get any marker at all. Answers that quote a complete call in a model's
own syntax are counted apart: no detector can tell them from a leak.

Run: python bench/leak_rates.py
"""

from __future__ import annotations

import json
from pathlib import Path

from samples import FORMAT_SAMPLES
from templatestudio.formats import FORMATS
from templatestudio.leaks import find_call_markers, unconsumed_markers
from templatestudio.tools import looks_like_tool_call

PROSE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "prose_answers.json"


def rate(hits: int, total: int) -> str:
    return f"{hits}/{total} = {100 * hits / total:.1f}%"


def main() -> None:
    pairs = [
        (text, FORMATS[reader])
        for written, texts in FORMAT_SAMPLES.items()
        for text in texts
        for reader in FORMATS
        if reader != written
    ]
    caught = sum(bool(unconsumed_markers(text, fmt.parser.scan(text))) for text, fmt in pairs)
    course = sum(not fmt.parser.parse(text) and looks_like_tool_call(text) for text, fmt in pairs)
    answers = json.loads(PROSE.read_text(encoding="utf-8"))["answers"]
    ordinary = [a["text"] for a in answers if a["topic"] != "quotes-call-syntax"]
    quoted = [a["text"] for a in answers if a["topic"] == "quotes-call-syntax"]
    samples = sum(len(texts) for texts in FORMAT_SAMPLES.values())
    print(f"recall ({samples} samples x {len(FORMATS) - 1} mismatched parsers)")
    print(f"  find_call_markers:    {rate(caught, len(pairs))}")
    print(f"  looks_like_tool_call: {rate(course, len(pairs))}")
    print(f"false positives ({len(ordinary)} ordinary answers)")
    print(f"  find_call_markers:    {rate(sum(bool(find_call_markers(t)) for t in ordinary), len(ordinary))}")
    print(f"  looks_like_tool_call: {rate(sum(looks_like_tool_call(t) for t in ordinary), len(ordinary))}")
    print(f"answers quoting a whole call in a model's syntax ({len(quoted)}, flagged by design)")
    print(f"  find_call_markers:    {rate(sum(bool(find_call_markers(t)) for t in quoted), len(quoted))}")
    print(f"  looks_like_tool_call: {rate(sum(looks_like_tool_call(t) for t in quoted), len(quoted))}")


if __name__ == "__main__":
    main()
