"""The literals around a format's calls in ``wire.shape``'s language: ``Call``, ``Section``, ``Reasoning``.

Each is a frozen declaration of literals (and the layout the writer puts
beside them); ``wire.shape`` re-exports them, with ``ShapeError``, which a
declaration that says something impossible raises: a format module
imports them from there, as it does the name and argument parts
(``wire.arguments``). What the literals mean to a reader and a writer is
``wire.shape.WireShape``'s business.

Only ``Reasoning`` checks itself (its pairs); what involves several parts
is checked by ``WireShape``.
"""

from __future__ import annotations

from dataclasses import dataclass


class ShapeError(ValueError):
    """A declaration that says something impossible, or is asked for what it declares hand-written."""


@dataclass(frozen=True)
class Reasoning:
    """The reasoning block: text between open and close, shown apart from the content.

    also: other (open, close) pairs a block may be written with, read and
    never written (Magistral 2506 writes plain-text ``<think>…</think>``
    where later Mistral models write ``[THINK]…[/THINK]``); a block opened
    with one pair ends only at that pair's closer. ends_at_call: a block the
    reply never closes ends where a whole call opening of the format stands
    at a line start inside it (Qwen3.5 starts ``<tool_call>`` inside the
    ``<think>`` its prompt opened); a block that is closed is all reasoning,
    a call rehearsed in it included (``templatestudio.reasoning_blocks``).
    skipped_by: literals that, as the first characters of a reply whose
    prompt opened the block, say the model skipped it (Kimi K3 answering
    straight in its response element): the block is empty and the reply
    is read from there on as after a block.
    """

    open: str
    close: str
    also: tuple[tuple[str, str], ...] = ()
    ends_at_call: bool = False
    skipped_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        pairs = self.pairs
        if not all(len(pair) == 2 and all(isinstance(item, str) and item for item in pair) for pair in pairs):
            raise ShapeError(f"every reasoning pair is an opener and a closer, both non-empty: {pairs!r}")
        openers = [opener for opener, _ in pairs]
        for index, opener in enumerate(openers):
            for other in openers[index + 1 :]:
                if opener.startswith(other) or other.startswith(opener):
                    raise ShapeError(f"the reasoning openers {opener!r} and {other!r} start alike: "
                                     "which block opens would depend on the text after them")

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """Every (open, close) pair a block may be written with, the written one first."""
        return ((self.open, self.close), *self.also)


@dataclass(frozen=True)
class Section:
    """Literals around all the calls of one turn (DeepSeek's, Kimi's, MiniMax's section).

    alone: a call may also open without the section around it (the reader
    accepts it; the writer always writes the section).
    """

    open: str
    close: str
    head: str = ""  # what the writer puts after open (layout)
    tail: str = ""  # what the writer puts before close (layout)
    alone: bool = False


@dataclass(frozen=True)
class Call:
    """Literals around one call.

    open: the literal that opens a call ("" for a bare JSON value); close:
    the literal that ends it ("" when the body's own bracket ends it).
    head/tail: what the writer puts between open and the body and between
    the body and close; its non-blank parts are literals the reader requires
    (InternLM2's ``<|plugin|>``), its whitespace is layout the reader allows
    in any amount. also_opens: other literals a call may open with, read and
    never written (GigaChat 3's call turn). marker: the literal a reader
    looks for when it is not open (firefunction's ``functools[`` reaches
    into the body's bracket). refused: literals that, right after open,
    open a region the reader refuses, each with the reason (InternLM2's
    code-interpreter action, a list where one object belongs).
    """

    open: str = ""
    close: str = ""
    head: str = ""
    tail: str = ""
    also_opens: tuple[str, ...] = ()
    marker: str | None = None
    refused: tuple[tuple[str, str], ...] = ()
    cut_after: int | None = None  # as ``Opener.cut_after``, for the derived opener
    cut_at_line: int | None = None  # as ``Opener.cut_at_line``: the same, for an opening at a line start
    # A reply that ends once the name has closed and the JSON body has begun was cut in a call,
    # whatever cut_after says (``Opener.cut_from``; a closed name's shapes only).
    cut_in_body: bool = False
