"""The tool parser built the ways vLLM builds it, for the in-process plugin tests."""

from __future__ import annotations

from templatestudio.integrations.vllm import TemplateStudioToolParser


def without_reasoning_parser(tokenizer) -> TemplateStudioToolParser:
    """The tool parser as vLLM builds it when no ``--reasoning-parser`` is set.

    vLLM's ``Parser`` then sets ``skip_reasoning_parsing`` on it: the
    reasoning is still in the text it reads. (With templatestudio's reasoning
    parser the flag stays False: ``tests/vllm/test_reasoning_plugin.py``.)
    """
    parser = TemplateStudioToolParser(tokenizer)
    parser.skip_reasoning_parsing = True
    return parser
