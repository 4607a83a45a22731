"""Each probe on each of the four families, and the step-12 table built from them."""

from __future__ import annotations

import pytest

from rates import QUESTION, get_exchange_rate
from templatestudio.compare import ToolSupport, format_table, tool_support
from templatestudio.render import render
from templatestudio.tools import call_survives, renders_tools, tool_call_message, tool_schema

TOOLS = [tool_schema(get_exchange_rate)]

# family: (renders tools, call survives, ships a response template, parse with)
EXPECTED = {
    "qwen3": (True, True, False, "your own parser"),
    "llama3": (False, False, False, "none: no tool calling"),
    "gemma3": (False, False, False, "none: no tool calling"),
    "gemma4": (True, True, True, "response template"),
}
FAMILY_ORDER = list(EXPECTED)

COURSE_TABLE = """\
family  tools  call   parse with
qwen3   True   True   your own parser
llama3  False  False  none: no tool calling
gemma3  False  False  none: no tool calling
gemma4  True   True   response template"""


def test_the_fixture_covers_the_four_course_families(tokenizers):
    assert list(tokenizers) == FAMILY_ORDER


@pytest.mark.parametrize("family", FAMILY_ORDER)
def test_renders_tools(tokenizers, family):
    assert renders_tools(tokenizers[family], QUESTION, TOOLS) is EXPECTED[family][0]


@pytest.mark.parametrize("family", FAMILY_ORDER)
def test_renders_tools_is_true_exactly_when_the_schema_reaches_the_prompt(tokenizers, family):
    with_tools = render(tokenizers[family], QUESTION, tools=TOOLS)
    without = render(tokenizers[family], QUESTION)
    # the description is prose only the schema carries
    described = "Look up how many units" in with_tools
    assert described is EXPECTED[family][0]
    assert (with_tools != without) is described


@pytest.mark.parametrize("family", FAMILY_ORDER)
def test_call_survives(tokenizers, family):
    assert call_survives(tokenizers[family], "get_exchange_rate") is EXPECTED[family][1]


@pytest.mark.parametrize("family", FAMILY_ORDER)
def test_call_survives_for_another_tool_name(tokenizers, family):
    assert call_survives(tokenizers[family], "list_currencies") is EXPECTED[family][1]


def test_llama3_renders_the_call_as_an_empty_assistant_turn(tokenizers):
    probe = [{"role": "user", "content": "Use the tool."}, tool_call_message("get_exchange_rate", {})]
    rendered = render(tokenizers["llama3"], probe, add_generation_prompt=False)
    assert rendered.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n<|eot_id|>")


@pytest.mark.parametrize("family", FAMILY_ORDER)
def test_response_template_presence(tokenizers, family):
    template = tokenizers[family].response_template
    assert (template is not None) is EXPECTED[family][2]
    if template is not None:
        assert isinstance(template, dict)


@pytest.mark.parametrize("family", FAMILY_ORDER)
def test_tool_support_row(tokenizers, family):
    tools_ok, call_ok, _, parse_with = EXPECTED[family]
    row = tool_support(family, tokenizers[family], QUESTION, TOOLS)
    assert row == ToolSupport(family, tools_ok, call_ok, parse_with)


def test_tool_support_probes_with_the_first_tools_name(tokenizers):
    function = {"name": "list_currencies", "description": "List them.", "parameters": {"type": "object"}}
    other = [{"type": "function", "function": function}]
    assert tool_support("qwen3", tokenizers["qwen3"], QUESTION, other) == ToolSupport(
        "qwen3", True, True, "your own parser"
    )


def test_format_table_prints_the_course_table(tokenizers):
    rows = [tool_support(family, tokenizers[family], QUESTION, TOOLS) for family in FAMILY_ORDER]
    assert format_table(rows) == COURSE_TABLE


def test_format_table_of_no_rows_is_the_header():
    assert format_table([]) == "family  tools  call   parse with"


def test_the_table_command_prints_the_course_table(tokenizers, monkeypatch, capsys):
    import templatestudio.render
    from templatestudio.__main__ import main
    from templatestudio.families import TABLE_FAMILIES

    by_repo = {model_id: tokenizers[family] for family, model_id in TABLE_FAMILIES.items()}
    # reuse the session's tokenizers instead of loading all four again
    monkeypatch.setattr(templatestudio.render, "load_tokenizer", by_repo.__getitem__)
    assert main(["table"]) == 0
    assert capsys.readouterr().out.startswith(COURSE_TABLE + "\n")
