"""The tests' own statement of the layout rule, on the whole, merged list of events at once.

``templatestudio.layout.Layout`` takes the template's whitespace out of
events as they settle; this takes it out of a finished list, a different
way (a text between two structures is stripped on the sides that touch a
block or a call, every block on both sides), so one mistake cannot hide in
both. A test that knows the raw events a reply must give (every character
as text or reasoning) compares the reader's with ``laid_out(raw)``.
"""

from __future__ import annotations

from templatestudio.events import ReasoningDelta, TextDelta, merge_deltas

SPACE = " \t\n\r"


def laid_out(events, space: str = SPACE, *, blocks: bool = True):
    """events with the layout whitespace taken out, merged.

    blocks=False: only the sides of a text that touch a call are stripped,
    and reasoning stays as it is.
    """
    merged = merge_deltas(list(events))
    out = []
    for index, event in enumerate(merged):
        kind = type(event)
        if kind is ReasoningDelta:
            text = event.text.strip(space) if blocks else event.text
            if text:
                out.append(ReasoningDelta(text))
        elif kind is TextDelta:
            text = event.text
            before = merged[index - 1] if index > 0 else None
            after = merged[index + 1] if index < len(merged) - 1 else None
            if before is not None and (blocks or type(before) is not ReasoningDelta):
                text = text.lstrip(space)  # a block or a call comes before it
            if after is not None and (blocks or type(after) is not ReasoningDelta):
                text = text.rstrip(space)
            if text:
                out.append(TextDelta(text))
        else:
            out.append(event)
    return merge_deltas(out)  # an empty block between two texts leaves them side by side
