"""Recall and false-positive rate of the leak check, next to the course's looks_like_tool_call.

Recall: every registered format's sample replies that hold calls
(``Format.samples``) read by every other format's reader; a pair counts as
caught when that reader raises ``UnparsedToolCall`` (a call marker it did not
consume) instead of returning the reply as text. The course's
``looks_like_tool_call`` counts as catching a pair when that reader reads no
call and the text looks like a call to it.
False positives: the ordinary answers in tests/fixtures/prose_answers.json
that get any marker at all (``leaks.find_call_markers``). Answers that quote
a complete call in a model's own syntax are counted apart: no detector can
tell them from a leak. The held-out answers (tests/fixtures/prose_holdout.json)
were written apart from the rules and are only scored, never tuned against.

Run: python bench/leak_rates.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from templatestudio.calls import UnparsedToolCall  # noqa: E402
from templatestudio.engine import read_events  # noqa: E402
from templatestudio.events import ToolCallEvent  # noqa: E402
from templatestudio.formats import FORMATS  # noqa: E402
from templatestudio.leaks import find_call_markers  # noqa: E402
from templatestudio.tools import looks_like_tool_call  # noqa: E402

PROSE = ROOT / "tests" / "fixtures" / "prose_answers.json"
# Written apart from the marker rules and never tuned against: only scored.
HOLDOUT = ROOT / "tests" / "fixtures" / "prose_holdout.json"


def rate(hits: int, total: int) -> str:
    return f"{hits}/{total} = {100 * hits / total:.1f}%"


def read_by(text: str, fmt) -> str:
    """"caught" (the reader raised), "read" (it found calls) or "text" (it found none)."""
    try:
        events = read_events(text, fmt)
    except UnparsedToolCall:
        return "caught"
    return "read" if any(isinstance(event, ToolCallEvent) for event in events) else "text"


def main() -> None:
    samples = [(fmt.name, sample.text) for fmt in FORMATS.values() for sample in fmt.samples if sample.calls]
    pairs = [(text, reader) for written, text in samples for reader in FORMATS.values() if reader.name != written]
    outcomes = [(read_by(text, reader), text) for text, reader in pairs]
    caught = sum(outcome == "caught" for outcome, _ in outcomes)
    # The course's check flags a pair when the mismatched reader reads no call and the text looks like one.
    course = sum(outcome != "read" and looks_like_tool_call(text) for outcome, text in outcomes)
    answers = json.loads(PROSE.read_text(encoding="utf-8"))["answers"]
    ordinary = [a["text"] for a in answers if a["topic"] != "quotes-call-syntax"]
    quoted = [a["text"] for a in answers if a["topic"] == "quotes-call-syntax"]
    print(f"recall ({len(samples)} samples x {len(FORMATS) - 1} mismatched readers)")
    print(f"  the readers' leak check: {rate(caught, len(pairs))}")
    print(f"  looks_like_tool_call:    {rate(course, len(pairs))}")
    print(f"false positives ({len(ordinary)} ordinary answers)")
    print(f"  find_call_markers:       {rate(sum(bool(find_call_markers(t)) for t in ordinary), len(ordinary))}")
    print(f"  looks_like_tool_call:    {rate(sum(looks_like_tool_call(t) for t in ordinary), len(ordinary))}")
    held_out = [a["text"] for a in json.loads(HOLDOUT.read_text(encoding="utf-8"))["answers"]]
    print(f"false positives, held out ({len(held_out)} answers written apart from the rules)")
    print(f"  find_call_markers:       {rate(sum(bool(find_call_markers(t)) for t in held_out), len(held_out))}")
    print(f"  looks_like_tool_call:    {rate(sum(looks_like_tool_call(t) for t in held_out), len(held_out))}")
    print(f"answers quoting a whole call in a model's syntax ({len(quoted)}, flagged by design)")
    print(f"  find_call_markers:       {rate(sum(bool(find_call_markers(t)) for t in quoted), len(quoted))}")
    print(f"  looks_like_tool_call:    {rate(sum(looks_like_tool_call(t) for t in quoted), len(quoted))}")


if __name__ == "__main__":
    main()
