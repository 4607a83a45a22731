"""Show package code inside the course notebooks.

The package is the one definition of every function. A notebook that
introduces a function calls ``show_source(fn)``: the reader sees the real
code, highlighted, and the output is stored in the notebook, where nbval and
``tests/test_notebook_sync.py`` compare it with the package on every run.
"""

from __future__ import annotations

import inspect


class SourceView:
    """Source text that renders as a highlighted code block in JupyterLab."""

    def __init__(self, source: str) -> None:
        self.source = source

    def __repr__(self) -> str:
        # Jupyter stores a repr without its final newline; match it exactly.
        return self.source.rstrip("\n")

    def _repr_markdown_(self) -> str:
        return f"```python\n{self.source}```"


def show_source(*objects: object) -> SourceView:
    """The exact source of one or more package objects, in definition order."""
    return SourceView("\n\n".join(inspect.getsource(obj).rstrip("\n") + "\n" for obj in objects))
