"""The installed vLLM's tool-parser names each map to one format or to a listed reason (issue 23).

Runs in vLLM's environment (see conftest.py). The names come from the
registry without importing the parsers: vLLM registers them lazily. The
names this package's own plugin registers (``templatestudio``,
``templatestudio-NAME``), present once any test has imported it, are not
vLLM's and are left out.
"""

from __future__ import annotations

from vllm.tool_parsers import ToolParserManager

from templatestudio.integrations.vllm import parser_names
from vllm_names import problems


def test_every_installed_name_maps_to_one_format_or_a_reason():
    names = [name for name in ToolParserManager.list_registered() if name not in parser_names()]
    assert names, "vLLM registers no tool parser"
    assert problems(names) == []
