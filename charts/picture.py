"""What every picture of the course shares: its two forms and the lettering of its SVG.

A picture gives ``text()`` (aligned text: what nbval compares and a terminal
prints) and ``svg()`` (a standalone SVG document: what JupyterLab shows);
``Picture`` turns them into the hooks Python and IPython call.
"""

from __future__ import annotations

__all__ = ["CHAR_W", "FONT", "Picture"]

CHAR_W = 7.0  # an approximate width of one character at FONT's size, for laying out labels
FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif' font-size='12'"


class Picture:
    """A picture shown as SVG in JupyterLab and as its text everywhere else."""

    def text(self) -> str:
        raise NotImplementedError

    def svg(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython's text/plain
        printer.text(self.text())

    def _repr_svg_(self) -> str:
        return self.svg()
