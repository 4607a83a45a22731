"""Whether a test may run without the template corpus: skip locally, fail once in CI.

A module of its own, not conftest.py: tests import it by name, and with the
notebooks' conftest.py also on the path, "conftest" can mean either file.

Without the corpus, every test that reads it skips with the one line
``missing_message()`` on a developer's machine. In CI (CI=true) the run must
fail, but once: one test, the reporter, fails with that line, and every other
corpus test skips and names the reporter. tests/conftest.py picks the reporter
at collection (``choose_reporter``) and runs ``require_corpus`` before a
corpus test's fixtures, so a module fixture that scans the corpus never runs
to raise ``CorpusMissing`` in its place. A test that calls ``require_corpus``
in its body, collected in a run with no other corpus test, becomes the
reporter itself.

Not handled: notebooks under nbval (they print ``missing_message()`` in a cell
and then differ from their stored outputs), and pytest-xdist, whose workers
would each pick a reporter of their own.
"""

from __future__ import annotations

import os

import pytest

from templatestudio.corpus import corpus_available, missing_message

# The test that fails the run for a missing corpus in CI; the others skip, naming it.
_reporter: str | None = None


def corpus_is_required() -> bool:
    """Whether this run must have the corpus: CI sets CI=true."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def choose_reporter(nodeid: str | None) -> None:
    """Name the test that fails for a missing corpus in CI (None: the first to ask)."""
    global _reporter
    _reporter = nodeid


def _current_test() -> str:
    # "tests/test_x.py::test_y (call)" while a test runs; empty outside one.
    return os.environ.get("PYTEST_CURRENT_TEST", "").rpartition(" (")[0]


def require_corpus(nodeid: str | None = None) -> None:
    """Return when the corpus is there; otherwise skip the test, or in CI fail it once.

    nodeid is the asking test's (default: the one running now). In CI the
    reporter fails with the missing corpus's line; every other test skips
    with that line and the reporter's id, so the run shows one failure.
    """
    if corpus_available():
        return
    if not corpus_is_required():
        pytest.skip(missing_message())
    here = nodeid or _current_test()
    if _reporter is None:
        choose_reporter(here)
    if here == _reporter:
        pytest.fail(f"{missing_message()}; CI=true, so a missing corpus fails the run", pytrace=False)
    pytest.skip(f"{missing_message()}; CI=true: the run fails once for it, at {_reporter}")
