"""The plugin layer's recorded conformance counts, which notebook 24 charts, are what a run gives today.

Notebook 21 runs in the course's ``.venv``, where vLLM cannot be imported, so
it cannot measure the plugin layer; it charts
``tests/vllm/fixtures/conformance_plugin.json``, written by
``make conformance-plugin-record`` (``conformance.py --layer plugin
--summary``). This test runs the suite through the plugin layer again, with
the chunking strategies the file records, and compares ``summary_of`` of
that run with the file.

Compared: the layer, the strategies, the canitoolcall and templatestudio
versions, and every count per family and overall. Not compared: ``vllm``,
the version of vLLM that recorded the file. It depends on the environment,
not on this repository (``VLLM_SPEC`` picks another vLLM for .venv-vllm), and
the counts are held to the file whichever vLLM runs here. The per-case
verdicts are pinned by ``test_canitoolcall_plugin.py``; this checks only the
figures the notebook shows.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.conformance.plugin_adapter import PluginAdapter

# The repository's conformance.py, by its path: with tests/ on sys.path, "conformance" can be tests/conformance/.
_SPEC = importlib.util.spec_from_file_location(
    "conformance_cli", Path(__file__).resolve().parents[2] / "conformance.py"
)
conformance = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(conformance)

RECORD = Path(__file__).resolve().parent / "fixtures" / "conformance_plugin.json"
ENVIRONMENT_FIELDS = ("vllm",)
"""Summary keys that record where the run happened, not what it measured."""


def _without_environment(summary: dict) -> dict:
    return {key: value for key, value in summary.items() if key not in ENVIRONMENT_FIELDS}


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(RECORD.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def measured(recorded) -> dict:
    """summary_of a plugin-layer run of every fixture with the recorded strategies (about 90 s)."""
    return conformance.summary_of(conformance.measure("plugin", strategies=recorded["strategies"]))


def test_the_plugin_adapter_is_named_as_the_plugin_layer():
    """summary_of tells the layer from the engine's name, written in conformance.py without importing vLLM."""
    assert conformance.ENGINE_LAYERS[PluginAdapter.name] == "plugin"


def test_the_recorded_summary_is_what_the_plugin_layer_gives(recorded, measured):
    assert measured["layer"] == "plugin"
    assert "vllm" in measured, "the plugin adapter no longer reports vLLM's version in its engine details"
    assert _without_environment(measured) == _without_environment(recorded), (
        f"{RECORD.name} (notebook 24's plugin chart) differs from a run of the plugin layer: "
        "re-record with `make conformance-plugin-record`, then re-execute notebook 24"
    )


def test_the_recorded_file_is_written_as_conformance_writes_it(recorded, tmp_path):
    """Sorted keys, indent 1, a final newline: a re-record changes only the lines whose values changed."""
    rewritten = tmp_path / RECORD.name
    conformance.write_summary(recorded, rewritten)
    assert rewritten.read_text(encoding="utf-8") == RECORD.read_text(encoding="utf-8")
