"""Print pip constraints that pin each of the package's dependencies at its lower bound.

pyproject.toml declares ranges (``transformers>=5.19,<6``); the vLLM
environment is built with these constraints, so the lower bounds are the
versions its tests run on and a bound that stops working fails there
(tests/vllm/test_installed_package.py). Only the base dependencies: the
extras are the course's tools, locked in constraints/course.txt.

Runs on the system Python (3.11+, tomllib) before any environment exists.
Not handled: a dependency without a ``>=`` bound is an error, not a guess.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
LOWER = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*[^;]*?>=\s*([0-9][^,;\s]*)")


def lower_bounds(pyproject: Path = PYPROJECT) -> dict[str, str]:
    """Each base dependency's name -> the version after its ``>=``."""
    declared = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    bounds = {}
    for requirement in declared:
        found = LOWER.match(requirement)
        if found is None:
            raise ValueError(f"dependency {requirement!r} declares no lower bound (>=) to test")
        bounds[found.group(1)] = found.group(2)
    return bounds


def main() -> int:
    for name, version in lower_bounds().items():
        print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
