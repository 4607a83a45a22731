"""Whether a test may run without the template corpus: skip locally, fail in CI.

A module of its own, not conftest.py: tests import it by name, and with the
notebooks' conftest.py also on the path, "conftest" can mean either file.
"""

from __future__ import annotations

import os

import pytest

from templatestudio.corpus import corpus_available, missing_message


def corpus_is_required() -> bool:
    """Whether this run must have the corpus: CI sets CI=true."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_corpus() -> None:
    """Return when the corpus is there; otherwise skip the test, or fail it in CI."""
    if corpus_available():
        return
    if corpus_is_required():
        pytest.fail(f"{missing_message()}; CI=true, so a missing corpus fails the run", pytrace=False)
    pytest.skip(missing_message())
