"""conformance.py's summary: the table and chart of a run equal those of its summary, JSON round trip included.

Notebook 21 charts the reader layer from a run and the plugin layer from a
recorded summary (``summary_of``, written by ``--summary``); both must draw
the same way. Runs are generated (families, statuses, engines, strategies),
not measured: the suite itself runs in ``test_canitoolcall.py``.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest
from canitoolcall.results import CaseResult, EngineInfo, RunInfo, RunResults, Status
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conformance.adapter import TemplatestudioAdapter

# The repository's conformance.py, by its path: with tests/ on sys.path, "conformance" can be tests/conformance/.
_SPEC = importlib.util.spec_from_file_location(
    "conformance_cli", Path(__file__).resolve().parents[1] / "conformance.py"
)
conformance = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(conformance)

FAMILY_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=14)
VERSIONS = st.from_regex(r"[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}", fullmatch=True)


@st.composite
def runs(draw) -> RunResults:
    families = draw(st.lists(FAMILY_NAMES, min_size=1, max_size=6, unique=True))
    cases = tuple(
        CaseResult(fixture_id=f"{family}/case-{n}", family=family, status=status)
        for n, (family, status) in enumerate(
            draw(st.lists(st.tuples(st.sampled_from(families), st.sampled_from(list(Status))), min_size=1,
                          max_size=60))
        )
    )
    engine_name = draw(st.sampled_from(sorted(conformance.ENGINE_LAYERS)))
    details = {"vllm": draw(VERSIONS), "tool_parser": "templatestudio"} if draw(st.booleans()) else {}
    strategies = tuple(draw(st.lists(st.sampled_from(["one", "special", "token", "rand:1:8", "char:3"]),
                                     min_size=1, max_size=5, unique=True)))
    return RunResults(
        canitoolcall_version=draw(VERSIONS),
        engine=EngineInfo(engine_name, draw(VERSIONS), None, details),
        run=RunInfo("t0", "t1", "platform", "3.x", "digest", strategies, "none"),
        cases=cases,
    )


def as_loaded(summary: dict) -> dict:
    """The summary as notebook 24 reads it back from the file --summary writes."""
    return json.loads(json.dumps(summary, sort_keys=True, indent=1))


@settings(max_examples=80, deadline=None)
@given(runs(), st.sampled_from(["templatestudio", "plugin", "a longer label"]))
def test_a_run_and_its_summary_print_the_same(results, label):
    summary = conformance.summary_of(results)
    for shown in (summary, as_loaded(summary)):
        assert conformance.table(shown) == conformance.table(results)
        assert conformance.chart(shown, label=label) == conformance.chart(results, label=label)


@settings(max_examples=80, deadline=None)
@given(runs())
def test_the_summary_counts_every_case_once(results):
    summary = conformance.summary_of(results)
    statuses = Counter(case.status.value for case in results.cases)
    assert summary["totals"] == {status.value: statuses[status.value] for status in Status}
    assert set(summary["by_family"]) == {case.family for case in results.cases}
    for family, counts in summary["by_family"].items():
        assert sum(counts.values()) == sum(case.family == family for case in results.cases)
    assert summary["layer"] == conformance.ENGINE_LAYERS[results.engine.name]
    assert summary["strategies"] == list(results.run.strategies)
    assert summary["templatestudio"] == results.engine.version
    assert summary["canitoolcall"] == results.canitoolcall_version
    assert summary.get("vllm") == results.engine.details.get("vllm")
    assert as_loaded(summary) == summary


@settings(max_examples=30, deadline=None)
@given(runs())
def test_write_summary_writes_sorted_keys_indent_one_and_a_final_newline(tmp_path_factory, results):
    path = tmp_path_factory.mktemp("summary") / "summary.json"
    summary = conformance.summary_of(results)
    conformance.write_summary(summary, path)
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(summary, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    assert json.loads(text) == summary


def test_the_reader_adapter_is_named_as_the_reader_layer():
    """summary_of tells the layer from the engine's name (the plugin's is checked in tests/vllm)."""
    assert conformance.ENGINE_LAYERS[TemplatestudioAdapter.name] == "reader"


def test_a_run_of_another_engine_is_refused(tmp_path):
    results = RunResults("0.1.1", EngineInfo("vllm", "0.32.0"), RunInfo("", "", "", "", "", ("one",), ""), ())
    with pytest.raises(ValueError, match="'vllm'"):
        conformance.summary_of(results)


@pytest.mark.parametrize("drop", ["by_family", "totals"])
def test_a_dict_without_counts_is_refused(drop):
    summary = {"layer": "plugin", "by_family": {}, "totals": {}}
    del summary[drop]
    with pytest.raises(ValueError, match=f"no {drop}"):
        conformance.table(summary)
    with pytest.raises(ValueError, match=f"no {drop}"):
        conformance.chart(summary)


def test_summary_needs_an_existing_folder(tmp_path, capsys):
    """--summary into a folder that does not exist stops before the run, not after it."""
    with pytest.raises(SystemExit):
        conformance.main(["--summary", str(tmp_path / "missing" / "summary.json"), "--id", "none/none"])
    assert "no folder" in capsys.readouterr().err
