"""Templates that do not render: ``check`` and the survey say the error, what it means and what to do.

Every kind in ``template_errors.KNOWN_ERRORS`` is raised here by a real
template rendered the way the probe renders (transformers' sandboxed
Jinja), or by the sandbox's own exception, and the advice must name what
the error says (the method, the key, the variable). The corpus's erroring
templates are found by the scan, not listed here, and each must get advice
from the table, never the fallback line alone.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from templatestudio.__main__ import check_row
from templatestudio.corpus import corpus_templates, load_labels, scan
from templatestudio.probe import probe_template
from templatestudio.sandbox import TemplateResourceError, TemplateTimeout
from templatestudio.template_errors import KNOWN_ERRORS, advice_for, error_part, kind_of
from templatestudio.templates import ChatTemplate

needs_corpus = pytest.mark.usefixtures("needs_corpus")

# A template per kind of error, and words the advice must hold.
RAISING = {
    "list.append": ("{% set seen = [] %}{{ seen.append(1) }}", ["mutates a list (list.append)", "outside the sandbox"]),
    "dict.update": ("{% set d = {} %}{{ d.update({'a': 1}) }}", ["mutates a dict (dict.update)"]),
    "dunder": ("{{ messages.__class__.__mro__ }}", ["list.__class__", "do not render it without the sandbox"]),
    "undefined variable": ("{{ house_rules + 'x' }}", ["variable 'house_rules'", "house_rules=... as a keyword"]),
    "missing key": ("{% for m in messages %}{{ m.settings.name }}{% endfor %}", ["the key 'settings'"]),
    "string content indexed": ("{% for m in messages %}{{ m.content[0]['text'] }}{% endfor %}",
                               ["list of typed parts", "the key 'content'"]),
    "other undefined": ("{{ messages[5].x }}", ["reads something the conversation does not hold"]),
    "list content joined": ("{{ 'Q: ' + messages }}", ["joins a list to text", "string message content"]),
    "generator to tojson": ("{{ messages | map(attribute='role') | tojson }}", ["hands a generator to tojson", "| list"]),
    "filter at run time": ("{% if messages %}{{ messages | fromjson }}{% endif %}", ["filter 'fromjson'"]),
    "filter at compile time": ("{{ messages | fromjson }}", ["filter 'fromjson'"]),
    "unknown test": ("{{ messages is fancy }}", ["test 'fancy'"]),
    "syntax": ("{% if %}{% endif %}", ["not valid Jinja"]),
    "raise_exception": ("{{ raise_exception('only one user turn, please') }}", ["refuses the conversation on purpose"]),
    "long range": ("{% for i in range(10 ** 6) %}{% endfor %}", ["longer than transformers' sandbox allows (100000 items)"]),
    "endless macro": ("{% macro again() %}{{ again() }}{% endmacro %}{{ again() }}", ["recurses without end"]),
}
# The sandbox's own stops, as its exceptions print themselves.
STOPS = {
    "timeout": (TemplateTimeout("slow", 2.0), ["longer deadline (check --deadline)"]),
    "memory": (TemplateResourceError("big", "it ran out of memory under the 256 MiB memory limit"),
               ["more (check --memory-limit)"]),
}


def probe_errors(source: str) -> tuple[str, ...]:
    probe = probe_template(ChatTemplate("t", source))
    assert probe.error is not None, "the template rendered: it no longer raises the kind it stands for"
    assert probe.error == " / ".join(probe.errors)
    return probe.errors


@pytest.mark.parametrize("name", sorted(RAISING))
def test_each_kind_of_render_error_gets_its_advice(name):
    source, words = RAISING[name]
    errors = probe_errors(source)
    probe = probe_template(ChatTemplate("t", source))
    advice = advice_for(errors)
    assert probe.reason == f"template error: {probe.error} — {advice}"
    assert all(kind_of(*error_part(error)) for error in errors), errors
    missing = [word for word in words if word not in advice]
    assert missing == [], (errors, advice)


@pytest.mark.parametrize("name", sorted(STOPS))
def test_the_sandboxs_stops_get_their_advice(name):
    stop, words = STOPS[name]
    error = f"{type(stop).__name__}: {stop}"
    assert kind_of(type(stop).__name__, str(stop)) is not None
    assert all(word in advice_for((error,)) for word in words), advice_for((error,))


def test_every_known_kind_is_raised_by_some_test_template():
    # A kind no real error reaches is dead weight (or its pattern is wrong).
    errors = [error for source, _ in RAISING.values() for error in probe_errors(source)]
    errors += [f"{type(stop).__name__}: {stop}" for stop, _ in STOPS.values()]
    reached = {id(known[0]) for error in errors if (known := kind_of(*error_part(error)))}
    unreached = [f"{kind.exception}: {kind.pattern.pattern}" for kind in KNOWN_ERRORS if id(kind) not in reached]
    assert unreached == []


def test_an_unknown_kind_still_says_what_and_where_to_look():
    (error,) = probe_errors("{{ 1 // 0 }}")
    assert error == "ZeroDivisionError: integer division or modulo by zero"
    advice = advice_for((error,))
    assert "ZeroDivisionError" in advice and "its message says what it expects" in advice
    assert probe_template(ChatTemplate("t", "{{ 1 // 0 }}")).reason.startswith(f"template error: {error} — ")


def test_one_clause_per_distinct_kind():
    errors = probe_errors(RAISING["string content indexed"][0])
    assert len(errors) > 1  # the probe's shapes failed in different ways
    advice = advice_for(errors)
    clauses = advice.split("; the template ")
    assert len(clauses) == len(set(clauses)) == len({kind_of(*error_part(error))[1] for error in errors})


@given(st.lists(st.sampled_from(["only", "user", " / ", "assistant", "/", " ", "roles", ": "]), max_size=8).map("".join))
def test_a_message_holding_the_separator_is_one_error_with_one_clause(message):
    # The errors are kept apart (TemplateProbe.errors), not split back out of the joined text: a
    # template's own message may hold " / " (Only user / assistant roles are supported).
    source = "{{ raise_exception(" + json.dumps(message) + ") }}"
    probe = probe_template(ChatTemplate("t", source))
    assert probe.errors == (f"TemplateError: {message}",)
    assert probe.reason == f"template error: {probe.error} — {kind_of('TemplateError', message)[1]}"


def test_check_rows_carry_the_advice_never_the_bare_error(tmp_path):
    (tmp_path / "mutates.jinja").write_text(RAISING["list.append"][0])
    template = ChatTemplate.from_file(tmp_path / "mutates.jinja")
    row = check_row(template, deadline=20)
    assert row["error"] == "SecurityError: access to attribute 'append' of 'list' object is unsafe."
    assert row["parse_with"] == f"none: template error: {row['error']} — {advice_for((row['error'],))}"


# --- the corpus's templates that do not render ----------------------------------------


@pytest.fixture(scope="module")
def erroring():
    rows, _ = scan()
    return {row.name: row for row in rows if row.probe.error is not None}


@needs_corpus
def test_every_corpus_template_that_errors_gets_advice_from_the_table(erroring):
    labels = load_labels()
    assert {name for name, label in labels.items() if label["format"] == "error"} <= set(erroring)
    for name, row in erroring.items():
        errors = row.probe.errors
        unknown = [error for error in errors if kind_of(*error_part(error)) is None]
        assert unknown == [], (name, errors)
        assert row.probe.reason == f"template error: {row.probe.error} — {advice_for(errors)}"


@needs_corpus
def test_kimi_k2_thinking_is_reported_with_the_reason_and_the_way_out(erroring):
    # Its labels.json quirks record the same error under transformers.
    label = load_labels()["Kimi-K2-Thinking"]
    row = erroring["Kimi-K2-Thinking"]
    assert any(row.probe.error in quirk for quirk in label["quirks"])
    reason = row.probe.reason
    assert "mutates a list (list.append), which transformers' sandboxed Jinja forbids" in reason
    assert "use a template revision" in reason and "outside the sandbox" in reason
    path = next(path for path in corpus_templates() if path.stem == "Kimi-K2-Thinking")
    row = check_row(ChatTemplate.from_file(path), deadline=20)
    assert row["parse_with"] == f"none: {reason}"
