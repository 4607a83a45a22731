"""DeepSeek V3/R1, V3.1, V3.2 (DSML) and Kimi K2: what the registry tests do not say by themselves.

- The leak matrix, both ways: every sample with calls of every other format
  raises under these readers, and these samples raise under every other.
- DeepSeek V3 and V3.1 share their tokens: right after
  ``<｜tool▁call▁begin｜>`` exactly one of the two opens, whatever follows.
- Generated calls rendered through each real template of these formats
  (the corpus), with the call shape and tools setting the probe found, read
  back exactly, with Kimi's ids.
- DSML values are typed by the wire's ``string`` attribute, not guessed.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio import corpus, probe
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import ToolCallEvent
from templatestudio.formats import FORMATS
from templatestudio.formats import deepseek_dsml, deepseek_v3, deepseek_v31
from templatestudio.resumable_match import FAILED, MATCHED
from templatestudio.templates import ChatTemplate
from oracle import same_json  # the tests' own comparison, not the package's

MINE = ("deepseek-v3", "deepseek-v3.1", "deepseek-dsml", "kimi-k2")
TEMPLATES = {  # corpus template -> the format it writes, and how the probe must render it
    "deepseekv3": ("deepseek-v3", "string arguments, empty content", True),
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B": ("deepseek-v3", "string arguments, content None", True),
    "llama-cpp-deepseek-r1": ("deepseek-v3", "dict arguments, no content", False),
    "deepseek-ai-DeepSeek-V3.1": ("deepseek-v3.1", "dict arguments, no content", True),
    "tool_chat_template_deepseekv31": ("deepseek-v3.1", "dict arguments, empty content", True),
    "deepseek-ai-DeepSeek-V3.2": ("deepseek-dsml", "dict arguments, no content", True),
    "moonshotai-Kimi-K2": ("kimi-k2", "dict arguments, no content", True),
}
needs_corpus = pytest.mark.usefixtures("needs_corpus")


def calls_of(text: str, name: str) -> list[tuple[ParsedToolCall, str | None]]:
    return [(e.call, e.id) for e in read_events(text, FORMATS[name]) if isinstance(e, ToolCallEvent)]


# --- the leak matrix ---------------------------------------------------------------------------

PAIRS = [(reader, writer, index) for reader in FORMATS for writer in FORMATS if reader != writer
         and (reader in MINE or writer in MINE) for index, sample in enumerate(FORMATS[writer].samples) if sample.calls]


@pytest.mark.parametrize(("reader", "writer", "index"), PAIRS, ids=[f"{r}<-{w}-{i}" for r, w, i in PAIRS])
def test_a_call_of_one_format_raises_under_the_other(reader, writer, index):
    with pytest.raises(UnparsedToolCall):
        read_events(FORMATS[writer].samples[index].text, FORMATS[reader])


def test_the_leak_names_the_format_that_wrote_the_call():
    text = FORMATS["deepseek-v3.1"].samples[0].text
    with pytest.raises(UnparsedToolCall, match=r"opens a call in the deepseek-v3\.1 format$"):
        read_events(text, FORMATS["deepseek-v3"])
    with pytest.raises(UnparsedToolCall, match=r"opens a call in the deepseek-v3 format$"):
        read_events(FORMATS["deepseek-v3"].samples[0].text, FORMATS["hermes"])


# --- DeepSeek V3 and V3.1 never both open ----------------------------------------------------------


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(head=st.one_of(
    st.text(max_size=30),
    st.builds(lambda a, b: a + b, st.sampled_from(["function", deepseek_v3.HEAD, "func", "function<"]), st.text(max_size=4)),
))
def test_exactly_one_deepseek_format_opens_after_the_call_token(head):
    for literal in (deepseek_v3.SECTION, deepseek_v3.CALL):
        text = literal + ("\n" if literal == deepseek_v3.SECTION else "") + (
            deepseek_v3.CALL if literal == deepseek_v3.SECTION else "") + head
        verdicts = []
        for fmt in (deepseek_v3.FORMAT, deepseek_v31.FORMAT):
            (opener,) = [o for o in fmt.openers if o.literal == literal]
            verdicts.append(opener.automaton.scan().feed(text)[0])
        assert FAILED in verdicts or MATCHED not in verdicts, (head, verdicts)  # never both
        if len(head) > len(deepseek_v3.HEAD):
            assert sorted(verdicts) == [FAILED, MATCHED], (head, verdicts)  # and one once it can tell


def test_a_tool_named_function_is_v31_when_json_follows():
    text = f"{deepseek_v3.SECTION}{deepseek_v3.CALL}function{deepseek_v3.SEP}{{}}{deepseek_v3.CALL_END}"
    assert calls_of(text, "deepseek-v3.1") == [(ParsedToolCall("function", {}), None)]


def test_a_reply_cut_between_two_deepseek_calls_gives_the_first():
    text = FORMATS["deepseek-v3"].samples[2].text
    first_end = text.index(deepseek_v3.CALL_END) + len(deepseek_v3.CALL_END)
    assert [call.name for call, _ in calls_of(text[:first_end], "deepseek-v3")] == ["get_exchange_rate"]
    with pytest.raises(UnparsedToolCall, match="^the reply ended inside a tool call"):
        read_events(text[: first_end + 30], FORMATS["deepseek-v3"])


# --- DSML values ---------------------------------------------------------------------------------


def test_dsml_values_are_typed_by_the_string_attribute():
    p, end = deepseek_dsml.PARAMETER, deepseek_dsml.PARAMETER_END
    text = (f'{deepseek_dsml.BLOCK}\n{deepseek_dsml.INVOKE}f">\n{p}a" string="true">42{end}\n'
            f'{p}b" string="false">42{end}\n{p}c" string="false">"42"{end}\n{p}d" string="true"> null {end}\n'
            f'{p}e"f" string="false"> [true] {end}\n{deepseek_dsml.INVOKE_END}\n{deepseek_dsml.BLOCK_END}')
    ((call, _),) = calls_of(text, "deepseek-dsml")
    assert call.arguments == {"a": "42", "b": 42, "c": "42", "d": " null ", 'e"f': [True]}
    assert type(call.arguments["b"]) is int


# --- the corpus templates ----------------------------------------------------------------------------


def test_a_variant_claim_is_the_label_and_the_tag_before_the_first_colon():
    assert corpus.label_key({"format": "other:deepseek", "variant": "v3.1: <｜tool▁calls▁begin｜>..."}) == \
        "other:deepseek#v3.1"
    assert corpus.label_key({"format": "other:deepseek", "variant": "v9: ..."}) == "other:deepseek"
    assert corpus.label_key({"format": "other:kimi", "variant": "<|a|>functions.NAME:IDX"}) == "other:kimi"
    assert corpus.label_key({}) is None


@needs_corpus
@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_each_template_probes_as_its_format_with_the_form_it_needs(name):
    found = probe.probe_template(ChatTemplate.from_file(corpus.corpus_dir() / "templates" / f"{name}.jinja"))
    fmt, shape, with_tools = TEMPLATES[name]
    assert (found.format.name, str(found.shape), found.with_tools) == (fmt, shape, with_tools), found.reason
    assert corpus.LABEL_FORMATS[corpus.label_key(corpus.load_labels()[name])] == fmt


KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=12)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3), max_leaves=6)
TURNS = st.lists(st.dictionaries(KEYS, VALUES, max_size=4), min_size=1, max_size=2)


def render_reply(template: ChatTemplate, found: probe.TemplateProbe, turn: list[dict]) -> tuple[str, str]:
    """(prompt, what the template writes for these calls), cut the way the probe cuts its own call."""
    message = found.shape.message()
    (model,) = message["tool_calls"]
    message["tool_calls"] = []
    for number, arguments in enumerate(turn):
        call = copy.deepcopy(model)
        as_string = isinstance(model["function"]["arguments"], str)
        call["function"] = {"name": f"tool_{number}", "arguments": json.dumps(arguments) if as_string else arguments}
        message["tool_calls"].append(call)
    tools = [probe.PROBE_TOOL] if found.with_tools else None
    prompt, _, wire = probe.render_call_turn(template, message, tools)
    return prompt, wire


@needs_corpus
@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_generated_calls_read_back_through_each_template(name):
    template = ChatTemplate.from_file(corpus.corpus_dir() / "templates" / f"{name}.jinja")
    found = probe.probe_template(template)
    fmt = found.format

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(turn=TURNS)
    def round_trip(turn):
        if any(fmt.limits_for(arguments) for arguments in turn):
            return
        prompt, wire = render_reply(template, found, turn)
        opened = fmt.reasoning_opened_by(prompt) and fmt.reasoning[1] in wire
        events = [e for e in read_events(wire, fmt, reasoning_open=opened) if isinstance(e, ToolCallEvent)]
        assert [e.call.name for e in events] == [f"tool_{i}" for i in range(len(turn))], wire
        assert all(same_json(e.call.arguments, a) for e, a in zip(events, turn)), (wire, events)
        if fmt.name == "kimi-k2":
            assert [e.id for e in events] == [f"functions.tool_{i}:{i}" for i in range(len(turn))]

    round_trip()
