"""Detection over the corpus of published templates, against labels.json.

The corpus is read in place (``templatestudio.corpus.corpus_dir()``); where
it is absent the scan tests skip with the one-line reason.
"""

from __future__ import annotations

import pytest

from templatestudio.corpus import (
    CORPUS_ENV,
    MALFORMED_RENDERINGS,
    SUPPORTED_LABELS,
    CorpusMissing,
    corpus_available,
    corpus_templates,
    load_labels,
    load_sources,
    missing_message,
    scan,
)
from templatestudio.detect import ChatTemplate, TemplateProbeError, detect_format
from templatestudio.formats import FORMATS

needs_corpus = pytest.mark.skipif(not corpus_available(), reason=missing_message())


@pytest.fixture(scope="module")
def scanned():
    rows, seconds = scan()
    return {row.name: row for row in rows}, seconds


@pytest.fixture(scope="module")
def labels():
    return load_labels()


@needs_corpus
def test_every_template_is_labelled_and_sourced(labels):
    names = {path.stem for path in corpus_templates()}
    assert names == set(labels) == set(load_sources())
    assert len(names) >= 70


@needs_corpus
def test_detection_matches_every_supported_label(scanned, labels):
    rows, _ = scanned
    wrong = {
        name: (row.label, row.found)
        for name, row in rows.items()
        if row.label in SUPPORTED_LABELS and name not in MALFORMED_RENDERINGS and row.found != row.label
    }
    assert wrong == {}
    assert sum(1 for row in rows.values() if row.expected) == 28


@needs_corpus
def test_every_other_template_gets_no_format_never_a_wrong_one(scanned):
    rows, _ = scanned
    guessed = {name: row.found for name, row in rows.items() if row.expected is None and row.probe.format}
    assert guessed == {}
    assert all(row.agrees for row in rows.values())


@needs_corpus
@pytest.mark.parametrize("name", sorted(MALFORMED_RENDERINGS))
def test_malformed_pythonic_renderings_yield_none(scanned, labels, name):
    rows, _ = scanned
    assert labels[name]["format"] == "pythonic"
    assert MALFORMED_RENDERINGS[name] in " ".join(labels[name]["quirks"])
    probe = rows[name].probe
    assert (probe.format, probe.renders_tools, probe.call_survives) == (None, True, True)
    assert FORMATS["pythonic"].parser.parse(probe.wire) == []


@needs_corpus
def test_published_variants_are_read(scanned):
    rows, _ = scanned
    spaced = rows["mistralai-Mistral-Small-3.1-24B-Instruct-2503"].probe
    assert spaced.wire.startswith("[TOOL_CALLS] [") and spaced.format is FORMATS["mistral"]
    with_id = rows["Mistral-Small-3.2-24B-Instruct-2506"].probe
    assert "[CALL_ID]call00001[ARGS]" in with_id.wire and with_id.format is FORMATS["mistral"]
    assert with_id.shape == "string content, 9-char id"
    # The prompt opens <think>; the reply closes it before the call.
    thinking = rows["qwen3_6"].probe
    assert thinking.wire.startswith("\n</think>\n\n<tool_call>") and thinking.format is FORMATS["qwen-xml"]
    plain = rows["Qwen3-Coder"].probe
    assert plain.wire.startswith("<tool_call>") and plain.format is FORMATS["qwen-xml"]
    assert rows["Qwen-Qwen3-0.6B"].probe.wire.startswith("<think>\n\n</think>\n\n<tool_call>")


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
    # its label says the call does not survive.
    assert disagree == {"tool_chat_template_functiongemma": (False, True)}
    functiongemma = rows["tool_chat_template_functiongemma"].probe
    assert "<start_function_call>call:studio_probe_lookup" in functiongemma.wire


@needs_corpus
def test_templates_that_error_are_reported_never_crash(scanned, labels):
    rows, _ = scanned
    errored = {name for name, row in rows.items() if row.probe.error}
    assert {name for name, label in labels.items() if label["format"] == "error"} <= errored
    assert all(rows[name].expected is None for name in errored)
    kimi = rows["Kimi-K2-Thinking"].probe
    assert kimi.error == "SecurityError: access to attribute 'append' of 'list' object is unsafe."
    kimi_file = next(path for path in corpus_templates() if path.stem == "Kimi-K2-Thinking")
    with pytest.raises(TemplateProbeError, match="^Kimi-K2-Thinking: the template cannot render"):
        detect_format(ChatTemplate.from_file(kimi_file))


@needs_corpus
def test_detect_format_on_every_template_raises_only_its_documented_error():
    for path in corpus_templates():
        try:
            detect_format(path.read_text(encoding="utf-8"))
        except TemplateProbeError:
            pass


def test_an_absent_corpus_is_said_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv(CORPUS_ENV, str(tmp_path / "nowhere"))
    assert not corpus_available()
    message = missing_message()
    assert "\n" not in message and str(tmp_path / "nowhere") in message and CORPUS_ENV in message
    with pytest.raises(CorpusMissing, match="template corpus not found"):
        corpus_templates()
    with pytest.raises(CorpusMissing):
        load_labels()
