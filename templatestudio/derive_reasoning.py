"""The reasoning pair a template writes around a reply's reasoning, read off its renders.

``reasoning_of`` finds the pair around the reasoning text in a plain
reply's render (``derive_renders.Renders.reasoning``);
``without_reasoning`` takes a reasoning block (or the closer of one the
prompt opened) off the front of a call turn, so that the call's shape is
derived (``derive_text``) and read back (``derive_trust``) without it.

Not handled: a pair closed by more than one literal piece, or opened by
anything but a tag or a bracketed token (``reasoning_of`` finds none);
which keys a reasoning text is written under (``derive_renders``).
"""

from __future__ import annotations

from templatestudio.derive_literals import SPACE, literal_pieces
from templatestudio.derive_renders import ANSWER_MARK, REASONING_MARK, Renders
from templatestudio.wire.shape import Reasoning

__all__ = ["reasoning_of", "without_reasoning"]


def reasoning_of(renders: Renders) -> Reasoning | None:
    """The reasoning pair around the reasoning text in a plain reply's render; None when there is none."""
    text = renders.reasoning
    if text is None:
        return None
    before = text[: text.index(REASONING_MARK)].rstrip(SPACE)
    between = text[text.index(REASONING_MARK) + len(REASONING_MARK) : text.index(ANSWER_MARK)].strip(SPACE)
    starts = [before.rfind(mark) for mark in "<[" if mark in before]
    closing = literal_pieces(between)
    if not starts or len(closing) != 1:
        return None
    opening = before[max(starts) :]
    if opening == closing[0]:
        return None
    # A prompt that opens the block, and a call turn written without closing it (Qwen3.5's, MiniMax's):
    # the model starts its calls inside the block, so a call opening at a line start ends it.
    opened = renders.prompt.rstrip(SPACE).endswith(opening) and closing[0] not in renders.one
    return Reasoning(opening, closing[0], ends_at_call=opened)


def without_reasoning(text: str, reasoning: Reasoning | None) -> str:
    """text without a reasoning block it opens with, or the closer of one its prompt opened.

    Qwen3's template writes an empty ``<think></think>`` before a past call,
    Qwen3.5's a lone ``</think>``: the reasoning split reads that, not the
    call's shape.
    """
    if reasoning is None:
        return text
    stripped = text.lstrip(SPACE)
    if stripped.startswith(reasoning.open) and reasoning.close in stripped:
        return stripped[stripped.index(reasoning.close) + len(reasoning.close) :]
    if stripped.startswith(reasoning.close):
        return stripped[len(reasoning.close) :]
    return text
