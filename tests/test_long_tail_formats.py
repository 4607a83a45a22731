"""The long-tail formats of issue 14 (Apriel, Command R+, GigaChat, Functionary v3.1, firefunction v2).

What the registry tests cannot see from the samples alone: the probe's
handling of the templates that write these calls (template variables, a
tail after every conversation, a call written as a turn of its own), the
formats that share a literal or a JSON shape telling each other's calls
apart, the reasons a refusal gives, and Apriel 1.5's Python-literal
arguments read back exactly for generated values.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest
import transformers.utils.chat_template_utils as chat_utils
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.corpus import corpus_dir
from templatestudio.engine import read_events
from templatestudio.events import ToolCallEvent
from templatestudio.formats import FORMATS
from templatestudio.probe import PROBE_TOOL, _probe, template_variables
from templatestudio.templates import ChatTemplate
from oracle import same_json  # the tests' own comparison, not the package's

needs_corpus = pytest.mark.usefixtures("needs_corpus")


def calls(text: str, name: str) -> list[ParsedToolCall]:
    return [event.call for event in read_events(text, FORMATS[name]) if isinstance(event, ToolCallEvent)]


def corpus_probe(stem: str):
    return _probe(ChatTemplate.from_file(corpus_dir() / "templates" / f"{stem}.jinja"))


# --- the probe's rendering ---------------------------------------------------------------------


def test_template_variables_mirror_the_tools_and_fix_the_date():
    variables = template_variables([PROBE_TOOL])
    assert json.loads(variables["functions"]) == [PROBE_TOOL["function"]]
    assert (variables["datetime"], variables["date_string"]) == ("2024-07-26", "26 Jul 2024")
    assert template_variables(None)["functions"] == ""


@pytest.mark.parametrize("clock", ["2026-12-05 23:59:59", "2026-12-06 00:00:00", "1999-01-01 08:00:00"])
def test_the_template_clock_is_the_probes_whatever_the_real_time(clock, monkeypatch):
    """strftime_now passed as a variable shadows transformers' global, so a render never sees midnight pass."""
    real = datetime.fromisoformat(clock)

    class Stopped(datetime):
        @classmethod
        def now(cls, tz=None):
            return real

    monkeypatch.setattr(chat_utils, "datetime", Stopped)
    template = ChatTemplate("t", "{{ strftime_now('%Y-%m-%d') }}|{{ strftime_now('%d %b %Y') }}")
    assert template.render([]) == real.strftime("%Y-%m-%d|%d %b %Y")  # the check sees the real clock moved
    assert template.render([], **template_variables(None)) == "2024-07-26|26 Jul 2024"


def test_render_passes_template_variables_and_they_override_special_tokens():
    template = ChatTemplate("t", "{{ functions }}|{{ bos_token }}|{{ datetime }}")
    assert template.render([], functions="F", datetime="D") == "F||D"
    assert template.render([], functions="F", datetime="D", bos_token="B") == "F|B|D"


@needs_corpus
@pytest.mark.parametrize(("stem", "name", "wire_start"), [
    ("fireworks-ai-llama-3-firefunction-v2", "firefunction-v2", ' functools[{"name": "studio_probe_lookup"'),
    ("CohereForAI-c4ai-command-r-plus-tool_use", "command-r-plus", '\nAction:\n```json\n[\n    {\n        "tool_name"'),
    ("GigaChat3-10B-A1.8B", "gigachat", '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "studio_probe_lookup"'),
    ("GigaChat3.1-10B-A1.8B", "gigachat", '<|function_call|>{"name": "studio_probe_lookup"'),
    ("meetkai-functionary-medium-v3.1", "functionary-v3.1", '<function=studio_probe_lookup>{"note": "two words"'),
    ("Apriel-1.6-15b-Thinker-fixed", "apriel", '\n<tool_calls>[{"name": "studio_probe_lookup", "arguments": {"note"'),
    ("ServiceNow-AI-Apriel-1.5-15b-Thinker", "apriel", "\n<tool_calls>[{\"name\": \"studio_probe_lookup\", \"arguments\": {'note'"),
])
def test_long_tail_templates_probe_as_their_format(stem, name, wire_start):
    probe = corpus_probe(stem)
    assert probe.format is FORMATS[name], probe.reason
    assert probe.wire.startswith(wire_start), probe.wire[:120]
    assert probe.renders_tools and probe.call_survives and str(probe.shape) == "dict arguments, no content"


@needs_corpus
def test_command_r_plus_wire_loses_the_instruction_tail_and_the_turn_header():
    wire = corpus_probe("CohereForAI-c4ai-command-r-plus-tool_use").wire
    assert wire.endswith("]```") and "Write 'Action:'" not in wire and "CHATBOT_TOKEN" not in wire


# --- formats that share a literal or a shape -------------------------------------------------


def test_functionary_and_qwen_xml_refuse_each_others_bare_function_tag():
    functionary = '<function=f>{"a": 1}</function>'
    qwen = "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>"
    with pytest.raises(UnparsedToolCall, match="opens a call in the functionary-v3.1 format"):
        read_events(functionary, FORMATS["qwen-xml"])
    with pytest.raises(UnparsedToolCall, match="opens a call in the qwen-xml format"):
        read_events(qwen, FORMATS["functionary-v3.1"])
    # Functionary's body in Qwen's wrapper is a broken Qwen call, not a Functionary one.
    with pytest.raises(UnparsedToolCall, match=r"cannot read .*expected </function> or another parameter"):
        read_events(f"<tool_call>\n{functionary}\n</tool_call>", FORMATS["qwen-xml"])
    assert calls(functionary, "functionary-v3.1") == [ParsedToolCall("f", {"a": 1})]


def test_command_r_plus_and_fenced_json_refuse_each_other():
    action = 'Action:\n```json\n[{"tool_name": "f", "parameters": {}}]\n```'
    fenced = '```json\n{"name": "f", "arguments": {}}\n```'
    with pytest.raises(UnparsedToolCall, match="opens a call in the command-r-plus format"):
        read_events(action, FORMATS["fenced-json"])
    with pytest.raises(UnparsedToolCall, match="opens a call in the fenced-json format"):
        read_events(fenced, FORMATS["command-r-plus"])
    # Command R+'s list without its Action: label is a code sample for both.
    bare = action.removeprefix("Action:\n")
    assert calls(bare, "command-r-plus") == [] and calls(bare, "fenced-json") == []


def test_firefunction_reads_its_list_only_behind_its_marker():
    listed = '[{"name": "f", "arguments": {}}]'
    assert calls("functools" + listed, "firefunction-v2") == [ParsedToolCall("f", {})]
    for other in ("llama3-json", "xlam", "phi4-mini"):
        if other in FORMATS:
            with pytest.raises(UnparsedToolCall, match="opens a call in the firefunction-v2 format"):
                read_events("functools" + listed, FORMATS[other])
    if "xlam" in FORMATS:
        with pytest.raises(UnparsedToolCall, match="opens a call in the xlam format"):
            read_events(listed, FORMATS["firefunction-v2"])


def test_gigachat_reads_both_versions_and_a_plain_message_end_is_text():
    body = '{"name": "f", "arguments": {"a": 1}}'
    for text in (f"Hi<|message_sep|>\n\nfunction call<|role_sep|>\n{body}", f"Hi<|function_call|>{body}"):
        events = read_events(text, FORMATS["gigachat"])
        assert [e.call for e in events if isinstance(e, ToolCallEvent)] == [ParsedToolCall("f", {"a": 1})]
        assert "".join(getattr(e, "text", "") for e in events) == "Hi"
    assert calls("Hi<|message_sep|>", "gigachat") == []


# --- refusals say why ---------------------------------------------------------------------------

REFUSALS = [
    ("apriel", '<tool_calls>{"name": "a", "arguments": {}}</tool_calls>', "a single object inside <tool_calls>"),
    ("apriel", '<tool_calls>[{"name": "a", "arguments": {}, "name": "b"}]</tool_calls>', "the key 'name' is given twice"),
    ("apriel", '<tool_calls>[{"name": "a", "arguments": {}}] x</tool_calls>', "expected </tool_calls> after the list"),
    ("command-r-plus", "Action:\n```json\n[]\n```", "an empty list of actions"),
    ("command-r-plus", 'Action: ```json\n[{"name": "a", "arguments": {}}]```', "the call has no 'tool_name'"),
    ("gigachat", '<|function_call|>[{"name": "a", "arguments": {}}]', "a JSON list after <|function_call|>"),
    ("functionary-v3.1", '<function=a>"{}"</function>', "the arguments of 'a' are a JSON string, not an object"),
    ("functionary-v3.1", '<function=a b>{}</function>', "the function name 'a b' holds whitespace"),
    ("firefunction-v2", 'functools[{"name": "a", "arguments": "{}"}]', "the arguments of 'a' must be a JSON object"),
]


@pytest.mark.parametrize(("name", "text", "reason"), REFUSALS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(REFUSALS)])
def test_refusals_name_the_offset_the_marker_and_the_reason(name, text, reason):
    with pytest.raises(UnparsedToolCall) as refused:
        read_events(text, FORMATS[name])
    message = str(refused.value)
    assert message.startswith(f"the {name} format cannot read the tool call at offset 0 (")
    assert reason in message, message


# --- Apriel 1.5: Python-literal arguments, exactly as written ------------------------------------

PYTHON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**18), 10**18)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
       arguments=st.dictionaries(st.text(max_size=6), PYTHON_VALUES, max_size=4))
def test_apriel_reads_the_python_repr_its_15_template_writes(name, arguments):
    if FORMATS["apriel"].limits_for(arguments):
        return
    # What the template writes: '{"name": "' + name + '", "arguments": ' + arguments|string + '}'
    text = '<tool_calls>[{"name": "' + name + '", "arguments": ' + repr(arguments) + "}]</tool_calls>"
    (call,) = calls(text, "apriel")
    assert call.name == name
    assert same_json(call.arguments, arguments), (text, call.arguments)

