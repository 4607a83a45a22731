"""The installed vLLM's tool-parser names each map to one format or to a listed reason (issue 23).

Runs in vLLM's environment (see conftest.py). The names come from the
registry without importing the parsers: vLLM registers them lazily.
"""

from __future__ import annotations

from vllm.tool_parsers import ToolParserManager

from vllm_names import problems


def test_every_installed_name_maps_to_one_format_or_a_reason():
    names = ToolParserManager.list_registered()
    assert names, "vLLM registers no tool parser"
    assert problems(names) == []
