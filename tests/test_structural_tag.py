"""wire.structural_tag and integrations.served_grammar without xgrammar: the inputs each refuses, and why.

What the grammars accept and what the reader makes of it is tested against
xgrammar itself in the vLLM environment (tests/vllm/test_structural_tags.py).
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio.formats import FORMATS
from templatestudio.integrations.served_detect import DetectedFormat, grammar_refusals
from templatestudio.integrations.served_grammar import named_tool, request_grammar
from templatestudio.wire.finite_schema import INTEGER_BOUNDS, NUMBER_BOUNDS, finite
from templatestudio.wire.structural_tag import NoGrammar, markup, refusal, structural_tag

HERMES = FORMATS["hermes"].wire
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"tools": [TOOL], "mode": "sometimes"}, "mode must be 'required' or 'auto', not 'sometimes'"),
    ({"tools": []}, "the request has no tools to call"),
    ({"tools": [TOOL], "only": "get_time"}, "the named tool 'get_time' is not among the request's tools"),
    ({"tools": [{"type": "function", "function": {"description": "no name"}}]}, "a tool without a function name"),
    ({"tools": [{"type": "function", "function": "get_weather"}]}, "a tool without a function name"),
])
def test_each_bad_request_is_refused_with_its_reason(kwargs, message):
    with pytest.raises(NoGrammar, match=message.replace("(", r"\(").replace(")", r"\)")):
        structural_tag(HERMES, **kwargs)


def test_every_format_has_a_grammar_or_a_reason_and_never_both():
    for name, fmt in FORMATS.items():
        if fmt.wire is None:
            assert grammar_refusals(fmt) == (("required", f"{name} declares no wire shape"),
                                              ("auto", f"{name} declares no wire shape"))
            continue
        why = refusal(fmt.wire)
        if why is None:
            tag = structural_tag(fmt.wire, [TOOL])
            assert tag["type"] == "structural_tag" and json.loads(json.dumps(tag)) == tag
        else:
            with pytest.raises(NoGrammar) as raised:
                structural_tag(fmt.wire, [TOOL])
            assert str(raised.value) == why


def _objects(node):
    """Every JSON object in node, node itself included (a tag's content, a schema's subschemas)."""
    if isinstance(node, dict):
        yield node
        children = node.values()
    else:
        children = node if isinstance(node, list) else ()
    for child in children:
        yield from _objects(child)


def _triggered_parts(node):
    return (part for part in _objects(node) if part.get("type") == "triggered_tags")


def test_in_auto_mode_every_tag_opens_with_a_trigger():
    """A tag no trigger starts could never be entered: xgrammar only opens tags at a trigger."""
    other = {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}
    checked = 0
    for fmt in FORMATS.values():
        if fmt.wire is None or refusal(fmt.wire) is not None:
            continue
        try:
            tag = structural_tag(fmt.wire, [TOOL, other], mode="auto")
        except NoGrammar as why:  # required mode only: nothing marks where a call starts
            assert "opens with no literal" in str(why), fmt.name
            continue
        for node in _triggered_parts(tag):
            for tag in node["tags"]:
                assert any(tag["begin"].startswith(trigger) for trigger in node["triggers"]), (fmt.name, tag)
                checked += 1
    assert checked >= 30


def test_a_named_tool_is_one_required_call_of_it():
    tag = structural_tag(HERMES, [TOOL, {"function": {"name": "now", "parameters": {}}}], only="now", mode="auto")
    calls = tag["format"]
    assert calls["type"] == "tags_with_separator" and calls["stop_after_first"] and calls["at_least_one"]
    assert "get_weather" not in json.dumps(calls)


def test_markup_is_what_the_reader_takes_for_structure():
    assert set(markup(HERMES)) == {"<tool_call>", "</tool_call>"}
    assert markup(FORMATS["llama3-json"].wire) == ("<|python_tag|>",)  # "{" and "}" are text
    assert ">" not in markup(FORMATS["qwen-xml"].wire)  # one character: left to the tags


SCHEMAS = st.recursive(
    st.sampled_from([{"type": "number"}, {"type": "integer"}, {"type": "string"}, {"type": ["integer", "null"]},
                     {"type": "number", "minimum": 0}]),
    lambda inner: st.one_of(
        st.builds(lambda p: {"type": "object", "properties": p}, st.dictionaries(st.sampled_from("abc"), inner)),
        st.builds(lambda i: {"type": "array", "items": i}, inner),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=8,
)


def _numeric(schema):
    for part in _objects(schema):
        kinds = part.get("type")
        if (set(kinds) if isinstance(kinds, list) else {kinds}) & {"number", "integer"}:
            yield part


@settings(max_examples=200, deadline=None)
@given(SCHEMAS)
def test_every_number_in_a_schema_gets_bounds_and_its_own_bounds_stay(schema):
    untouched = copy.deepcopy(schema)
    bounded = finite(schema)
    assert schema == untouched  # a copy: the request's tools are not changed
    before, after = list(_numeric(schema)), list(_numeric(bounded))
    assert len(before) == len(after)
    for old, new in zip(before, after):
        bounds = NUMBER_BOUNDS if "number" in str(old.get("type")) else INTEGER_BOUNDS
        assert new["minimum"] == old.get("minimum", bounds["minimum"])
        assert new["maximum"] == old.get("maximum", bounds["maximum"])
    assert finite(bounded) == bounded  # bounding twice changes nothing


@pytest.mark.parametrize(("choice", "name"), [
    ("required", None), ("auto", None), (None, None),
    ({"type": "function", "function": {"name": "f"}}, "f"),
    (SimpleNamespace(type="function", function=SimpleNamespace(name="g")), "g"),
    ({"type": "function", "name": "h"}, "h"),  # the Responses API's form
    ({"type": "function"}, None),
])
def test_named_tool_reads_every_form_of_a_named_choice(choice, name):
    assert named_tool(choice) == name


def _request(choice, tools=(TOOL,), parallel=None):
    return SimpleNamespace(tools=list(tools), tool_choice=choice, parallel_tool_calls=parallel)


def _served(name):
    fmt = FORMATS[name]
    return DetectedFormat("m", fmt, (), None, False, grammar_refusals(fmt))


def test_the_refusals_are_each_modes_and_the_start_up_line_tells_them():
    """'required' refused means 'auto' is too; 'auto' alone is refused where no literal opens a call."""
    seen = set()
    for fmt in FORMATS.values():
        refused = dict(grammar_refusals(fmt))
        assert set(refused) <= {"required", "auto"} and ("required" not in refused or "auto" in refused)
        line = _served(fmt.name).describe()
        if "required" in refused:
            assert line.endswith(f"; no structural tag ({refused['required']}): tool_choice 'required' "
                                 "and named tools keep vLLM's JSON")
        elif "auto" in refused:
            assert line.endswith(f"none for 'auto' ({refused['auto']})")
        else:
            assert line.endswith("; structural tags for every tool_choice")
        seen.add(tuple(sorted(refused)))
    assert seen == {(), ("auto",), ("auto", "required")}  # every kind of line is shown


def test_request_grammar_follows_the_choice_and_the_strict_level():
    fmt = _served("hermes")
    assert request_grammar(fmt, _request("none"), every_argument=True) is None
    assert request_grammar(fmt, _request("required", tools=()), every_argument=True) is None
    required = request_grammar(fmt, _request("required"), every_argument=True)
    assert required["format"]["type"] == "tags_with_separator" and '"city"' in json.dumps(required)
    loose = request_grammar(fmt, _request("required"), every_argument=False)
    assert '"city"' not in json.dumps(loose)  # a tool without strict: any JSON object
    auto = request_grammar(fmt, _request("auto", parallel=False), every_argument=True)
    assert auto["format"]["type"] == "triggered_tags" and auto["format"]["stop_after_first"]


def test_a_mode_the_format_has_no_grammar_for_gives_none_quietly(caplog):
    """The start-up line told it once; a request in that mode logs nothing more."""
    served = _served("llama3-json")
    assert "opens with no literal" in served.grammar_refusal("auto")
    with caplog.at_level("INFO", logger="vllm.templatestudio"):
        assert request_grammar(served, _request("auto"), every_argument=True) is None
        assert request_grammar(served, _request("required"), every_argument=True) is not None
    assert caplog.text == ""


def test_a_request_the_grammar_cannot_be_built_for_is_none_with_a_warning(caplog):
    named = {"type": "function", "function": {"name": "get_time"}}
    with caplog.at_level("WARNING", logger="vllm.templatestudio"):
        assert request_grammar(_served("hermes"), _request(named), every_argument=True) is None
    assert "the named tool 'get_time' is not among the request's tools" in caplog.text
