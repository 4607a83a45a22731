"""Integrations with serving stacks.

``templatestudio.integrations.vllm`` is a vLLM tool parser (it imports vLLM,
so it lives in vLLM's environment); ``vllm_plugin.py`` is the file vLLM's
``--tool-parser-plugin`` loads. ``plugin_path()`` needs no vLLM.
"""

from __future__ import annotations

from pathlib import Path


def plugin_path() -> Path:
    """The file to pass to vLLM as ``--tool-parser-plugin``."""
    return Path(__file__).resolve().parent / "vllm_plugin.py"
