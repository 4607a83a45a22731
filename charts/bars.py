"""Stacked horizontal bars of counts, grouped: one bar per series inside each group.

``StackedBars(groups, parts)``: groups is a list of ``(group label, [(series
label, {part key: count}), ...])``; parts is a list of ``(part key, legend
label, colour)`` in the order the bar stacks them. Every bar is drawn to the
same scale within its group (the group's largest total is the full width,
so two bars of one group compare by length), with the first part's count
and the bar's total written after it ("463/469"). In JupyterLab the object shows as SVG with a legend; its text
form (``str``/``repr``, what nbval compares) is one line per bar with every
part's count, named by its key.

Not handled: parts a bar's counts lack (counted as zero) and counts that are
not whole numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from charts.picture import CHAR_W, FONT, Picture

__all__ = ["StackedBars"]

_BAR_W, _BAR_H, _GAP = 360, 14, 4


class StackedBars(Picture):
    """Grouped stacked bars: SVG in a notebook, one text line per bar elsewhere."""

    def __init__(
        self,
        groups: Sequence[tuple[str, Sequence[tuple[str, Mapping[str, int]]]]],
        parts: Sequence[tuple[str, str, str]],
        *,
        title: str = "",
        note: str = "",
    ):
        self.groups = [(group, [(series, dict(counts)) for series, counts in bars]) for group, bars in groups]
        self.parts = list(parts)
        self.title = title
        self.note = note

    def _scale(self, bars) -> int:
        """The largest total among one group's bars: the full bar width."""
        return max((sum(counts.get(key, 0) for key, _, _ in self.parts) for _, counts in bars), default=1) or 1

    # The text form ------------------------------------------------------------------------

    def text(self) -> str:
        group_w = max((len(group) for group, _ in self.groups), default=0)
        series_w = max((len(series) for _, bars in self.groups for series, _ in bars), default=0)
        lines = [self.title] if self.title else []
        for group, bars in self.groups:
            for k, (series, counts) in enumerate(bars):
                total = sum(counts.get(key, 0) for key, _, _ in self.parts)
                shares = "  ".join(f"{key} {counts.get(key, 0)}" for key, _, _ in self.parts)
                first = counts.get(self.parts[0][0], 0)
                lines.append(f"{group if k == 0 else '':<{group_w}}  {series:<{series_w}}  "
                             f"{first:>3}/{total:<3}  {shares}")
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)

    # The picture --------------------------------------------------------------------------

    def svg(self) -> str:
        group_w = 8.0 * max((len(group) for group, _ in self.groups), default=0) + 12  # bold is wider
        series_w = CHAR_W * max((len(series) for _, bars in self.groups for series, _ in bars), default=0) + 12
        left = 8 + group_w + series_w
        y = 8
        body = []
        if self.title:
            body.append(f"<text x='8' y='{y + 14}' font-size='14' font-weight='bold'>{escape(self.title)}</text>")
            y += 24
        # the legend, one swatch per part
        x = 8.0
        for _, label, colour in self.parts:
            body.append(f"<rect x='{x:.0f}' y='{y}' width='12' height='12' fill='{colour}'/>")
            body.append(f"<text x='{x + 16:.0f}' y='{y + 11}'>{escape(label)}</text>")
            x += 16 + CHAR_W * len(label) + 18
        y += 24
        for group, bars in self.groups:
            body.append(f"<text x='8' y='{y + 11}' font-weight='bold'>{escape(group)}</text>")
            scale = self._scale(bars)
            for series, counts in bars:
                body.append(f"<text x='{8 + group_w:.0f}' y='{y + 11}' fill='#444'>{escape(series)}</text>")
                x = left
                total = 0
                for key, label, colour in self.parts:
                    count = counts.get(key, 0)
                    total += count
                    if not count:
                        continue
                    w = _BAR_W * count / scale
                    body.append(f"<rect x='{x:.1f}' y='{y}' width='{w:.1f}' height='{_BAR_H}' fill='{colour}'>"
                                f"<title>{escape(group)} {escape(series)}: {escape(label)} {count}</title></rect>")
                    x += w
                first = counts.get(self.parts[0][0], 0)
                body.append(f"<text x='{x + 6:.1f}' y='{y + 11}'>{first}/{total}</text>")
                y += _BAR_H + _GAP
            y += 8
        if self.note:
            body.append(f"<text x='8' y='{y + 10}' fill='#444'>{escape(self.note)}</text>")
            y += 18
        width = max(left + _BAR_W + 70, 16 + CHAR_W * len(self.note), 300)
        height = y + 6
        return "\n".join([
            f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {width:.0f} {height:.0f}' {FONT}>",
            "<rect width='100%' height='100%' fill='white'/>",
            *body,
            "</svg>",
        ])
