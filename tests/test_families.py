"""The course's families, declared once (templatestudio.families), checked against their tokenizers."""

from __future__ import annotations

from pathlib import Path

import pytest

import families as course_families
from templatestudio.detect import detect_format
from templatestudio.families import (
    COURSE_FAMILIES,
    FAMILIES,
    GEMMA4,
    LLAMA31,
    TABLE_FAMILIES,
    Family,
    family,
)
from templatestudio.rates import QUESTION, get_exchange_rate
from templatestudio.render import load_tokenizer
from templatestudio.tools import call_survives, renders_tools, tool_schema

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [tool_schema(get_exchange_rate)]


@pytest.fixture(scope="module")
def loaded(tokenizers):
    """Every declared family's tokenizer; the four table families come from the session."""
    return {f.name: tokenizers.get(f.name) or load_tokenizer(f.repo_id) for f in COURSE_FAMILIES}


@pytest.mark.parametrize("declared", COURSE_FAMILIES, ids=lambda f: f.name)
def test_each_declaration_is_what_the_probes_find(loaded, declared: Family):
    tokenizer = loaded[declared.name]
    assert renders_tools(tokenizer, QUESTION, TOOLS) is declared.renders_tools
    assert call_survives(tokenizer, "get_exchange_rate") is declared.call_survives
    assert (tokenizer.response_template is not None) is declared.response_template
    found = detect_format(tokenizer)
    assert (found.name if found else None) == declared.call_format


def test_the_course_keeps_the_tutorials_names():
    # families.py at the repository root is the tutorial's module: exactly its two names.
    assert course_families.FAMILIES == {
        "qwen3": "Qwen/Qwen3-0.6B",
        "llama3": "NousResearch/Meta-Llama-3-8B-Instruct",
        "gemma3": "unsloth/gemma-3-1b-it",
    }
    assert course_families.GEMMA4 == "google/gemma-4-E2B-it"
    assert course_families.FAMILIES is FAMILIES and course_families.GEMMA4 is GEMMA4
    assert [name for name in vars(course_families) if name.isupper()] == ["FAMILIES", "GEMMA4"]


def test_the_table_is_the_tutorials_three_then_gemma4():
    assert list(TABLE_FAMILIES.items()) == [*FAMILIES.items(), ("gemma4", GEMMA4)]
    assert [f.name for f in COURSE_FAMILIES] == [*TABLE_FAMILIES, "llama3.1"]
    assert LLAMA31 == family("llama3.1").repo_id == "unsloth/Llama-3.1-8B-Instruct"


def test_an_unknown_family_names_the_known_ones():
    names = "qwen3, llama3, gemma3, gemma4, llama3.1"
    with pytest.raises(KeyError, match=f"no course family 'llama4'; the families are {names}"):
        family("llama4")


def test_no_test_or_module_writes_a_family_repo_id_of_its_own():
    # Expected outputs may show an id (a table row); code must take it from
    # templatestudio.families. The hidden fifth family is the one to watch.
    allowed = {ROOT / "templatestudio" / "families.py", Path(__file__).resolve()}
    sources = [
        *(ROOT / "templatestudio").rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").glob("*.py")
    ]
    writes_it = [
        path.relative_to(ROOT).as_posix()
        for path in sorted(sources)
        if path not in allowed and LLAMA31 in path.read_text(encoding="utf-8")
    ]
    assert writes_it == []
