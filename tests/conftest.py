"""Shared fixtures: tokenizers from the Hugging Face cache, the template corpus.

Tests load tokenizers exactly as users do, with
``AutoTokenizer.from_pretrained(repo_id)``. CI and offline machines seed the
cache first (``make test`` does it from ``../shared/hub``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

from families import FAMILIES, GEMMA4  # noqa: E402

ALL_FAMILIES = {**FAMILIES, "gemma4": GEMMA4}


@pytest.fixture(scope="session")
def tokenizers():
    """Every course family's tokenizer, keyed by family name, loaded once."""
    from templatestudio.render import load_tokenizer

    return {family: load_tokenizer(model_id) for family, model_id in ALL_FAMILIES.items()}


@pytest.fixture(scope="session")
def qwen3(tokenizers):
    return tokenizers["qwen3"]


@pytest.fixture(scope="session")
def gemma4(tokenizers):
    return tokenizers["gemma4"]


# --- live tool loop (notebook 13, tests/test_loop.py) ---------------------
# Qwen3-0.6B's weights are not available in CI, so notebook 13 runs against a
# tiny trained stand-in (tests/standin.py). Each stand-in is trained at most
# once per session, into a temporary directory removed at the end.
LIVE_MODEL_VARIABLE = "TEMPLATESTUDIO_LIVE_MODEL"
LIVE_NOTEBOOK = "13_live_tool_loop.ipynb"
_standin_dirs: dict[str, Path] = {}
_standin_root: list[Path] = []


def trained_standin(script: str, config: pytest.Config | None = None) -> Path:
    """The directory of the stand-in trained on standin.SCRIPTS[script]."""
    if script not in _standin_dirs:
        import tempfile

        from standin import train_standin

        if not _standin_root:
            _standin_root.append(Path(tempfile.mkdtemp(prefix="templatestudio-standin-")))
        report = train_standin(script, _standin_root[0] / script)
        _standin_dirs[script] = _standin_root[0] / script
        reporter = config.pluginmanager.get_plugin("terminalreporter") if config else None
        if reporter is not None:
            reporter.write_line(
                f"stand-in {script!r}: trained in {report.seconds:.1f} s ({report.steps} steps)"
            )
    return _standin_dirs[script]


def pytest_collection_modifyitems(session, config, items):
    # nbval starts a notebook's kernel when its first cell runs, after
    # collection, and the kernel inherits os.environ: setting the variable
    # here is early enough. A model named by the user is never replaced.
    if os.environ.get(LIVE_MODEL_VARIABLE):
        return
    if any(item.path.name == LIVE_NOTEBOOK for item in items):
        os.environ[LIVE_MODEL_VARIABLE] = str(trained_standin("exchange_rate", config))


def pytest_unconfigure(config):
    import shutil

    for root in _standin_root:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def standin(pytestconfig):
    """load(script) -> (model, tokenizer) of a trained stand-in, loaded once."""
    from transformers import AutoModelForCausalLM

    from templatestudio.render import load_tokenizer

    loaded: dict[str, tuple] = {}

    def load(script: str):
        if script not in loaded:
            folder = str(trained_standin(script, pytestconfig))
            loaded[script] = (AutoModelForCausalLM.from_pretrained(folder), load_tokenizer(folder))
        return loaded[script]

    return load
