"""The tool parser built the ways vLLM builds it, and the tokenizer it reads, for the in-process plugin tests."""

from __future__ import annotations

from templatestudio.integrations.vllm import TemplateStudioToolParser


class StubTokenizer:
    """What the parser reads off a tokenizer: its name, chat template and special tokens."""

    def __init__(self, name: str, template: str | None) -> None:
        self.name_or_path, self.chat_template = name, template
        self.special_tokens_map = {"bos_token": "", "eos_token": ""}
        self.response_template = None

    def get_chat_template(self, tools=None) -> str:
        return self.chat_template


def without_reasoning_parser(tokenizer) -> TemplateStudioToolParser:
    """The tool parser as vLLM builds it when no ``--reasoning-parser`` is set.

    vLLM's ``Parser`` then sets ``skip_reasoning_parsing`` on it: the
    reasoning is still in the text it reads. (With templatestudio's reasoning
    parser the flag stays False: ``tests/vllm/test_reasoning_plugin.py``.)
    """
    parser = TemplateStudioToolParser(tokenizer)
    parser.skip_reasoning_parsing = True
    return parser
