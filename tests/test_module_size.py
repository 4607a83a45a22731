"""No module of the package is over 350 lines (issue 21: a small core, modules that each hold one job).

A module that grows past the limit is split by job, as ``engine`` into
``machine_state``, ``start_steps`` and ``call_steps``, or ``derive_text``
into the derivation's stages; the limit counts every line, docstrings
included, since they are part of what a reader reads.
"""

from __future__ import annotations

from pathlib import Path

import templatestudio

LIMIT = 350
PACKAGE = Path(templatestudio.__file__).resolve().parent


def test_no_module_is_over_the_limit():
    sizes = {str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
             for path in PACKAGE.rglob("*.py")}
    assert len(sizes) > 100  # the package, found
    assert {name: lines for name, lines in sizes.items() if lines > LIMIT} == {}
