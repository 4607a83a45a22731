"""A heatmap of counts: labelled rows and columns, the count written in each cell.

``Heatmap(counts, rows=..., columns=...)`` holds a count per (row, column)
pair; ``Heatmap.of_pairs(pairs)`` counts the pairs for you. In JupyterLab the
object shows as SVG (``_repr_svg_``): one square per cell, darker for larger
counts, the count written inside, and a legend for the colour scale. Its text
form (``str`` and ``repr``, what nbval compares and a terminal prints) is the
same grid as aligned columns, with ``·`` for zero.

The colour of a cell is its count divided by the largest count in the map, or,
when ``row_totals`` is given, by its row's total (a share: "3 of this format's
4 samples"); the row's total is then written at the end of the row.

Not handled: negative counts (drawn as zero), and labels long enough to need
wrapping (they are drawn on one line; the picture widens to fit them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from html import escape

from charts.picture import CHAR_W, FONT, Picture

__all__ = ["Heatmap"]

# Light to dark blue; a share is placed on this ramp by linear interpolation.
_RAMP = ((0xF4, 0xF7, 0xFB), (0x9E, 0xC5, 0xE2), (0x21, 0x71, 0xB5), (0x08, 0x30, 0x6B))
_ZERO_FILL = "#fafafa"
_CELL_W, _CELL_H = 40, 22


def _colour(share: float) -> str:
    share = min(max(share, 0.0), 1.0)
    position = share * (len(_RAMP) - 1)
    low = min(int(position), len(_RAMP) - 2)
    t = position - low
    rgb = (round(a + (b - a) * t) for a, b in zip(_RAMP[low], _RAMP[low + 1]))
    return "#" + "".join(f"{c:02x}" for c in rgb)


class Heatmap(Picture):
    """Counts over rows × columns, shown as SVG in a notebook and as a text grid elsewhere."""

    def __init__(
        self,
        counts: Mapping[tuple[str, str], int],
        *,
        rows: Sequence[str] | None = None,
        columns: Sequence[str] | None = None,
        title: str = "",
        row_title: str = "",
        column_title: str = "",
        row_totals: Mapping[str, int] | None = None,
    ):
        self.counts = {key: max(0, int(value)) for key, value in counts.items()}
        self.rows = list(rows) if rows is not None else sorted({row for row, _ in self.counts})
        self.columns = list(columns) if columns is not None else sorted({column for _, column in self.counts})
        self.title = title
        self.row_title = row_title
        self.column_title = column_title
        self.row_totals = dict(row_totals) if row_totals is not None else None

    @classmethod
    def of_pairs(cls, pairs: Iterable[tuple[str, str]], **options) -> Heatmap:
        """A heatmap counting each (row, column) pair in pairs."""
        return cls(Counter(pairs), **options)

    def count(self, row: str, column: str) -> int:
        return self.counts.get((row, column), 0)

    def share(self, row: str, column: str) -> float:
        """Where the cell sits on the colour scale, from 0 to 1."""
        if self.row_totals is not None:
            total = self.row_totals.get(row, 0)
        else:
            total = max(self.counts.values(), default=0)
        return self.count(row, column) / total if total else 0.0

    # The text form ------------------------------------------------------------------------

    def text(self) -> str:
        """The grid as aligned text: a header of column labels, a line per row, · for zero."""
        label_width = max([len(self.row_title), *(len(row) for row in self.rows)], default=0)
        widths = [max(len(column), *(len(str(self.count(row, column))) for row in self.rows), 1)
                  for column in self.columns]
        lines = []
        if self.title:
            lines.append(self.title)
        if self.column_title:
            lines.append(f"{'':<{label_width}}  {self.column_title} →")
        header = f"{self.row_title:<{label_width}}  " + "  ".join(
            column.rjust(width) for column, width in zip(self.columns, widths))
        if self.row_totals is not None:
            header += "  of"
        lines.append(header.rstrip())
        for row in self.rows:
            cells = "  ".join((str(self.count(row, column)) if self.count(row, column) else "·").rjust(width)
                              for column, width in zip(self.columns, widths))
            line = f"{row:<{label_width}}  {cells}"
            if self.row_totals is not None:
                line += f"  {self.row_totals.get(row, 0):>2}"
            lines.append(line.rstrip())
        return "\n".join(lines)

    # The picture --------------------------------------------------------------------------

    def svg(self) -> str:
        """The heatmap as a standalone SVG document (a string)."""
        left = 12 + CHAR_W * max([len(self.row_title), *(len(row) for row in self.rows)], default=4)
        longest_column = max((len(column) for column in self.columns), default=1)
        # Column labels are written at -45°: their height is about 0.71 × their length.
        label_height = 0.71 * CHAR_W * longest_column + 10
        top = 8 + (22 if self.title else 0) + (18 if self.column_title else 0) + label_height
        grid_w = _CELL_W * len(self.columns)
        grid_h = _CELL_H * len(self.rows)
        totals_w = 44 if self.row_totals is not None else 0
        width = left + grid_w + totals_w + 0.71 * CHAR_W * len(self.columns[-1] if self.columns else "") + 16
        width = max(width, left + grid_w + totals_w + 20, left + 180 + CHAR_W * len(self._legend_words()[2]))
        legend_top = top + grid_h + 18
        height = legend_top + 44

        parts = [
            f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {width:.0f} {height:.0f}' {FONT}>",
            "<rect width='100%' height='100%' fill='white'/>",
        ]
        y = 8
        if self.title:
            parts.append(f"<text x='8' y='{y + 14}' font-size='14' font-weight='bold'>{escape(self.title)}</text>")
            y += 22
        if self.column_title:
            parts.append(f"<text x='{left:.0f}' y='{y + 13}' fill='#444'>{escape(self.column_title)} →</text>")
        if self.row_title:
            parts.append(f"<text x='{left - 8:.0f}' y='{top - 6:.0f}' text-anchor='end' fill='#444'>"
                         f"{escape(self.row_title)} ↓</text>")
        for j, column in enumerate(self.columns):
            x = left + j * _CELL_W + _CELL_W / 2
            parts.append(f"<text transform='translate({x:.1f},{top - 6:.1f}) rotate(-45)'>{escape(column)}</text>")
        if self.row_totals is not None:
            x = left + grid_w + 8
            parts.append(f"<text x='{x:.0f}' y='{top - 6:.0f}' fill='#444'>of</text>")
        for i, row in enumerate(self.rows):
            y0 = top + i * _CELL_H
            parts.append(f"<text x='{left - 8:.0f}' y='{y0 + 15:.0f}' text-anchor='end'>{escape(row)}</text>")
            for j, column in enumerate(self.columns):
                x0 = left + j * _CELL_W
                count, share = self.count(row, column), self.share(row, column)
                fill = _colour(share) if count else _ZERO_FILL
                ink = "white" if share > 0.5 else ("#bbb" if not count else "black")
                parts.append(f"<rect x='{x0:.0f}' y='{y0:.0f}' width='{_CELL_W}' height='{_CELL_H}' "
                             f"fill='{fill}' stroke='white'><title>{escape(row)} × {escape(column)}: {count}</title></rect>")
                parts.append(f"<text x='{x0 + _CELL_W / 2:.0f}' y='{y0 + 15:.0f}' text-anchor='middle' "
                             f"fill='{ink}'>{count}</text>")
            if self.row_totals is not None:
                parts.append(f"<text x='{left + grid_w + 8:.0f}' y='{y0 + 15:.0f}' fill='#444'>"
                             f"{self.row_totals.get(row, 0)}</text>")
        parts.append(f"<rect x='{left:.0f}' y='{top:.0f}' width='{grid_w}' height='{grid_h}' "
                     f"fill='none' stroke='#ccc'/>")
        parts.extend(self._legend(left, legend_top))
        parts.append("</svg>")
        return "\n".join(parts)

    def _legend_words(self) -> tuple[str, str, str]:
        if self.row_totals is not None:
            return "0%", "100%", "colour: the count's share of its row's total"
        return "0", str(max(self.counts.values(), default=0)), "colour: the count written in the cell"

    def _legend(self, left: float, top: float) -> list[str]:
        stops = "".join(f"<stop offset='{k / 10:.1f}' stop-color='{_colour(k / 10)}'/>" for k in range(11))
        low, high, what = self._legend_words()
        return [
            f"<defs><linearGradient id='heatmap-ramp'>{stops}</linearGradient></defs>",
            f"<rect x='{left:.0f}' y='{top:.0f}' width='160' height='12' fill='url(#heatmap-ramp)' stroke='#ccc'/>",
            f"<text x='{left:.0f}' y='{top + 26:.0f}' fill='#444'>{low}</text>",
            f"<text x='{left + 160:.0f}' y='{top + 26:.0f}' text-anchor='end' fill='#444'>{high}</text>",
            f"<text x='{left + 172:.0f}' y='{top + 11:.0f}' fill='#444'>{escape(what)}</text>",
        ]
