"""Deriving a wire shape from a template alone (issue 25): the class, the corpus, the way in.

1. The class: for any shape of the kinds ``templatestudio.derive`` claims,
   a template written to render calls in it (``derive_synthetic``) is
   derived back to a format that writes every generated call as that shape
   does and reads the shape's writing back, streamed in any chunks as whole.
2. The corpus: no derived format misreads anything: it reads each
   template's own probe call back exactly, never reads a registered
   format's sample as other calls than that format does, and its malformed
   variants raise or are read, never shown as text.
3. The way in: ``detect_format`` falls back to a derived format (sandboxed
   or not, the same object each time) and says why when none is derived;
   ``check`` prints the declaration, which is Python that rebuilds it; the
   reader and the stream use the format unchanged; the vLLM glue says it
   was derived.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import derive_synthetic as ds
import malformed_variants as mv
from test_reading_properties import stream_events
from templatestudio import (
    NoToolCallFormat, ParsedToolCall, ToolCallStream, UnparsedToolCall, detect_format, read_events, read_tool_calls,
    resolve_format,
)
from templatestudio.corpus import corpus_templates
from templatestudio.derive import derive, derive_format, derived_format
from templatestudio.detect import derived_shape
from templatestudio.events import ToolCallEvent, merge_deltas
from templatestudio.probe import probe_template
from templatestudio.probe_call import PROBE_ARGUMENTS, PROBE_NAME
from templatestudio.templates import ChatTemplate
from templatestudio.wire import shape as shape_language

DERIVE = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

# --- 1. the class ----------------------------------------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
KEYS = st.from_regex(r"[a-z][a-z_]{0,7}", fullmatch=True)


def _values(wire):
    """Argument values the shape can carry: any JSON for JSON bodies; no markup in an unescaped wire's text."""
    if isinstance(wire.arguments, (shape_language.JsonArguments, shape_language.JsonObject)):
        hostile = [*wire.markers, *wire.closers, '"', "\\", "\n", "{", "}", "é☃", "日本"]
        text = st.lists(st.one_of(st.sampled_from(hostile), st.text("ab ,:", max_size=3)), max_size=5).map("".join)
    else:
        text = st.text("abc xyz,:é☃-", max_size=8)
    scalars = st.one_of(text, st.integers(-10**6, 10**6), st.booleans(), st.none(),
                        st.floats(allow_nan=False, allow_infinity=False, width=32))
    nested = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                             st.dictionaries(KEYS, inner, max_size=3)), max_leaves=6)
    if isinstance(wire.arguments, shape_language.XmlParameters):
        return st.one_of(text, st.integers(-1000, 1000), st.booleans())
    return nested


def _calls(wire):
    call = st.builds(ParsedToolCall, NAMES, st.dictionaries(KEYS, _values(wire), max_size=4))
    return st.lists(call, min_size=1, max_size=3)


def _read_back(got, expected, fmt) -> bool:
    """got is expected; where the wire writes values as text, as their JSON spelling."""
    if not fmt.values_are_text:
        return got == expected
    def text(value):
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    spelled = [ParsedToolCall(call.name, {key: text(value) for key, value in call.arguments.items()})
               for call in expected]
    return got == spelled


@DERIVE
@given(data=st.data())
def test_a_template_writing_any_derivable_shape_is_derived_to_that_shape(data):
    wire = data.draw(ds.shapes(), "shape")
    found = derive(ChatTemplate("synthetic", ds.template_of(wire)))
    assert found.wire is not None, found.refused
    fmt = derived_format(found.wire, "synthetic")
    assert fmt.derived_from == "synthetic" and fmt.markers == wire.markers
    calls = data.draw(_calls(wire), "calls")
    written = ds.written(wire, calls)
    assert all(found.wire.write_call(call) == wire.write_call(call) for call in calls)
    events = read_events(written, fmt)
    assert _read_back([event.call for event in events if isinstance(event, ToolCallEvent)], calls, fmt)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(written)), max_size=6), "cuts"))
    pieces = [written[a:b] for a, b in zip([0, *cuts], [*cuts, len(written)])]
    assert stream_events(fmt, pieces) == merge_deltas(events)
    if wire.reasoning is not None:
        text = f"{wire.reasoning.open}think first{wire.reasoning.close}{written}"
        assert split_reasoning_text(text, fmt) == "think first"


def split_reasoning_text(text, fmt) -> str:
    from templatestudio import split_reasoning

    return split_reasoning(text, fmt)[0].strip()


def test_the_class_covers_every_kind_and_every_literal_style():
    seen = set()

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(ds.shapes())
    def collect(wire):
        seen.add(type(wire.arguments).__name__)
        seen.add("no closer" if not wire.call.close else "closer")
        seen.add("section" if wire.section else "bare" if not wire.call.open else "call")
        seen.update(style for style, mark in (("bars", "<|"), ("wide", "<｜"), ("square", "["), ("angle", "<"))
                    if wire.call.open.startswith(mark))

    collect()
    assert seen >= {"JsonArguments", "JsonObject", "OwnValues", "XmlParameters", "closer", "no closer",
                    "bars", "wide", "square", "angle", "section", "bare", "call"}


# --- 2. the corpus ------------------------------------------------------------------------------------


def _corpus():
    found = []
    for path in corpus_templates():
        template = ChatTemplate(path.stem, path.read_text(encoding="utf-8"))
        found.append((template, probe_template(template), derive(template)))
    return found


CORPUS = _corpus()
DERIVED = [(template, probe, shape) for template, probe, shape in CORPUS if shape.wire is not None]


def test_every_corpus_template_is_derived_or_refused_with_a_reason():
    for template, probe, shape in CORPUS:
        assert (shape.wire is None) != (shape.refused is None), template.name
        if shape.wire is None:
            assert shape.refused.strip(), template.name
    # Derivation never consults the registry, so every count is already leave-one-out; the floor is
    # what this build derives (README, "Deriving a format"): it may rise, never fall.
    assert len(DERIVED) >= 62


@pytest.mark.parametrize("name", [template.name for template, _, _ in DERIVED])
def test_a_derived_format_reads_its_templates_probe_call_exactly(name):
    template, probe, shape = next(item for item in DERIVED if item[0].name == name)
    fmt = derived_format(shape.wire, name)
    reply = read_tool_calls(probe.wire, fmt)
    assert [call.name for call in reply.calls] == [PROBE_NAME]
    arguments = reply.calls[0].arguments
    assert arguments.keys() == PROBE_ARGUMENTS.keys()
    for key, value in PROBE_ARGUMENTS.items():
        assert arguments[key] == value or (fmt.values_are_text and arguments[key] in
                                           {json.dumps(value), str(value)}), (key, arguments[key])


@pytest.mark.parametrize("name", [template.name for template, probe, _ in DERIVED if probe.format is not None])
def test_a_derived_format_never_reads_a_registered_sample_or_near_miss_as_other_calls(name):
    template, probe, shape = next(item for item in DERIVED if item[0].name == name)
    fmt, registered = derived_format(shape.wire, name), probe.format
    agreed = 0
    for sample in registered.samples:
        try:
            reply = read_tool_calls(sample.text, fmt)
        except UnparsedToolCall:
            continue  # refused: not a wrong reading
        if reply.calls:
            expected = read_tool_calls(sample.text, registered).calls
            if reply.cut is not None:  # a call left unclosed is cut, not read: the ones before it must agree
                expected = expected[: len(reply.calls)]
            assert _same_reading(reply.calls, expected, fmt), (sample.source, reply.calls, expected)
            agreed += 1
    print(f"{name}: {agreed} of {registered.name}'s samples read alike, the rest refused")
    # A near miss (a malformed call, or prose naming the markers) is never read as calls either, unless
    # the reply is cut after whole calls (Reply.cut, or the text is the start of what the declaration
    # writes for them: a section never closed), the text is a call the declaration itself writes (the
    # module refuses it by a rule of its own: Llama 3's tool-schema echo), or it repeats a key of a JSON
    # object (JSON's rule, the last one wins, as for every registered JSON reader but Apriel's).
    for miss in registered.near_misses:
        try:
            reply = read_tool_calls(miss.text, fmt)
        except UnparsedToolCall:
            continue
        if reply.calls and reply.cut is None and not _repeats_a_key(miss.text):
            assert fmt.wire.write_calls(reply.calls).startswith(miss.text.strip()), (miss.why, miss.text)


def _repeats_a_key(text: str) -> bool:
    def pairs(items):
        keys = [key for key, _ in items]
        if len(keys) != len(set(keys)):
            raise ValueError("repeated")
        return dict(items)

    start = text.find("[") if "[" in text else text.find("{")
    try:
        json.JSONDecoder(object_pairs_hook=pairs).raw_decode(text, start)
    except ValueError as error:
        return str(error) == "repeated"
    return False


def _same_reading(derived, registered, fmt) -> bool:
    if len(derived) != len(registered) or any(a.name != b.name for a, b in zip(derived, registered)):
        return False
    if not fmt.values_are_text:
        return all(a.arguments == b.arguments for a, b in zip(derived, registered))
    return all(a.arguments.keys() == b.arguments.keys() for a, b in zip(derived, registered))


@pytest.mark.parametrize("name", [template.name for template, _, _ in DERIVED])
def test_a_derived_formats_malformed_calls_raise_or_are_read_never_shown_as_text(name):
    template, _, shape = next(item for item in DERIVED if item[0].name == name)
    fmt = derived_format(shape.wire, name)
    failures = [why for variant in mv.variants(fmt) if (why := mv.settled(fmt, variant)) is not None]
    assert failures == [], failures[:3]


@pytest.mark.parametrize("name", [template.name for template, _, _ in DERIVED])
def test_a_derived_format_streams_as_it_reads_whole(name):
    template, probe, shape = next(item for item in DERIVED if item[0].name == name)
    fmt = derived_format(shape.wire, name)
    rng = random.Random(name)
    texts = [probe.wire, f"Checking. {probe.wire}", probe.wire[: len(probe.wire) // 2],
             *(variant.text for variant in list(mv.variants(fmt))[:40])]
    for text in texts:
        try:
            whole = ("events", merge_deltas(read_events(text, fmt)))
        except UnparsedToolCall as error:
            whole = ("raises", type(error))
        for _ in range(3):
            cuts = sorted(rng.sample(range(len(text) + 1), min(4, len(text) + 1)))
            pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
            try:
                streamed = ("events", stream_events(fmt, pieces))
            except UnparsedToolCall as error:
                streamed = ("raises", type(error))
            assert streamed == whole, (text, pieces)


# --- 3. the way in ----------------------------------------------------------------------------------

# A shape no registered format reads: [CALLF]NAME<|args|>{...}<|endf|>
UNKNOWN = ds.template_of(shape_language.WireShape(
    shape_language.Call("[CALLF]", "<|endf|>"), shape_language.NameBetween("", "<|args|>"),
    shape_language.JsonObject(), separator="\n"))


def test_detect_format_falls_back_to_the_derived_format_and_marks_it():
    assert probe_template(UNKNOWN).format is None
    assert detect_format(UNKNOWN, derive=False) is None
    in_process = detect_format(UNKNOWN, deadline=None)
    sandboxed = detect_format(UNKNOWN)
    assert in_process.derived_from == sandboxed.derived_from == "template"
    assert detect_format(UNKNOWN, deadline=None) is in_process  # formats compare by identity: one per template
    assert resolve_format(UNKNOWN).wire == in_process.wire
    call = ParsedToolCall("get_weather", {"city": "Paris", "days": [1, 2]})
    text = "Let me look. " + in_process.write_call(call)
    assert read_tool_calls(text, UNKNOWN).calls == [call]  # the reader resolves template text to it
    stream = ToolCallStream(in_process)
    events = [event for piece in text for event in stream.feed(piece)] + stream.close()
    assert [event.call for event in events if isinstance(event, ToolCallEvent)] == [call]


def test_a_template_nothing_derives_says_why():
    bare = ds.template_of(shape_language.WireShape(
        shape_language.Call("[CALLF]", "<|endf|>"), shape_language.NameBetween("", "<|args|>"),
        shape_language.JsonObject())).replace('{{ "[CALLF]" }}', "")  # no literal opens the call
    shape, fmt = derived_shape(bare)
    assert fmt is None and shape.refused.startswith("no literal opens a call")
    with pytest.raises(NoToolCallFormat, match=r"none derived: no literal opens a call"):
        resolve_format(bare)
    with pytest.raises(NoToolCallFormat, match=r"^template: no wire shape derived: no literal opens a call"):
        derive_format(bare)


def test_a_template_that_writes_no_call_has_nothing_to_derive():
    shape = derive("{% for m in messages %}{{ m.content }}{% endfor %}")
    assert shape.wire is None and shape.refused.startswith("nothing to derive from: ")


def test_the_printed_declaration_is_python_that_rebuilds_the_shape():
    for _, _, shape in DERIVED:
        source = shape.wire.source()
        namespace = {name: getattr(shape_language, name) for name in dir(shape_language) if name[:1].isupper()}
        exec(source, namespace)  # noqa: S102 - the package's own output, read back
        assert namespace["WIRE"] == shape.wire, source


def test_check_prints_the_declaration_of_a_derived_format(tmp_path, capsys):
    from templatestudio.__main__ import main

    path = tmp_path / "unknown.jinja"
    path.write_text(UNKNOWN, encoding="utf-8")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "derived format (its declaration is printed below the table)" in out
    assert "no registered format reads its calls; derived and round-tripped:\nWIRE = WireShape(" in out
    assert "call=Call(open='[CALLF]', close='<|endf|>')" in out


def test_the_vllm_glue_says_the_format_was_derived():
    from templatestudio.integrations import served_detect

    class Tokenizer:
        name_or_path, chat_template = "unknown-model", UNKNOWN
        special_tokens_map = {"bos_token": "", "eos_token": ""}

        def get_chat_template(self, tools=None):
            return self.chat_template

    detected = served_detect.detect_served_format(Tokenizer())
    assert detected.format.derived_from
    assert detected.describe().startswith(
        "templatestudio: unknown-model's chat template matches no registered format, so its wire shape was "
        "derived from the template and checked by round trip")


@pytest.mark.parametrize("name", [template.name for template, _, _ in DERIVED])
def test_a_derived_format_has_a_structural_tag_or_a_reason_as_a_registered_one_does(name):
    from templatestudio.wire.structural_tag import NoGrammar, refusal, structural_tag

    wire = next(shape.wire for template, _, shape in DERIVED if template.name == name)
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    why = refusal(wire)
    if why is not None:
        with pytest.raises(NoGrammar, match=re.escape(why)):
            structural_tag(wire, [tool])
        return
    tag = structural_tag(wire, [tool])
    assert tag["type"] == "structural_tag" and json.loads(json.dumps(tag)) == tag
    opening = wire.section.open if wire.section is not None else wire.call.open
    assert json.dumps(opening, ensure_ascii=False)[1:-1] in json.dumps(tag, ensure_ascii=False)
