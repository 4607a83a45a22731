"""Every tool-parser name vLLM registers maps to one format or is listed with its reason (issue 23).

The rule itself and the table live in tests/vllm_names.py. Here: the rule
against an unpacked vLLM source release named by TEMPLATESTUDIO_VLLM_SDIST
(the folder holding ``vllm/tool_parsers/__init__.py``; skipped without it),
and the rule's own behaviour on made-up registries. The installed vLLM's
registry is checked by tests/vllm/test_vllm_names.py, in vLLM's environment.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from templatestudio.formats import FORMATS
from vllm_names import NO_FORMAT, declared, problems, sdist_names

SDIST = os.environ.get("TEMPLATESTUDIO_VLLM_SDIST")


@pytest.mark.skipif(
    not SDIST or not (Path(SDIST) / "vllm" / "tool_parsers" / "__init__.py").is_file(),
    reason="set TEMPLATESTUDIO_VLLM_SDIST to an unpacked vLLM source release (the folder holding "
           "vllm/tool_parsers/__init__.py) to check its tool-parser names",
)
def test_every_name_of_the_source_release_maps_to_one_format_or_a_reason():
    names = sdist_names(Path(SDIST))
    assert names, f"{SDIST}: no tool-parser names read"
    assert problems(names) == []


def test_the_table_and_the_declarations_agree_with_each_other():
    # Whatever the registry: no name declared twice, no table entry a format declares.
    assert problems(set(declared()) | set(NO_FORMAT)) == []


def test_every_entry_says_why():
    for name, reason in NO_FORMAT.items():
        assert reason.strip(), name
    assert "parse_response" in NO_FORMAT["hf"]


def test_declarations_are_tuples_of_names():
    # A bare string would pass as a tuple of its letters.
    for fmt in FORMATS.values():
        assert isinstance(fmt.vllm_parser, tuple), fmt.name
        assert all(isinstance(name, str) and name for name in fmt.vllm_parser), fmt.name
        assert len(set(fmt.vllm_parser)) == len(fmt.vllm_parser), fmt.name


@pytest.mark.parametrize("registered, owners, table, expected", [
    ({"a"}, {"a": ["A"]}, {}, []),
    ({"a", "z"}, {"a": ["A"]}, {"z": "why"}, []),
    ({"a", "z"}, {"a": ["A"]}, {}, ["'z' maps to no format"]),
    ({"a"}, {"a": ["A", "B"]}, {}, ["'a' is declared by more than one format: A, B"]),
    ({"a"}, {"a": ["A"]}, {"a": "why"}, ["'a' is declared by A but still listed in NO_FORMAT (stale)"]),
    ({"a"}, {"a": ["A"], "b": ["B"]}, {}, ["'b' is declared by B but the registry has no such parser"]),
    (set(), {}, {"gone": "why"}, []),
])
def test_the_rule_reports_each_kind_of_break(registered, owners, table, expected):
    found = problems(registered, owners, table)
    assert len(found) == len(expected)
    for sentence, start in zip(found, expected):
        assert sentence.startswith(start)


def test_the_release_reader_refuses_a_file_without_the_table(tmp_path):
    (tmp_path / "vllm" / "tool_parsers").mkdir(parents=True)
    (tmp_path / "vllm" / "tool_parsers" / "__init__.py").write_text("NAMES = {}\n")
    with pytest.raises(ValueError, match="_TOOL_PARSERS_TO_REGISTER"):
        sdist_names(tmp_path)
    (tmp_path / "vllm" / "tool_parsers" / "__init__.py").write_text(
        "_TOOL_PARSERS_TO_REGISTER = {'b': ('m', 'C'), 'a': ('m', 'D')}\n")
    assert sdist_names(tmp_path) == ["a", "b"]
