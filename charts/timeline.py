"""A streamed reply as a timeline: chunk by chunk, what the user sees, what is held back, what came out.

``stream_timeline(stream, chunks, title)`` feeds ``chunks`` to a stream
(anything with ``feed(chunk) -> events``, ``close() -> events`` and an
``offset``, the reply offset of the first character not yet settled, as
``templatestudio.stream.ToolCallStream`` has) and records one row per chunk
plus one for the end of the reply. A ``Timeline`` shows itself as SVG in
JupyterLab (``_repr_svg_``) and as a fixed-width table everywhere else
(``repr``, which is also what nbval compares).

Columns: the chunk as it arrived; the screen, the text the user has been
shown so far (its last characters); the text held back, received but not
yet settled (a possible marker, or a call still open); the events the chunk
released. Whitespace a stream takes out around calls and reasoning blocks
(its layout) shows in neither the screen nor the held-back column.
Newlines print as ``⏎``. Not handled: very long replies (one row per chunk,
no scrolling or grouping) and streams without ``offset``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

from charts.picture import Picture

__all__ = ["Row", "Timeline", "stream_timeline"]

NEWLINE = "⏎"
# Characters of each column the text form and the picture keep (the tail of the
# screen and of the held-back text, the head of a chunk and of the events).
CHUNK_WIDTH, SCREEN_WIDTH, HELD_WIDTH, EVENT_WIDTH = 14, 26, 30, 58


@dataclass(frozen=True)
class Row:
    """One chunk of the stream and what it changed."""

    label: str  # "3" for the fourth chunk, "end" for close()
    chunk: str
    screen: str  # every character of text shown to the user so far
    held: str  # received, not yet settled
    events: tuple[str, ...]  # the events this chunk released, described


def _visible(text: str) -> str:
    return text.replace("\n", NEWLINE)


def _head(text: str, width: int) -> str:
    text = _visible(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _tail(text: str, width: int) -> str:
    text = _visible(text)
    return text if len(text) <= width else "…" + text[-(width - 1):]


def _describe(event) -> str:
    kind = type(event).__name__
    if hasattr(event, "call"):
        return f"call {event.call.name}({', '.join(f'{k}={v!r}' for k, v in event.call.arguments.items())})"
    if kind == "TextDelta":
        return f"text {event.text!r}"
    if kind == "ReasoningDelta":
        return f"reasoning {event.text!r}"
    return kind


@dataclass(frozen=True, repr=False)  # repr is the text form (Picture)
class Timeline(Picture):
    """The rows of one streamed reply, drawn as a table (text) or a picture (SVG)."""

    title: str
    rows: tuple[Row, ...]

    def text(self) -> str:
        header = f"{'#':>4}  {'chunk':<{CHUNK_WIDTH}}  {'screen (shown so far)':<{SCREEN_WIDTH}}  " \
                 f"{'held back':<{HELD_WIDTH}}  events"
        lines = [self.title, header]
        for row in self.rows:
            lines.append(
                f"{row.label:>4}  {_head(row.chunk, CHUNK_WIDTH):<{CHUNK_WIDTH}}  "
                f"{_tail(row.screen, SCREEN_WIDTH):<{SCREEN_WIDTH}}  {_tail(row.held, HELD_WIDTH):<{HELD_WIDTH}}  "
                + "; ".join(_head(event, EVENT_WIDTH) for event in row.events)
            )
        return "\n".join(line.rstrip() for line in lines)

    def svg(self) -> str:
        row_height, char = 16, 6.7  # px per row; px per character of 11px monospace
        columns = [  # (x, heading, width in characters)
            (8, "#", 4),
            (44, "chunk", CHUNK_WIDTH),
            (150, "screen (shown so far)", SCREEN_WIDTH),
            (336, "held back", HELD_WIDTH),
            (546, "events", EVENT_WIDTH),
        ]
        width = 546 + EVENT_WIDTH * char + 12
        top = 46
        height = top + row_height * len(self.rows) + 34
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
            f'viewBox="0 0 {width:.0f} {height}" font-family="monospace" font-size="11">',
            '<rect width="100%" height="100%" fill="white"/>',
            f'<text x="8" y="16" font-size="13" font-weight="bold">{escape(self.title)}</text>',
        ]
        for x, heading, _ in columns:
            out.append(f'<text x="{x}" y="36" font-weight="bold" fill="#333">{escape(heading)}</text>')
        for index, row in enumerate(self.rows):
            y = top + index * row_height
            if index % 2:
                out.append(f'<rect x="0" y="{y}" width="{width:.0f}" height="{row_height}" fill="#f4f4f4"/>')
            baseline = y + 12
            if row.held:  # the held-back text shown on an amber band of its own width
                band = len(_tail(row.held, HELD_WIDTH)) * char + 4
                out.append(f'<rect x="334" y="{y + 2}" width="{band:.1f}" height="{row_height - 4}" '
                           f'fill="#f6d58e"/>')
            cells = [
                (row.label, "#666"),
                (_head(row.chunk, CHUNK_WIDTH), "#000"),
                (_tail(row.screen, SCREEN_WIDTH), "#1a7f37"),
                (_tail(row.held, HELD_WIDTH), "#8a5a00"),
                ("; ".join(_head(event, EVENT_WIDTH) for event in row.events), None),
            ]
            for (x, _, _), (text, colour) in zip(columns, cells):
                if colour is None:  # events: a call stands out from the deltas
                    colour = "#6f42c1" if text.startswith("call ") else "#555"
                out.append(f'<text x="{x}" y="{baseline}" fill="{colour}" xml:space="preserve">{escape(text)}</text>')
        legend = top + row_height * len(self.rows) + 20
        out.append(
            f'<text x="8" y="{legend}" fill="#555">green: on the user\'s screen · amber: held back '
            f'(its last characters) · purple: a whole call handed to the program · {NEWLINE}: a newline</text>'
        )
        out.append("</svg>")
        return "\n".join(out)


def stream_timeline(stream, chunks: Iterable[str], title: str) -> Timeline:
    """Feed chunks to stream, then close it; one row per chunk and one for the close."""
    received, screen, rows = "", "", []

    def row(label: str, chunk: str, events: list) -> Row:
        nonlocal screen
        screen += "".join(event.text for event in events if type(event).__name__ == "TextDelta")
        held = "" if label == "end" else received[stream.offset:]
        return Row(label, chunk, screen, held, tuple(_describe(event) for event in events))

    for index, chunk in enumerate(chunks):
        received += chunk
        rows.append(row(str(index), chunk, stream.feed(chunk)))
    rows.append(row("end", "", stream.close()))
    return Timeline(title, tuple(rows))
