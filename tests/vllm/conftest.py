"""tests/vllm runs in vLLM's own virtual environment, as its own pytest run.

``make vllm-test`` builds ``.venv-vllm`` (``make vllm``) and runs these
files with its interpreter and ``TEMPLATESTUDIO_VLLM_TESTS=1``. The main
suite (``make test``, the project's ``.venv``, no vLLM) skips collecting
this folder; a run that asked for these tests where vLLM cannot be imported
stops with an error instead of skipping, so CI cannot pass without them.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

REQUESTED = os.environ.get("TEMPLATESTUDIO_VLLM_TESTS") == "1"
_spec = importlib.util.find_spec("vllm")
# This folder is on sys.path's parent and has no __init__.py, so without vLLM
# installed "vllm" still resolves, to it, as a namespace package (no origin).
VLLM_FOUND = _spec is not None and _spec.origin is not None

if not REQUESTED:
    # The main suite: these need vLLM's environment and run as their own stage.
    collect_ignore_glob = ["test_*.py"]
elif not VLLM_FOUND:
    raise pytest.UsageError(
        f"TEMPLATESTUDIO_VLLM_TESTS=1 but vLLM cannot be imported by {sys.executable}: "
        "run `make vllm-test`, which builds .venv-vllm (make vllm) and runs these tests with it"
    )


@pytest.fixture(scope="session")
def trained_standin(tmp_path_factory, pytestconfig):
    """trained_standin(family) -> standins.Trained, trained once per session."""
    from server import report
    from standins import train

    trained = {}

    def get(family):
        if family.name not in trained:
            folder = tmp_path_factory.mktemp(family.name.replace(".", ""))
            trained[family.name] = result = train(family, folder / "model")
            report(pytestconfig, f"{family.name}: stand-in trained in {result.seconds:.1f} s ({result.steps} steps)")
        return trained[family.name]

    return get


@pytest.fixture(autouse=True)
def _plugin_log_reaches_caplog(request):
    """caplog sees the plugin's log lines whatever vLLM's logging set-up did before.

    vLLM's logging configuration stops records of its "vllm" logger at its
    own handler (``propagate`` False), so the plugin's "vllm.templatestudio"
    lines reached caplog's root handler only where no earlier import had
    configured it (a test passed alone and failed after another file).
    The handler is put on the plugin's logger itself, which propagates no
    further meanwhile, so a line is captured once.
    """
    if "caplog" not in request.fixturenames:
        yield
        return
    handler = request.getfixturevalue("caplog").handler
    plugin_logger = logging.getLogger("vllm.templatestudio")
    propagates = plugin_logger.propagate
    plugin_logger.addHandler(handler)
    plugin_logger.propagate = False
    try:
        yield
    finally:
        plugin_logger.removeHandler(handler)
        plugin_logger.propagate = propagates
