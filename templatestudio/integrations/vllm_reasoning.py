"""A vLLM reasoning parser that splits reasoning by the served model's own format.

Registered as ``templatestudio`` beside the tool parser of the same name
(one plugin file registers both)::

    vllm serve MODEL --enable-auto-tool-choice \\
        --tool-call-parser templatestudio --reasoning-parser templatestudio \\
        --tool-parser-plugin "$PLUGIN" --reasoning-parser-plugin "$PLUGIN"

with ``PLUGIN=$(python -m templatestudio vllm-plugin)``: vLLM's engine
process builds the reasoning parser as well (structured output) and
imports only the ``--reasoning-parser-plugin`` file.

The rule is the format's (``integrations.served_reasoning``), detected
once per template like the tool parser's, so no ``--reasoning-parser``
has to be matched to the model by hand. ``reasoning_content`` never holds a
delimiter, and the content the tool parser then reads holds no reasoning.

How vLLM 0.32 drives it (``vllm.parser.abstract_parser.DelegatingParser``):

- One parser per request and choice, built with the request's
  ``chat_template_kwargs``. A streamed reply is fed through
  ``extract_reasoning_streaming``; the parser is engine-based
  (``engine_based_streaming``), so vLLM asks
  ``has_engine_confirmed_reasoning_end`` after each delta instead of
  looking for an end token, then takes the content so far from
  ``finish_streaming`` and hands it to the tool parser.
- Whether the prompt opened a block: in a stream, from the prompt's ids
  (``is_reasoning_end`` then ``adjust_initial_state_from_prompt``); for a
  whole reply, from ``set_prompt_token_ids`` where vLLM calls it (0.33),
  else by rendering the request's messages with the served template
  (vLLM 0.32 hands a whole reply's parser no prompt).
- ``is_reasoning_end(ids)`` (the prompt check, and structured output's):
  true when the text ends with a closed block, or the format has no
  reasoning; a prompt ending in ``<think></think>`` (thinking switched off)
  skips the reasoning step.

The template probed and rendered is the one the server renders with: its
``--chat-template`` override when it has one (``vllm_template``), else the
tokenizer's.

Not handled: structured output that should start before any reasoning in
a reply that writes none (xgrammar waits for an end the reply never
writes); a request's own ``chat_template`` (the reasoning rule stays the
served template's); and, streamed, a call after a block the reply never
closes where the format may still close it after a rehearsed call
(Qwen3-Coder's): the block's end is known only at the reply's end, and
vLLM sends the content this parser gives then to the client, not through
the tool parser, so the call arrives as content (read whole, it is a
call; ``tests/vllm/test_reasoning_plugin.py`` holds it as an xfail).
"""

from __future__ import annotations

from collections.abc import Sequence

from vllm.entrypoints.generate.base.protocol import DeltaMessage
from vllm.reasoning import ReasoningParser, ReasoningParserManager

from templatestudio.integrations.served import request_tools
from templatestudio.integrations.served_detect import detect_served_format
from templatestudio.integrations.served_log import logger
from templatestudio.integrations.vllm import named_parser, parser_names
from templatestudio.integrations.vllm_template import served_tokenizer
from templatestudio.integrations.served_reasoning import (
    ReasoningSplit,
    closes_reasoning,
    rendered_prompt,
    split_reply,
)
from templatestudio.probe import as_template

__all__ = ["TemplateStudioReasoningParser"]

PROMPT_TAIL_TOKENS = 64
"""How many of the prompt's last tokens are decoded to see whether it opened a block (a generation prompt is short)."""


def _messages(request) -> list[dict]:
    return [m.model_dump(exclude_none=True) if hasattr(m, "model_dump") else dict(m) for m in request.messages]


class TemplateStudioReasoningParser(ReasoningParser):
    """vLLM ReasoningParser over ``served_reasoning.ReasoningSplit``; see the module docstring."""

    engine_based_streaming = True

    def __init__(self, tokenizer, *args, chat_template_kwargs: dict | None = None, **kwargs) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        # The template the server renders with: its --chat-template override, else the tokenizer's.
        self.served = served_tokenizer(tokenizer)
        self.format = self.detect(self.served).format
        self.variables = dict(chat_template_kwargs or {})
        self._opened: tuple[str, str] | None = None
        self._prompt_seen = False
        self._split: ReasoningSplit | None = None
        self._flushed = False

    @classmethod
    def detect(cls, tokenizer):
        """The served format (the format-named parsers override this)."""
        return detect_served_format(tokenizer)

    @property
    def reasoning_start_str(self) -> str | None:
        """The block's opener as the format writes it (vLLM looks up its token ids), None without reasoning."""
        return self.format.reasoning_pairs[0][0] if self.format.reasoning_pairs else None

    @property
    def reasoning_end_str(self) -> str | None:
        return self.format.reasoning_pairs[0][1] if self.format.reasoning_pairs else None

    # -- the prompt ------------------------------------------------------------------------

    def _prompt_text(self, prompt_token_ids: Sequence[int]) -> str:
        return self.model_tokenizer.decode(list(prompt_token_ids)[-PROMPT_TAIL_TOKENS:])

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        return closes_reasoning(self.format, self._prompt_text(input_ids)) if input_ids else (
            not self.format.reasoning_pairs)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        return list(input_ids)  # the split is by text; the tool parser reads text

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        """vLLM 0.33 hands the rendered prompt before a whole reply is read."""
        self._prompt_seen = True
        self._opened = self.format.opened_reasoning(self._prompt_text(prompt_token_ids)) if prompt_token_ids else None

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        self.set_prompt_token_ids(prompt_token_ids)

    def _rendered_opening(self, request) -> tuple[str, str] | None:
        """Whether the prompt the request asks for opened a block, rendered with the served template."""
        variables = {**self.variables, **(getattr(request, "chat_template_kwargs", None) or {})}
        try:
            prompt = rendered_prompt(
                as_template(self.served), _messages(request), tools=request_tools(request),
                add_generation_prompt=getattr(request, "add_generation_prompt", True), variables=variables,
            )
        except Exception as error:  # noqa: BLE001 - any template error: read the reply as if nothing opened
            logger.warning("templatestudio: the request's prompt does not render (%s); "
                           "a reasoning block it opened is read as content", error)
            return None
        return self.format.opened_reasoning(prompt)

    # -- the reply -------------------------------------------------------------------------

    def extract_reasoning(self, model_output: str, request) -> tuple[str | None, str | None]:
        opened = self._opened if self._prompt_seen else self._rendered_opening(request)
        return split_reply(model_output, self.format, opened=opened)

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> DeltaMessage | None:
        if self._split is None:
            self._split = ReasoningSplit(self.format, opened=self._opened)
        reasoning = self._split.feed(delta_text)
        return DeltaMessage(reasoning=reasoning) if reasoning else None

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._split is not None and self._split.ended

    def finish_streaming(self) -> DeltaMessage | None:
        """At the end of the reasoning: the content so far, for the tool parser; at the reply's end: the rest."""
        if self._split is None or self._flushed:
            return None
        self._flushed = True
        if self._split.ended:
            content = self._split.content
            return DeltaMessage(content=content) if content else None
        reasoning, content = self._split.close()
        if not reasoning and not content:
            return None
        return DeltaMessage(reasoning=reasoning or None, content=content or None)


for _name, _format in parser_names().items():
    ReasoningParserManager.register_module(
        _name,
        module=TemplateStudioReasoningParser if _format is None else named_parser(TemplateStudioReasoningParser, _format),
    )
