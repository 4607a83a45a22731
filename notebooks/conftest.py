"""Notebook 13 under nbval gets the trained stand-in when no model is named.

The hook lives in tests/standin.py and tests/conftest.py registers it too;
this file covers runs that collect only notebooks/. When both conftests are
loaded the second call finds the variable already set and does nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    from standin import point_live_model_at_standin

    point_live_model_at_standin(config, items)


def pytest_unconfigure(config):
    from standin import remove_trained_standins

    remove_trained_standins()
