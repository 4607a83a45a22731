"""Detection over the corpus of published templates, against labels.json.

The corpus is read in place (``templatestudio.corpus.corpus_dir()``); where
it is absent the scan tests skip with the one-line reason (tests/conftest.py
decides whether a skip is allowed). The scan runs the way ``check`` runs it
on a folder from strangers: every template probed in the sandbox, with the
default deadline. What each label means comes from the registry
(``Format.corpus_labels`` through ``corpus.LABEL_FORMATS``), so the counts
below are derived from labels.json, not written down here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import corpus_guard
from corpus_guard import require_corpus

from templatestudio.calls import UnparsedToolCall
from templatestudio.corpus import (
    CORPUS_ENV,
    LABEL_FORMATS,
    MALFORMED_RENDERINGS,
    CorpusMissing,
    corpus_available,
    corpus_templates,
    label_key,
    load_labels,
    load_sources,
    missing_message,
    scan,
)
from templatestudio.detect import detect_format
from templatestudio.engine import read_events
from templatestudio.formats import FORMATS
from templatestudio.probe import TemplateProbeError, _probe, _probe_sandboxed
from templatestudio.sandbox import DEFAULT_DEADLINE
from templatestudio.templates import ChatTemplate

# A missing corpus skips these locally and fails them in CI (tests/conftest.py).
needs_corpus = pytest.mark.usefixtures("needs_corpus")

# The corpus templates that fail on every probe shape, and the template's own error
# (the error raised with tools, the way the probe reports it; probe._probe).
TEMPLATE_ERRORS = {
    "Kimi-K2-Thinking": "SecurityError: access to attribute 'append' of 'list' object is unsafe.",
    # ik_llama.cpp's MiroThinker: its macros read the caller's loop variable `tool`, which
    # llama.cpp's own Jinja engine lets through and jinja2's lexically scoped macros do not.
    "MiroThinker": "UndefinedError: 'tool' is undefined",
    "idefics3": (
        "UndefinedError: 'dict object' has no attribute 'content' / UndefinedError: str object has no element 0"
        " / UndefinedError: None has no element 0"
    ),
    "llava_next": (
        "UndefinedError: 'dict object' has no attribute 'content' / UndefinedError: str object has no element 0"
        " / UndefinedError: None has no element 0"
    ),
}


@pytest.fixture(scope="module")
def scanned():
    """The sandboxed scan, from cold: nothing probed before, so every template runs in a child."""
    _probe.cache_clear()
    _probe_sandboxed.cache_clear()
    rows, seconds = scan(deadline=DEFAULT_DEADLINE)
    return {row.name: row for row in rows}, seconds


@pytest.fixture(scope="module")
def labels():
    return load_labels()


def expected_counts(labels: dict) -> Counter:
    """How many templates each format should be detected in, from the labels and the registry."""
    return Counter(
        LABEL_FORMATS[label_key(label)]
        for name, label in labels.items()
        if label_key(label) in LABEL_FORMATS and name not in MALFORMED_RENDERINGS
    )


@needs_corpus
def test_every_template_is_labelled_and_sourced(labels):
    names = {path.stem for path in corpus_templates()}
    assert names == set(labels) == set(load_sources())
    assert len(names) >= 70


@needs_corpus
def test_every_label_that_names_a_format_has_a_reader(labels):
    # "other:<name>" is a format nobody reads yet; "none" and "error" are outcomes.
    named = {label["format"] for label in labels.values()} - {"none", "error"}
    unread = {label for label in named if not label.startswith("other:")} - set(LABEL_FORMATS)
    assert unread == set()
    # Every format claims a label, but those read from vLLM's documentation of a wire no corpus
    # template writes (they name their vLLM parsers instead: tests/test_registry.py).
    assert set(LABEL_FORMATS.values()) == {name for name, fmt in FORMATS.items() if fmt.corpus_labels}


@needs_corpus
def test_detection_is_never_wrong(scanned, labels):
    rows, seconds = scanned
    assert set(rows) == set(labels)
    wrong = {name: (row.label, row.expected, row.found) for name, row in rows.items() if not row.agrees}
    found = Counter(row.found for row in rows.values() if row.expected)
    print(f"\ncorpus scan (sandboxed, deadline {DEFAULT_DEADLINE:g} s): {len(rows)} templates in {seconds:.2f} s, "
          f"{len(wrong)} wrong; detected per format: {dict(sorted(found.items()))}")
    assert wrong == {}
    assert found == expected_counts(labels)
    assert sum(found.values()) >= 28  # the corpus's labelled, well-rendered calls: a floor, not a tally


@needs_corpus
def test_every_other_template_gets_no_format_never_a_wrong_one(scanned):
    rows, _ = scanned
    guessed = {name: row.found for name, row in rows.items() if row.expected is None and row.probe.format}
    assert guessed == {}


@needs_corpus
def test_the_sandboxed_scan_equals_the_in_process_scan(scanned):
    rows, _ = scanned
    in_process, _ = scan()
    assert {row.name: row.probe for row in in_process} == {name: row.probe for name, row in rows.items()}
    assert not any(row.probe.stopped for row in rows.values())  # no real template needs the deadline


@needs_corpus
@pytest.mark.parametrize("name", sorted(MALFORMED_RENDERINGS))
def test_malformed_pythonic_renderings_yield_none(scanned, labels, name):
    rows, _ = scanned
    assert labels[name]["format"] == "pythonic"
    assert MALFORMED_RENDERINGS[name] in " ".join(labels[name]["quirks"])
    probe = rows[name].probe
    assert (probe.format, probe.renders_tools, probe.call_survives) == (None, True, True)
    # The pythonic reader refuses the call the template wrote rather than misreading it.
    with pytest.raises(UnparsedToolCall, match="^the pythonic format cannot read the tool call at offset 0"):
        read_events(probe.wire, FORMATS["pythonic"])


@needs_corpus
def test_published_variants_are_read(scanned):
    rows, _ = scanned
    spaced = rows["mistralai-Mistral-Small-3.1-24B-Instruct-2503"].probe
    assert spaced.wire.startswith("[TOOL_CALLS] [") and spaced.format is FORMATS["mistral"]
    with_id = rows["Mistral-Small-3.2-24B-Instruct-2506"].probe
    assert "[CALL_ID]call00001[ARGS]" in with_id.wire and with_id.format is FORMATS["mistral"]
    assert str(with_id.shape) == "dict arguments, no content, 9-char id" and with_id.shape.id_length == 9
    # The prompt opens <think>; the reply closes it before the call.
    thinking = rows["qwen3_6"].probe
    assert thinking.wire.startswith("\n</think>\n\n<tool_call>") and thinking.format is FORMATS["qwen-xml"]
    plain = rows["Qwen3-Coder"].probe
    assert plain.wire.startswith("<tool_call>") and plain.format is FORMATS["qwen-xml"]
    qwen3 = rows["Qwen-Qwen3-0.6B"].probe
    assert qwen3.wire.startswith("<think>\n\n</think>\n\n<tool_call>")
    assert str(qwen3.shape) == "dict arguments, empty content"


@needs_corpus
def test_probe_agrees_with_the_labels_on_tools_and_calls(scanned, labels):
    rows, _ = scanned
    disagree = {
        name: (row.probe.renders_tools, row.probe.call_survives)
        for name, row in rows.items()
        if row.probe.error is None
        and (row.probe.renders_tools, row.probe.call_survives)
        != (labels[name]["renders_tools"], labels[name]["call_survives"])
    }
    # FunctionGemma's template does write the call (<start_function_call>call:...);
    # its label says the call does not survive. R1-Distill's writes it only for
    # content=None passed literally, which the probe tries and the label's
    # apply_chat_template (dropping None-valued keys) cannot.
    # Command R+ writes no end of turn after its call, which the label's
    # cut cannot find; firefunction lists its tools from the functions
    # variable the probe passes (the label rendered it without).
    assert disagree == {"tool_chat_template_functiongemma": (False, True),
                        "deepseek-ai-DeepSeek-R1-Distill-Llama-8B": (False, True),
                        "CohereForAI-c4ai-command-r-plus-tool_use": (True, True),
                        "fireworks-ai-llama-3-firefunction-v2": (True, True)}
    functiongemma = rows["tool_chat_template_functiongemma"].probe
    assert "<start_function_call>call:studio_probe_lookup" in functiongemma.wire


@needs_corpus
def test_templates_that_error_are_reported_with_their_own_error(scanned, labels):
    rows, _ = scanned
    errored = {name: row.probe.error for name, row in rows.items() if row.probe.error}
    assert errored == TEMPLATE_ERRORS
    assert {name for name, label in labels.items() if label["format"] == "error"} <= set(errored)
    assert all(rows[name].expected is None and rows[name].found == "error" for name in errored)
    assert rows["Kimi-K2-Thinking"].probe.reason.startswith(  # then what to do: tests/test_probe_errors.py
        "template error: SecurityError: access to attribute 'append' of 'list' object is unsafe. — "
    )
    kimi_file = next(path for path in corpus_templates() if path.stem == "Kimi-K2-Thinking")
    message = (
        "^Kimi-K2-Thinking: the template cannot render the probe conversation: "
        "SecurityError: access to attribute 'append' of 'list' object is unsafe\\.$"
    )
    with pytest.raises(TemplateProbeError, match=message):
        detect_format(ChatTemplate.from_file(kimi_file))


@needs_corpus
def test_detect_format_on_every_template_raises_only_its_documented_error(scanned):
    rows, _ = scanned
    for path in corpus_templates():
        try:
            found = detect_format(path.read_text(encoding="utf-8"))  # the source text, named "template"
        except TemplateProbeError as error:
            assert error.template_error == TEMPLATE_ERRORS[path.stem]
        else:
            assert found is rows[path.stem].probe.format


def test_an_absent_corpus_is_said_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv(CORPUS_ENV, str(tmp_path / "nowhere"))
    assert not corpus_available()
    message = missing_message()
    assert "\n" not in message and str(tmp_path / "nowhere") in message and CORPUS_ENV in message
    with pytest.raises(CorpusMissing, match="template corpus not found"):
        corpus_templates()
    with pytest.raises(CorpusMissing):
        load_labels()


def test_the_template_corpus_is_there():
    """The reporter: in CI without the corpus, the one test that fails (tests/corpus_guard.py)."""
    require_corpus()
    assert corpus_templates()


@pytest.mark.parametrize("ci", ["true", "TRUE", "1", "yes"])
def test_a_missing_corpus_fails_the_run_in_ci(monkeypatch, tmp_path, ci):
    monkeypatch.setenv(CORPUS_ENV, str(tmp_path / "nowhere"))
    monkeypatch.setenv("CI", ci)
    monkeypatch.setattr(corpus_guard, "_reporter", None)  # no reporter chosen yet: the first to ask fails
    with pytest.raises(pytest.fail.Exception, match="template corpus not found at .*CI=true"):
        require_corpus()


def test_in_ci_only_the_reporter_fails_and_the_others_skip_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv(CORPUS_ENV, str(tmp_path / "nowhere"))
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(corpus_guard, "_reporter", None)
    corpus_guard.choose_reporter("tests/test_x.py::test_reporter")
    with pytest.raises(pytest.fail.Exception, match="CI=true, so a missing corpus fails the run"):
        require_corpus("tests/test_x.py::test_reporter")
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_corpus("tests/test_x.py::test_other")
    reason = f"{missing_message()}; CI=true: the run fails once for it, at tests/test_x.py::test_reporter"
    assert str(skipped.value) == reason


def run_corpus_tests_without_the_corpus(tmp_path, ci: str) -> tuple[str, list[str]]:
    """Run this file and tests/test_probe_errors.py in a child pytest with the corpus path pointing nowhere.

    Returns the summary line and the -rs/-rf/-rE short-summary lines.
    """
    tests = Path(__file__).resolve().parent
    # Wide columns: pytest cuts short-summary lines to the terminal's width.
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_CURRENT_TEST"}  # this run's test
    env.update({CORPUS_ENV: str(tmp_path / "nowhere"), "CI": ci, "COLUMNS": "1000"})
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rsfE",
         "-k", "not without_the_corpus_in_a_child",  # not these two again
         str(tests / "test_corpus_scan.py"), str(tests / "test_probe_errors.py")],
        capture_output=True, text=True, env=env, cwd=tests.parent, timeout=600,
    )
    lines = done.stdout.splitlines()
    return lines[-1], [line for line in lines if line.startswith(("SKIPPED", "FAILED", "ERROR"))]


def test_a_missing_corpus_is_one_skip_reason_without_the_corpus_in_a_child(tmp_path):
    summary, short = run_corpus_tests_without_the_corpus(tmp_path, "")
    assert " failed" not in summary and " error" not in summary and " skipped" in summary, summary
    # -rs folds skips with one reason at one place into one line.
    assert len(short) == 1 and short[0].endswith(f": {missing_message_for(tmp_path)}"), short


def test_a_missing_corpus_is_one_failure_in_ci_without_the_corpus_in_a_child(tmp_path):
    summary, short = run_corpus_tests_without_the_corpus(tmp_path, "true")
    assert summary.startswith("1 failed,") and " error" not in summary, summary
    failed = [line for line in short if not line.startswith("SKIPPED")]
    assert failed == [f"FAILED tests/test_corpus_scan.py::test_the_template_corpus_is_there - "
                      f"Failed: {missing_message_for(tmp_path)}; CI=true, so a missing corpus fails the run"], short
    reporter = "tests/test_corpus_scan.py::test_the_template_corpus_is_there"
    assert all(line.endswith(f"; CI=true: the run fails once for it, at {reporter}")
               for line in short if line.startswith("SKIPPED")), short


def missing_message_for(tmp_path) -> str:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CORPUS_ENV, str(tmp_path / "nowhere"))
        return missing_message()


@pytest.mark.parametrize("ci", [None, "", "false", "0"])
def test_a_missing_corpus_skips_outside_ci(monkeypatch, tmp_path, ci):
    monkeypatch.setenv(CORPUS_ENV, str(tmp_path / "nowhere"))
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    monkeypatch.setattr(corpus_guard, "_reporter", None)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_corpus()
    assert str(skipped.value) == missing_message()


def test_a_present_corpus_is_neither_skipped_nor_failed(monkeypatch, tmp_path):
    (tmp_path / "templates").mkdir()
    monkeypatch.setenv(CORPUS_ENV, str(tmp_path))
    monkeypatch.setenv("CI", "true")
    assert require_corpus() is None


def test_no_test_skips_on_a_missing_corpus_by_itself():
    # Every corpus check goes through conftest.require_corpus; a test file
    # that tests corpus_available() to skip would pass CI on fewer tests.
    tests = Path(__file__).resolve().parent
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(tests.rglob("*.py"))
        if path.name not in ("conftest.py", "corpus_guard.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ("skip" in line and ("corpus" in line or "missing_message" in line))
        and "require_corpus" not in line
        and path != Path(__file__).resolve()
    ]
    assert offenders == []
