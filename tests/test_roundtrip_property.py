"""Round trip through real chat templates: what goes in as a call comes back out, exactly.

Subjects (tests/roundtrip_subjects.py) are every corpus template whose label
a registered format claims and every cached tokenizer whose template the
probe reads. Hypothesis generates tool calls (names; string values with
unicode, quotes, backslashes, control characters and the markers of every
format; ints, floats, bools, null, nested lists and objects; one to three
calls per turn), renders each turn through every template of its format in
the call shape the probe found that template accepts, cuts out what the turn
adds, and reads it back with ``templatestudio.engine.read_events`` (the one
reading machine) and with each response template that reads the template's
wire (the format's, and the one the model ships) through transformers'
``parse_response``. Both must return exactly the calls that went in, types
included (``True`` is not ``1``, ``1`` is not ``1.0``), and the reader may
leave nothing beside the calls but whitespace and the template's own tags.

The generators carry only what the wire can carry: what a format's declared
limits name (``Format.limits_for(arguments, "wire")``) and what a template
was measured not to carry (``roundtrip_subjects.measure``, pinned below in
``TEMPLATE_LIMITS``, or stated by its labels.json entry: ``label_stated_limits``)
are left out, so at least 90% of template turns must be
checked by the reader; the test asserts it and prints every outcome's count
(``-s``; recorded in bench/RESULTS.md). A response template skips only what
its format declares (``limits_for(arguments, "response template")``) or
what was measured for it. Each limit has its own test below showing what
happens instead: the documented error, or the exact misreading.

CI shares about ``CI_TURNS`` (12,000) generated turns among the formats
with templates (at most ``ROUND_TRIP_EXAMPLES``, 2,000, and at least 500
each); ``pytest tests/test_roundtrip_property.py --deep`` runs 50,000 per
format.
"""

from __future__ import annotations

import dataclasses
import json
import math
import string
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, assume, example, given, note, settings
from hypothesis import strategies as st
from jinja2 import TemplateError

from roundtrip_subjects import (
    CACHED_REPOS,
    KIND_SAMPLES,
    MEASURED,
    PIECES,
    THREE_CALLS,
    TWO_CALLS,
    CANDIDATES,
    Calls,
    Subject,
    _failing,
    all_subjects,
    applicable_templates,
    content_is_only_tags,
    measure,
    read_wire,
    read_with_response_template,
    render_wire,
    same_calls,
    subjects_of,
    summary,
    tool_schemas,
)
from corpus_guard import require_corpus
from templatestudio import corpus
from templatestudio.families import LLAMA31
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.coerce import coerce_arguments
from templatestudio.engine import read_events
from templatestudio.events import ToolCallEvent
from templatestudio.formats import FORMATS, Format
from templatestudio.wire.arguments import KeyValuePairs, XmlParameters

# What each template was measured not to carry beyond its format's declared
# limits (roundtrip_subjects.summary of measure()). A template absent here
# carries everything its format allows, through every reader.
# Its sentinels, and bare keys of word characters only: the reader takes a bare key up to
# its ":" as the template writes it ("a b", "k\n", "k-1"); the response template does not.
_GEMMA4_JSON_DIALECT = {"keys": ["a b", "k\n", "k-1"], "pieces": ["\x01", "\x02"]}
TEMPLATE_LIMITS = {
    "google/gemma-4-E2B-it": {
        "response template: the format's": _GEMMA4_JSON_DIALECT,
        "response template: shipped with the model": _GEMMA4_JSON_DIALECT,
    },
    "diffusion_gemma": {"response template: the format's": _GEMMA4_JSON_DIALECT},
    # These two write a Python None as "None", which the json dialect refuses.
    "gemma4": {"response template: the format's": {
        "kinds": ["null"], "nested kinds": ["null"], **_GEMMA4_JSON_DIALECT}},
    "google-gemma-4-31B-it-interleaved": {"response template: the format's": {
        "kinds": ["null"], "nested kinds": ["null"], **_GEMMA4_JSON_DIALECT}},
    # Every Llama 3.x JSON template raises "This model only supports single tool-calls at once!".
    **{name: {"reader": {"two calls": True}} for name in (
        LLAMA31, "meta-llama-Llama-3.1-8B-Instruct", "meta-llama-Llama-3.2-3B-Instruct",
        "meta-llama-Llama-3.3-70B-Instruct", "tool_chat_template_llama3.1_json")},
    # GigaChat's templates render only the first call of a turn (no error: the rest is dropped).
    # So does gpt-oss's (harmony): one call per turn, the others dropped.
    **{name: {"reader": {"two calls": True}} for name in (
        "GigaChat3-10B-A1.8B", "GigaChat3.1-10B-A1.8B", "openai-gpt-oss-120b")},
    # DeepSeek-R1-Distill's template closes the section and the turn after every call past the first
    # ("<｜tool▁calls▁end｜><｜end▁of▁sentence｜>" inside its loop): two calls render right, three do not.
    # R1's prompts open <think> and its history turns carry no reasoning block, so the cut-out turn
    # reads as reasoning up to a "</think>" inside a value (a real reply closes the block first).
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B": {"reader": {"pieces": ["</think>"], "three calls": True}},
    **{name: {"reader": {"pieces": ["</think>"]}} for name in ("deepseekv3", "llama-cpp-deepseek-r1")},
    # Command R+ indents its JSON with Jinja's indent filter, which also breaks lines at U+0085,
    # U+2028 and U+2029 inside strings (the JSON leaves them unescaped) and pads them with spaces.
    "CohereForAI-c4ai-command-r-plus-tool_use": {"reader": {"pieces": ["\x85", "\u2028", "\u2029"]}},
    # Apriel 1.5 writes dict arguments as a Python repr, which the response template's json cannot read.
    "ServiceNow-AI-Apriel-1.5-15b-Thinker": {"response template: the format's": {"not this call shape": True}},
    # Their prompts open <think>, and a past turn has no reasoning block to close, so the cut-out turn
    # reads as reasoning up to a "</think>" inside a value (a real reply closes the block first).
    **{name: {"reader": {"pieces": ["</think>"]}} for name in ("MiniMax-M2", "Qwen3.8-27B")},
    # vLLM's FunctionGemma template writes every value between <escape> delimiters: text.
    "tool_chat_template_functiongemma": {
        "reader": {"kinds": ["array", "boolean", "integer", "null", "number", "object"],
                   "nested kinds": ["array", "boolean", "integer", "null", "number", "object", "string"]},
        "response template: the format's": {"pieces": ["\x01", "\x02"]},
    },
    # vLLM's Llama 4 template writes every value as "{{ value }}": text, pasted unescaped.
    "tool_chat_template_llama4_pythonic": {"reader": {
        "kinds": ["array", "boolean", "integer", "null", "number", "object"],
        "nested kinds": ["array", "boolean", "integer", "null", "number", "object", "string"],
        "pieces": ["\x00", "\n", "\r", '"', "\\"],
    }},
}
READER = "reader: read back exactly"
# Tests that read the corpus: what happens without it is tests/corpus_guard.py's to say.
needs_corpus = pytest.mark.usefixtures("needs_corpus")
ARGS_SHAPE = {"response template: the format's": {"not this call shape": True}}


def label_stated_limits(labels: dict[str, dict]) -> dict[str, dict]:
    """The limits labels.json states: a Mistral template labelled with the NAME[ARGS]{...} shape.

    The format's response template reads only the JSON-list shape
    (``[TOOL_CALLS][{...}]``), so it cannot read a template whose label
    gives the newer shape (Mistral Small 3.2, mistral-common v11 and later).
    """
    return {name: ARGS_SHAPE for name, label in labels.items()
            if corpus.LABEL_FORMATS.get(corpus.label_key(label)) == "mistral" and "[ARGS]" in label.get("variant", "")}


def known_limits(names: set[str], labels: dict[str, dict]) -> dict[str, dict]:
    """TEMPLATE_LIMITS and label_stated_limits, merged, for the named templates."""
    stated = label_stated_limits(labels)
    return {name: {**TEMPLATE_LIMITS.get(name, {}), **stated.get(name, {})}
            for name in sorted(names) if name in TEMPLATE_LIMITS or name in stated}


# --- generators built from the registry and the measurement ------------------------------------------


@dataclass(frozen=True)
class Alphabet:
    """What a generated turn for one format may hold, derived from its limits and its templates."""

    format: Format
    top_kinds: tuple[str, ...]
    nested_kinds: tuple[str, ...]
    banned: frozenset[str]  # pieces no string may hold
    banned_ends: frozenset[str]  # pieces no string may start or end with
    text_keys: bool
    max_calls: int


def alphabet(fmt: Format, subjects: tuple[Subject, ...]) -> Alphabet:
    """Everything the format's declared wire limits allow and every one of its templates was measured to carry."""
    failing = set().union(*(measure(subject)["reader"] for subject in subjects))

    def allowed(label: str) -> bool:
        return label not in failing and not fmt.limits_for(CANDIDATES[label].arguments, "wire")

    kinds = {what: tuple(kind for kind in KIND_SAMPLES if allowed(f"{what} {kind}")) for what in ("kind", "nested")}
    return Alphabet(
        fmt,
        kinds["kind"],
        kinds["nested"],
        frozenset(c.detail for c in MEASURED if c.what == "piece" and not allowed(c.label)),
        frozenset(c.detail for c in MEASURED if c.what == "edge" and not allowed(c.label)),
        all(allowed(c.label) for c in MEASURED if c.what == "key"),
        1 if TWO_CALLS.label in failing else 3,
    )


_FIRST = string.ascii_letters + "_"
identifiers = st.builds(str.__add__, st.sampled_from(_FIRST), st.text(_FIRST + string.digits, max_size=11))


def strings(a: Alphabet) -> st.SearchStrategy[str]:
    singles = "".join(piece for piece in a.banned if len(piece) == 1)
    characters = st.characters(exclude_categories=("Cs",), exclude_characters=singles)
    pieces = [piece for piece in PIECES if not any(banned in piece for banned in a.banned)]
    raw = st.one_of(
        st.text(characters, max_size=12),
        st.lists(st.one_of(st.text(characters, max_size=6), st.sampled_from(pieces)), max_size=6).map("".join),
    )
    return raw.filter(lambda text: not any(banned in text for banned in a.banned)
                      and not any(text.startswith(end) or text.endswith(end) for end in a.banned_ends)
                      and not a.format.limits_for({"k": text}, "wire"))


def keys(a: Alphabet) -> st.SearchStrategy[str]:
    chosen = st.one_of(identifiers, strings(a)) if a.text_keys else identifiers
    return chosen.filter(lambda key: not a.format.limits_for({key: "v"}, "wire"))


def values(a: Alphabet, kinds: tuple[str, ...], inner: st.SearchStrategy | None) -> st.SearchStrategy:
    scalar = {"string": strings(a), "integer": st.integers(min_value=-(2**63), max_value=2**63),
              "number": st.floats(allow_nan=False, allow_infinity=False), "boolean": st.booleans(), "null": st.none()}
    options = [scalar[kind] for kind in kinds if kind in scalar]
    if inner is not None and "array" in kinds:
        options.append(st.lists(inner, max_size=4))
    if inner is not None and "object" in kinds:
        options.append(st.dictionaries(keys(a), inner, max_size=4))
    return st.one_of(options) if options else st.nothing()


def nested_values(a: Alphabet) -> st.SearchStrategy:
    leaves = values(a, a.nested_kinds, None)
    if not {"array", "object"} & set(a.nested_kinds):
        return leaves
    return st.recursive(leaves, lambda inner: values(a, a.nested_kinds, inner), max_leaves=6)


def call_lists(a: Alphabet) -> st.SearchStrategy[Calls]:
    arguments = st.dictionaries(keys(a), values(a, a.top_kinds, nested_values(a)), max_size=4)
    # Distinct names in one turn, so one schema per name can type text-valued arguments.
    return st.lists(st.tuples(identifiers, arguments), min_size=1, max_size=a.max_calls, unique_by=lambda c: c[0])


# --- the property ----------------------------------------------------------------------------------


def check_round_trip(subject: Subject, calls: Calls, counts: Counter) -> None:
    """Round-trip one generated turn through one template; count what was checked and what skipped."""
    fmt, measured = subject.format, measure(subject)
    counts["template turns"] += 1
    declared = [limit.description for _, arguments in calls for limit in fmt.limits_for(arguments, "wire")]
    if declared:
        counts[f"reader: skipped, declared wire limit: {declared[0]}"] += 1
        return
    skipped = sorted(label for label in measured["reader"] if CANDIDATES[label].present(calls))
    if skipped == [THREE_CALLS.label]:
        # The template renders two calls right and no more: the turn is checked with its first two.
        calls, skipped = calls[:2], []
        counts["reader: the template carries two calls of three (checked with the first two)"] += 1
    if skipped == [TWO_CALLS.label]:
        with pytest.raises(TemplateError):
            render_wire(subject, calls)
        counts["reader: the template refuses two calls in one turn (checked: it raises)"] += 1
        return
    if skipped:
        counts[f"reader: skipped, measured: {skipped[0]}"] += 1
        return
    wire = render_wire(subject, calls)
    note(f"template {subject.name}, wire: {wire!r}")
    read, ids, content = read_wire(subject, wire)
    assert same_calls(read, calls), f"the reader read {read!r}"
    assert content_is_only_tags(content), f"text beside the calls: {content!r}"
    counts[READER] += 1
    if any(given is not None for given in ids):
        if subject.shape.id_length is not None:  # the turn carried ids: the wire must give them back
            assert ids == [f"call{number:05d}" for number in range(1, len(calls) + 1)], ids
            counts["reader: ids read back exactly"] += 1
        else:  # the template writes ids of its own (Kimi K2's functions.NAME:INDEX)
            counts["reader: ids the template writes itself (not compared)"] += 1
    applicable = applicable_templates(subject)
    for label, _ in subject.response_templates:
        if (label, _) not in applicable:
            counts[f"response template ({label.removeprefix('the ')}): does not read this template's call shape"] += 1
    for label, template in applicable:
        where = f"response template ({label.removeprefix('the ')})"
        declared = [limit.description for _, a in calls for limit in fmt.limits_for(a, "response template")]
        skipped = sorted(lab for lab in measured[f"response template: {label}"] if CANDIDATES[lab].present(calls))
        if declared or skipped:
            counts[f"{where}: skipped, {'declared: ' + declared[0] if declared else 'measured: ' + skipped[0]}"] += 1
            continue
        read = read_with_response_template(subject, template, wire, calls)
        assert same_calls(read, calls), f"{where} read {read!r}"
        counts[f"{where}: read back exactly"] += 1


def report(title: str, counts: Counter) -> str:
    total = counts["template turns"]
    lines = [f"round trip {title}: {counts['generated turns']:,} generated turns, {total:,} template turns"]
    for outcome, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        if outcome not in ("template turns", "generated turns"):
            lines.append(f"  {count:>8,}  {100 * count / total:5.1f}%  {outcome}")
    return "\n".join(lines)


FORMATS_WITH_TEMPLATES = sorted({subject.format.name for subject in all_subjects()})
# CI's budget: about this many generated turns in all (two minutes on two cores), shared by the
# formats with templates, at least CI_MINIMUM each. --deep gives every format its full count.
CI_TURNS, CI_MINIMUM = 12_000, 500


def turns_per_format(pytestconfig, round_trip_examples: int) -> int:
    if pytestconfig.getoption("--deep"):
        return round_trip_examples
    return min(round_trip_examples, max(CI_MINIMUM, CI_TURNS // len(FORMATS_WITH_TEMPLATES)))


@pytest.mark.parametrize("fmt_name", FORMATS_WITH_TEMPLATES)
def test_calls_survive_the_round_trip_through_every_template(fmt_name, round_trip_examples, pytestconfig):
    """Each generated turn goes through one template of the format, drawn with the calls.

    Drawing the template (rather than running every turn through all of
    them) keeps CI's 2,000 turns per format to seconds; hypothesis shrinks a
    failure to one template, and --deep gives every template thousands.
    """
    fmt = FORMATS[fmt_name]
    subjects = subjects_of(fmt)
    counts: Counter = Counter()
    per_template: Counter = Counter()

    @settings(max_examples=turns_per_format(pytestconfig, round_trip_examples),
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(calls=call_lists(alphabet(fmt, subjects)), subject=st.sampled_from(subjects))
    def round_trip(calls, subject):
        counts["generated turns"] += 1
        per_template[subject.name] += 1
        check_round_trip(subject, calls, counts)

    round_trip()
    fewest = min(per_template[subject.name] for subject in subjects)
    print("\n" + report(f"{fmt_name} ({len(subjects)} templates, each drawn at least {fewest:,} times)", counts))
    assert counts[READER] >= 0.9 * counts["template turns"], report(fmt_name, counts)
    assert fewest > 0, per_template


# --- the subjects and what they carry ------------------------------------------------------------------


def cached_subjects() -> list[Subject]:
    return [subject for subject in all_subjects() if subject.name in CACHED_REPOS]


def corpus_subjects() -> list[Subject]:
    return [subject for subject in all_subjects() if subject.name not in CACHED_REPOS]


def test_the_cached_tokenizers_alone_give_formats_under_test():
    assert {"hermes", "gemma4", "llama3-json"} <= {subject.format.name for subject in cached_subjects()}


@needs_corpus
def test_every_format_a_corpus_label_names_has_templates_under_test():
    names = {subject.format.name for subject in all_subjects()}
    labels = corpus.load_labels()
    labelled = {corpus.LABEL_FORMATS[corpus.label_key(label)] for name, label in labels.items()
                if corpus.label_key(label) in corpus.LABEL_FORMATS and name not in corpus.MALFORMED_RENDERINGS}
    assert names == labelled
    assert len(corpus_subjects()) == sum(1 for name, label in labels.items() if corpus.label_key(label)
                                         in corpus.LABEL_FORMATS and name not in corpus.MALFORMED_RENDERINGS)
    print(f"\nformats no template under test writes (their own writer is tested): {sorted(set(FORMATS) - names)}")


def measured_limits(subjects: list[Subject]) -> dict[str, dict]:
    """What each subject was measured not to carry (roundtrip_subjects.measure), compact; only those with any."""
    found = {}
    for subject in subjects:
        measured = {where: summary(labels) for where, labels in measure(subject).items() if labels}
        if measured:
            found[subject.name] = measured
    return found


def test_what_each_cached_tokenizers_template_cannot_carry_is_known():
    subjects = cached_subjects()
    assert measured_limits(subjects) == known_limits({subject.name for subject in subjects}, {})


@needs_corpus
def test_what_each_corpus_template_cannot_carry_is_known():
    subjects = corpus_subjects()
    names = {subject.name for subject in subjects}
    assert measured_limits(subjects) == known_limits(names, corpus.load_labels())
    # Every entry names a template under test: a renamed or dropped template leaves no stale limit behind.
    assert set(TEMPLATE_LIMITS) <= names | set(CACHED_REPOS)


# --- the format's own writer: everything its limits allow comes back -------------------------------------


def writer_carries(fmt: Format, calls: Calls) -> bool:
    wire = "".join(fmt.write_call(ParsedToolCall(name, arguments)) for name, arguments in calls)
    try:
        events = read_events(wire, fmt)
    except UnparsedToolCall:
        return False
    read = [(event.call.name, event.call.arguments) for event in events if isinstance(event, ToolCallEvent)]
    return same_calls(read, calls)


@pytest.mark.parametrize("fmt_name", list(FORMATS))
def test_every_value_a_writer_cannot_carry_is_a_declared_limit(fmt_name):
    fmt = FORMATS[fmt_name]
    undeclared = [c for c in MEASURED if not fmt.limits_for(c.arguments, "wire")]
    failing = _failing(undeclared, lambda arguments: writer_carries(fmt, [("f", arguments)]))
    assert summary(failing) == {}


@pytest.mark.parametrize("fmt_name", list(FORMATS))
def test_the_formats_own_writer_round_trips_whatever_its_limits_allow(fmt_name, round_trip_examples, pytestconfig):
    """One call per turn: ``write_call`` writes one call, and formats join several differently."""
    fmt = FORMATS[fmt_name]

    @settings(max_examples=max(50, turns_per_format(pytestconfig, round_trip_examples) // 10),
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(calls=call_lists(dataclasses.replace(alphabet(fmt, ()), max_calls=1)))
    def round_trip(calls):
        # The alphabet leaves out the kinds of values a limit names; a limit on how they nest
        # (minimax-m3: an empty object below the top) can still be met by a composite value.
        assume(not any(fmt.limits_for(arguments, "wire") for _, arguments in calls))
        note(repr("".join(fmt.write_call(ParsedToolCall(*call)) for call in calls)))
        assert writer_carries(fmt, calls)

    round_trip()


# --- each declared limit, shown -------------------------------------------------------------------------

EXTRA_TRIGGERS = ({"k": float("inf")}, {"k": float("nan")}, {"type": "object", "properties": {}},
                  {"k": [{"a": 1}, {"name": "x"}]},  # a list of objects, the second one "name" first
                  # the XML wires' own boundary inside a value (issue 22: other markers are carried)
                  {"k": "a</parameter>\n<parameter=b>c"}, {"k": "a</arg_value><arg_key>b"},
                  # a DSML key holding a whole typed closer (a key holding only `" string="` is carried)
                  {'a" string="true">b': "v"},
                  # Kimi K3's argument closer then the call's closer, inside a value (other closers are carried)
                  {"k": "a<|close|>argument<|sep|><|close|>call<|sep|>b"},
                  # a value written as one CDATA section, which an XML reader may take as quoting
                  {"k": "<![CDATA[x]]>"})


def boundary_triggers() -> list[dict]:
    """Each XML-style wire's own boundary inside a value, from its declaration: the closer, then the next opening."""
    found = {}
    for fmt in FORMATS.values():
        shape = fmt.wire.arguments
        if isinstance(shape, XmlParameters):
            value = f"a{shape.close}\n{shape.open}b{shape.name_close}c"
        elif isinstance(shape, KeyValuePairs):
            value = f"a{shape.value_close}{shape.key_open}b"
        else:
            continue
        found.setdefault(value, {"k": value})
    return list(found.values())


EXTRA_TRIGGERS = (*EXTRA_TRIGGERS, *boundary_triggers())
# Declared limits that neither the format's writer nor any template under test shows: each
# names a value that only a shape nobody here writes cannot carry, so the generators leave out
# values every template carries. Reported to the lead (/work/notes/core_bugs.md).
OVER_DECLARED: dict[tuple[str, str], str] = {
    # (format, limit description) -> why the limit does not show through any writer or template.
}
DECLARED = [
    pytest.param(fmt, limit, id=f"{fmt.name}: {limit.description}", marks=[pytest.mark.xfail(
        strict=True, reason=f"over-declared limit: {OVER_DECLARED[fmt.name, limit.description]}")]
        if (fmt.name, limit.description) in OVER_DECLARED else [])
    for fmt in FORMATS.values() for limit in fmt.wire_limits
]


def test_every_over_declared_entry_names_a_limit_still_declared():
    # A limit narrowed or removed in its format module leaves its entry here behind: say so.
    declared = {(fmt.name, limit.description) for fmt in FORMATS.values() for limit in fmt.wire_limits}
    assert sorted(set(OVER_DECLARED) - declared) == []


def trigger(fmt: Format, limit) -> dict:
    """Representative arguments this limit names: one no other limit of its kind names, if there is one."""
    pool = [*(c.arguments for c in MEASURED), *EXTRA_TRIGGERS, *({f"k{piece}": "v"} for piece in PIECES)]
    hits = [a for a in pool if limit.applies(a) and (limit.where == "wire" or not fmt.limits_for(a, "wire"))]
    if not hits:
        raise LookupError(f"no representative triggers {fmt.name}'s limit {limit.description!r}: add one")
    return next((a for a in hits if fmt.limits_for(a, limit.where) == [limit]), hits[0])


def what_happens(read) -> str:
    try:
        found = read()
    except (UnparsedToolCall, ValueError, KeyError) as error:
        return f"refused: {type(error).__name__}: {error}"
    return f"read as {found!r}"


@pytest.mark.parametrize(("fmt", "limit"), DECLARED)
def test_a_declared_limit_is_shown_by_a_writer_or_a_template(fmt, limit):
    """Through the format's writer and every template: what happens to a value the limit names.

    A wire limit: some source must refuse it or misread it. A response
    template limit: the reader reads it back from every source, and some
    response template does not.
    """
    arguments = trigger(fmt, limit)
    calls = [("note", arguments)]
    sources = [("the format's writer", fmt.write_call(ParsedToolCall("note", arguments)), None)]
    sources += [(subject.name, render_wire(subject, calls), subject) for subject in subjects_of(fmt)]
    exact, shown = f"read as {calls!r}", []
    for source, wire, subject in sources:
        def by_reader(wire=wire, subject=subject):
            if subject is not None:
                return read_wire(subject, wire)[0]
            return [(e.call.name, e.call.arguments) for e in read_events(wire, fmt) if isinstance(e, ToolCallEvent)]

        outcome = what_happens(by_reader)
        print(f"\n{fmt.name}: {limit.description} {arguments!r} via {source}: reader {outcome}")
        if limit.where == "wire":
            shown.append(outcome != exact)
            continue
        assert outcome == exact  # the reader carries what only the response template cannot
        readers = applicable_templates(subject) if subject else [("the format's", fmt.response_template)]
        for label, template in readers:
            fake = subject or Subject(None, fmt, "", fmt.string_arguments, "", "", ())
            outcome = what_happens(lambda template=template: read_with_response_template(fake, template, wire, calls))
            print(f"  response template ({label}): {outcome}")
            shown.append(outcome != exact)
    if not any(shown):
        require_corpus()  # without it, only the cached tokenizers' templates were tried
    assert any(shown), "no writer or template shows this limit"


# --- named cases: what the wire cannot carry, exactly ---------------------------------------------------


def subject_named(name: str) -> Subject:
    for subject in all_subjects():
        if subject.name == name:
            return subject
    require_corpus()
    raise LookupError(f"{name} is not among the templates under test")


def reader_calls(subject: Subject, calls: Calls):
    wire = render_wire(subject, calls)
    return wire, read_wire(subject, wire)[0]


def test_llama31_refuses_a_second_call_in_one_turn():
    with pytest.raises(TemplateError, match="^This model only supports single tool-calls at once!$"):
        render_wire(subject_named(LLAMA31), [("a", {}), ("b", {})])


def test_gemma4_delimiter_inside_a_string_is_refused_not_misread():
    """The template writes the delimiter unescaped, so the last one opens a string that never closes."""
    wire = render_wire(subject_named("google/gemma-4-E2B-it"), [("note", {"text": 'say <|"|>hi'})])
    # The template ends a call turn with the token that opens the tool's reply.
    assert wire == '<|tool_call>call:note{text:<|"|>say <|"|>hi<|"|>}<tool_call|><|tool_response>'
    never_closed = r"^the reply ended inside a tool call: '<\|tool_call>call:note\{te' at offset 0 was never closed$"
    with pytest.raises(UnparsedToolCall, match=never_closed):
        read_events(wire, FORMATS["gemma4"])


def test_gemma4_delimiter_can_forge_an_argument():
    """Limitation of Gemma 4's wire: a string that closes the delimiter can write a second key."""
    _, read = reader_calls(subject_named("google/gemma-4-E2B-it"), [("note", {"text": 'a<|"|>,admin:true,z:<|"|>b'})])
    assert read == [("note", {"text": "a", "admin": True, "z": "b"})]


def test_qwen_xml_closing_tag_inside_a_value_can_forge_a_parameter():
    """Limitation of the XML wire: nothing is escaped, so </parameter> in a value ends it early."""
    _, read = reader_calls(subject_named("Qwen3-Coder"), [("note", {"text": "x\n</parameter>\n<parameter=admin>\ntrue"})])
    assert read == [("note", {"text": "x", "admin": "true"})]


def test_qwen_xml_closing_call_tag_inside_a_value_is_read_as_text():
    """Issue 22: </tool_call> ends a call only outside a value; in one it is text (tests/test_xml_values.py)."""
    calls = [("note", {"text": "a </tool_call> b"})]
    _, read = reader_calls(subject_named("Qwen3-Coder"), calls)
    assert read == calls


def test_qwen_xml_newlines_at_a_values_ends_survive_the_tags_own():
    """The template writes one newline of its own on each side of a value; the reader takes exactly one."""
    calls = [("note", {"text": "\nindented\n"})]
    wire, read = reader_calls(subject_named("Qwen3-Coder"), calls)
    assert "<parameter=text>\n\nindented\n\n</parameter>" in wire and read == calls
    # A model that writes the value flush against the tags loses nothing either.
    flush = "<tool_call>\n<function=note>\n<parameter=text>indented</parameter>\n</function>\n</tool_call>"
    assert [e.call.arguments for e in read_events(flush, FORMATS["qwen-xml"]) if isinstance(e, ToolCallEvent)] == [
        {"text": "indented"}]


_CANNOT_READ = "the pythonic format cannot read the tool call at offset 0 ('['): "
_NEVER_CLOSED = "the reply ended inside a tool call: "


@pytest.mark.parametrize(
    ("value", "outcome"),
    [
        ('say "hi"', _CANNOT_READ + "expected , or ) at offset 17"),  # the quote ends the string early
        # A raw newline or CR ends a Python string literal, so the list never closes.
        ("line\nbreak", _NEVER_CLOSED + "'[note(text=\"line\\nbreak\")' at offset 0 was never closed"),
        ("cr\rhere", _CANNOT_READ),
        ("nul\x00", _CANNOT_READ),
        ("back\\nslash", {"text": "back\nslash"}),  # read as a Python escape: the value changes
    ],
)
def test_llama4_pythonic_pastes_strings_unescaped(value, outcome):
    wire = render_wire(subject_named("tool_chat_template_llama4_pythonic"), [("note", {"text": value})])
    assert wire == f'[note(text="{value}")]'
    if isinstance(outcome, str):
        with pytest.raises(UnparsedToolCall) as refused:
            read_events(wire, FORMATS["pythonic"])
        assert str(refused.value).startswith(outcome), str(refused.value)
    else:
        assert [e.call.arguments for e in read_events(wire, FORMATS["pythonic"]) if isinstance(e, ToolCallEvent)] == [outcome]


def test_llama4_pythonic_writes_every_value_as_text():
    subject = subject_named("tool_chat_template_llama4_pythonic")
    calls = [("tag", {"labels": ["a", "b"], "options": {"x": 1}, "n": 3, "on": True, "off": None})]
    wire, read = reader_calls(subject, calls)
    assert wire == "[tag(labels=\"['a', 'b']\", options=\"{'x': 1}\", n=\"3\", on=\"True\", off=\"None\")]"
    assert read == [("tag", {"labels": "['a', 'b']", "options": "{'x': 1}", "n": "3", "on": "True", "off": "None"})]


def test_qwen3_coder_30b_writes_lists_as_python_repr():
    """Its published template runs lists and objects through |string, not |tojson."""
    wire, read = reader_calls(subject_named("Qwen-Qwen3-Coder-30B-A3B-Instruct"), [("tag", {"labels": ["a", None]})])
    assert "<parameter=labels>\n['a', None]\n</parameter>" in wire
    assert read == [("tag", {"labels": "['a', None]"})]  # not JSON: no schema can type it
    _, other = reader_calls(subject_named("Qwen3-Coder"), [("tag", {"labels": ["a", None]})])
    assert other == [("tag", {"labels": '["a", null]'})]  # the other Qwen3-Coder templates write JSON


@pytest.mark.parametrize("name", ["Qwen3-Coder", "tool_chat_template_llama4_pythonic"])
def test_an_exponent_float_written_as_text_is_typed_back_as_an_int(name):
    calls = [("scale", {"factor": 1e16})]
    _, read = reader_calls(subject_named(name), calls)
    assert read == [("scale", {"factor": "1e+16"})]
    typed = coerce_arguments(read[0][1], tool_schemas(calls)[0]["function"]["parameters"])
    assert typed == {"factor": 10**16} and type(typed["factor"]) is int


@st.composite
def typed_scalars(draw):
    kind = draw(st.sampled_from(["integer", "number", "boolean", "null"]))
    value = {"integer": st.integers(-(2**63), 2**63), "number": st.floats(allow_nan=False, allow_infinity=False),
             "boolean": st.booleans(), "null": st.none()}[kind]
    return draw(value)


def text_valued_subjects() -> list[Subject]:
    return [subject for subject in all_subjects() if subject.text_valued]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(value=typed_scalars())
@example(value=1e308)  # whole floats whose binary value is not the decimal written
@example(value=1e23)
@example(value=2.251799759896167e16)  # an exponent after a point: a float, as written
def test_values_a_text_wire_writes_as_text_are_typed_back_by_the_schema(value):
    """What qwen-xml's and Llama 4's wires cannot carry typed comes back as text the schema types exactly.

    Except a whole float written with an exponent and no point (1e+16), which the schema's
    ``number`` reads as an int (test_an_exponent_float_written_as_text_is_typed_back_as_an_int),
    and reads exactly as written: "1e+308" is 10**308, not int(1e308), the float's
    binary value (1000000000000000010979...), which no one wrote.
    """
    calls = [("scalar", {"value": value})]
    for subject in text_valued_subjects():
        wire, read = reader_calls(subject, calls)
        note(f"{subject.name}: {wire!r}")
        assert read[0][1]["value"] in {json.dumps(value), str(value)}
        typed = coerce_arguments(read[0][1], tool_schemas(calls)[0]["function"]["parameters"])
        written = str(value)
        if isinstance(value, float) and value.is_integer() and "e" in written and "." not in written:
            assert typed == {"value": int(Decimal(written))}
        else:
            assert same_calls([("scalar", typed)], calls), typed


@pytest.mark.parametrize(
    ("subject_name", "value"),
    [("Qwen/Qwen3-0.6B", "a </tool_call> b"), ("mistralai-Mistral-Nemo-Instruct-2407", "a </s> b"),
     (LLAMA31, "a }; b"), ("google/gemma-4-E2B-it", "a <tool_call|> b")],
)
def test_response_templates_cannot_read_a_closer_inside_a_string(subject_name, value):
    """The reader reads the call; the response template's region ends inside the string."""
    subject = subject_named(subject_name)
    calls = [("note", {"text": value})]
    wire, read = reader_calls(subject, calls)
    assert read == calls
    for _, template in applicable_templates(subject):
        assert what_happens(lambda: read_with_response_template(subject, template, wire, calls)) != f"read as {calls!r}"


@pytest.mark.parametrize("name", ["gemma4", "google-gemma-4-31B-it-interleaved"])
def test_gemma4_variants_that_write_none_are_refused_by_the_response_template(name):
    subject = subject_named(name)
    calls = [("lookup", {"since": None})]
    wire, read = reader_calls(subject, calls)
    assert wire == "<|tool_call>call:lookup{since:None}<tool_call|>"
    assert read == calls
    (label, template), = applicable_templates(subject)
    with pytest.raises(ValueError):
        read_with_response_template(subject, template, wire, calls)
    assert render_wire(subject_named("google/gemma-4-E2B-it"), calls) == (
        "<|tool_call>call:lookup{since:null}<tool_call|><|tool_response>"
    )


@pytest.mark.parametrize("value", ["bell\x01", "two\x02"])
def test_gemma4_response_template_json_dialect_reserves_two_characters(value):
    subject = subject_named("google/gemma-4-E2B-it")
    calls = [("note", {"text": value})]
    wire, read = reader_calls(subject, calls)
    assert read == calls
    for _, template in applicable_templates(subject):
        assert what_happens(lambda: read_with_response_template(subject, template, wire, calls)) != f"read as {calls!r}"


def test_floats_keep_their_value_through_json_templates():
    """tojson writes repr(float), which reads back bit-for-bit; checked on awkward values."""
    awkward = [0.1, -0.0, 5e-324, 1.7976931348623157e308, 1e16, 2.5e-08]
    _, read = reader_calls(subject_named("Qwen/Qwen3-0.6B"), [("f", {"x": awkward})])
    got = read[0][1]["x"]
    assert [math.copysign(1, v) for v in got] == [math.copysign(1, v) for v in awkward]
    assert got == awkward and json.dumps(got) == json.dumps(awkward)
