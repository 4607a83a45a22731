"""CanIToolCall's adapter contract at the plugin layer: templatestudio's vLLM tool parser, called as vLLM serves it.

``adapter.py`` holds the reader layer (``read_tool_calls`` / ``ToolCallStream``
called directly). This module replays the same fixtures one layer up, through
``templatestudio.integrations.vllm`` (the ``templatestudio`` tool parser)
inside vLLM's own parser machinery, the path a server started with
``--enable-auto-tool-choice --tool-call-parser templatestudio`` and no
``--reasoning-parser`` takes. It runs only where vLLM is installed
(``.venv-vllm``). What it shares with the reader layer, by subclassing
``TemplatestudioAdapter``: the model -> template resolution (Hub cache, else
``CORPUS_TEMPLATES``), the units (token ids or text pieces), their text
deltas, and the whole reply's text.

What vLLM 0.32's chat-completions server does, step by step, and here:

1. Start-up: ``ParserManager.get_parser(tool_parser_name="templatestudio",
   reasoning_parser_name=None, enable_auto_tools=True, model_name=...,
   is_harmony=..., tokenizer=...)`` composes a ``DelegatingParser`` class and
   builds it once against the tokenizer (the plugin probes the template
   there). The tokenizer: vLLM's ``get_tokenizer(repo)`` when the Hub cache
   holds the model; else an object holding the corpus template as its
   ``chat_template`` (``ServedTemplate``), which is all the plugin reads of a
   tokenizer.
2. Request: a ``ChatCompletionRequest`` with one user turn and the fixture's
   tools with ``tool_choice="auto"``; a fixture without tools sends neither
   (vLLM then defaults ``tool_choice`` to "none", and the plugin passes the
   text through). As vLLM's renderer does for ``tool_choice != "none"``, a
   throwaway parser runs ``adjust_request`` first.
3. Parse: a fresh parser instance per request. Whole reply:
   ``parser.parse(text, request, enable_auto_tools=True,
   model_output_token_ids=ids)``, which calls the plugin's
   ``extract_tool_calls(text, request)``. Stream: ``parser.parse_delta(delta,
   delta_ids, request, prompt_token_ids=..., finished=last)`` per chunk;
   since the plugin sets ``engine_based_streaming``, vLLM calls its
   ``extract_tool_calls_streaming("", delta, delta, [], delta_ids,
   delta_ids, request)`` and, on the last delta, ``finish_streaming()``.
   Deltas are accumulated the way an OpenAI client merges them (content and
   reasoning joined, calls merged by index).

What vLLM's interface decides here, not the plugin:

- Reasoning: a tool parser gets the reply and returns content and calls;
  only a ``--reasoning-parser`` fills ``reasoning_content``. None is set
  (issue 24 adds templatestudio's own), so a thinking block stays in the
  content with its tags, and a call written inside it is reasoning text,
  not a call. The fixture's ``generation_prompt`` reaches no tool parser
  either: a block the prompt opened is read as ordinary reply text.
- Harmony (gpt-oss): vLLM serves a ``model_type: gpt_oss`` model through its
  ``HarmonyParser``, which refuses any tool parser but its own
  ``GptOssToolParser``; those fixtures are ``unsupported``.
- A reply cut inside a call: the message has ``content`` and ``tool_calls``
  only, so the cut call is neither (the plugin logs it), as at the reader
  layer.
- ``prompt_token_ids``: serving passes the rendered prompt's ids; without a
  reasoning parser vLLM reads them only to see that they are there (it
  then enters the tool phase), so an empty list stands in for them.

Not handled: text deltas come from the shared units (the Hub tokenizer's
incremental ``decode``, or text pieces), not from vLLM's v1
``IncrementalDetokenizer``; ids reach ``parse_delta`` only when the fixture's
tokenizer is cached (with text units the ids are empty lists, which no part
of this path reads); the fixture's ``thinking`` flag reaches nothing (no
reasoning parser; the tool parser reads no ``chat_template_kwargs``);
vLLM's tokenizer modes (mistral, deepseek_v32, ...) are not reproduced: the
plugin is given the corpus template text, as for any Jinja template.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import vllm
from canitoolcall.adapters.base import ReplayInput, Support, ToolSpec
from canitoolcall.results import ParsedToolCall, ParseResult, StreamAccumulator
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.parser.parser_manager import ParserManager
from vllm.tokenizers import get_tokenizer

import templatestudio
from templatestudio.integrations.served import STRICT_VARIABLE, strict_from_environment
from templatestudio.integrations.vllm import PARSER_NAME  # importing it registers the parser with vLLM

from tests.conformance.adapter import FORMAT_NAMES, TemplatestudioAdapter, exception_text

USER_MESSAGE = "Use the tools to answer."
"""The one user turn of every request (fixtures carry no conversation; the parser never reads it)."""

PROMPT_IDS: list[int] = []
"""Stands in for the prompt's ids: see the module docstring (read only for being there)."""

HARMONY_MODEL_PREFIX = "openai/gpt-oss-"
"""The fixtures' models whose config.json says ``model_type: gpt_oss`` (vLLM: ``is_harmony``)."""

HARMONY_REASON = (
    "vLLM serves a model_type gpt_oss model through HarmonyParser, which accepts only its own "
    "GptOssToolParser: --tool-call-parser templatestudio is refused at start-up (ValueError)"
)

NAMED_FORMAT_REASON = (
    "no chat template of {model} exists to serve (the reader layer names its format, {name}); "
    "the plugin reads the format only from the served tokenizer's chat template and takes no format name"
)


def is_harmony(model: str) -> bool:
    """Whether vLLM would build its HarmonyParser for model (chat serving: model_type == "gpt_oss")."""
    return model.startswith(HARMONY_MODEL_PREFIX)


class ServedTemplate:
    """What the plugin reads of a tokenizer, for a template known only as text (a corpus file).

    No special tokens: the template renders as the bare text the reader layer reads.
    """

    response_template = None

    def __init__(self, name: str, template: str) -> None:
        self.name_or_path, self.chat_template = name, template
        self.special_tokens_map: dict[str, str] = {}

    def get_chat_template(self, chat_template=None, tools=None) -> str:
        return self.chat_template


class PluginAdapter(TemplatestudioAdapter):
    """templatestudio's vLLM tool parser behind CanIToolCall's adapter contract; see the module docstring."""

    name: ClassVar[str] = "templatestudio-vllm-plugin"
    pinned_version: ClassVar[str] = templatestudio.__version__

    def __init__(self) -> None:
        super().__init__()
        self._served_tokenizers: dict[str, Any] = {}

    def engine_details(self) -> dict[str, Any]:
        return {**super().engine_details(), "vllm": vllm.__version__, "tool_parser": PARSER_NAME}

    def supports(self, family: str, model: str) -> Support:
        if is_harmony(model):
            return Support(False, HARMONY_REASON)
        if model in FORMAT_NAMES:  # the reader layer names the format; the plugin has no way to
            return Support(False, NAMED_FORMAT_REASON.format(model=model, name=FORMAT_NAMES[model]))
        return super().supports(family, model)

    # -- vLLM's side ------------------------------------------------------------------

    def served_tokenizer(self, model: str) -> Any:
        """The tokenizer a server for model would hand the parser."""
        if model not in self._served_tokenizers:
            source = self._source(model)
            if isinstance(source.read_source, str):
                self._served_tokenizers[model] = ServedTemplate(source.origin, source.read_source)
            else:
                self._served_tokenizers[model] = get_tokenizer(model)
        return self._served_tokenizers[model]

    def parser_class(self, model: str) -> Any:
        """vLLM's start-up: the composed Parser class, validated against the tokenizer.

        Raises what vLLM raises (a TypeError naming the flag when the template
        writes no format the plugin reads); not cached, so every fixture shows it.
        """
        return ParserManager.get_parser(
            tool_parser_name=PARSER_NAME,
            reasoning_parser_name=None,
            enable_auto_tools=True,
            model_name=model,
            is_harmony=is_harmony(model),
            tokenizer=self.served_tokenizer(model),
        )

    def request_and_parser(self, raw: ReplayInput, tools: Sequence[ToolSpec], *, stream: bool):
        """A request as a client sends it, adjusted as vLLM's renderer does, and its parser."""
        parser_cls = self.parser_class(raw.model)
        tokenizer = self.served_tokenizer(raw.model)
        offered = {"tools": [dict(tool) for tool in tools], "tool_choice": "auto"} if tools else {}
        request = ChatCompletionRequest(
            model=raw.model, messages=[{"role": "user", "content": USER_MESSAGE}], stream=stream, **offered
        )
        # OnlineRenderer.preprocess_chat: no reasoning parser, so only tool_choice decides.
        if parser_cls.always_adjust_request or request.tool_choice != "none":
            request = parser_cls(tokenizer, request.tools, model_config=None).adjust_request(request=request)
        return request, parser_cls(tokenizer, request.tools, model_config=None)

    def _ids(self, raw: ReplayInput, chunk: Sequence[int]) -> list[int]:
        """Token ids of a chunk for vLLM, or [] when the units are text pieces (no ids exist)."""
        return [int(i) for i in chunk] if self._unit_tokenizer(raw) is not None else []

    # -- the contract ---------------------------------------------------------------------

    def parser_config(self, raw: ReplayInput) -> dict[str, Any]:
        config = super().parser_config(raw)
        for key in ("nonstream_entrypoint", "stream_entrypoint", "prefix"):
            config.pop(key)
        config.update(
            layer="vLLM tool parser plugin",
            vllm=vllm.__version__,
            tool_parser=PARSER_NAME,
            reasoning_parser=None,
            is_harmony=is_harmony(raw.model),
            served_tokenizer="vllm.tokenizers.get_tokenizer" if config["template"].startswith("hf-cache:")
            else "ServedTemplate(corpus template as chat_template)",
            tool_choice="auto (tools and tool_choice omitted when the fixture offers no tools)",
            nonstream_entrypoint="DelegatingParser.parse(text, request, enable_auto_tools=True, "
            "model_output_token_ids=ids) -> extract_tool_calls(text, request)",
            stream_entrypoint="DelegatingParser.parse_delta(delta, ids, request, prompt_token_ids=[], "
            "finished=last) -> extract_tool_calls_streaming, finish_streaming",
            generation_prompt_used=False,
            strict=f"{STRICT_VARIABLE}={int(strict_from_environment())}",
        )
        return config

    def parse(self, raw: ReplayInput, tools: Sequence[ToolSpec]) -> ParseResult:
        text = self._text(raw)
        try:
            request, parser = self.request_and_parser(raw, tools, stream=False)
            reasoning, content, calls = parser.parse(
                text, request, enable_auto_tools=True, model_output_token_ids=self._ids(raw, raw.token_ids or ())
            )
        except Exception as error:  # noqa: BLE001 - vLLM's or the plugin's exception is the outcome
            return ParseResult(exception=exception_text(error))
        return ParseResult(
            content=content or None,
            reasoning_content=reasoning or None,
            tool_calls=tuple(ParsedToolCall(call.name, call.arguments) for call in calls or ()),
        )

    def parse_stream(self, raw: ReplayInput, chunks: Sequence[Sequence[int]], tools: Sequence[ToolSpec]) -> ParseResult:
        deltas = self.text_deltas(raw, chunks)
        accumulated = StreamAccumulator()
        try:
            request, parser = self.request_and_parser(raw, tools, stream=True)
            # Every chunk holds a token, so serving calls parse_delta for each, the last one finished.
            steps = list(zip(deltas, chunks)) or [("", ())]
            for index, (delta, chunk) in enumerate(steps):
                message = parser.parse_delta(
                    delta, self._ids(raw, chunk), request, prompt_token_ids=PROMPT_IDS, finished=index == len(steps) - 1
                )
                _accumulate(accumulated, message)
        except Exception as error:  # noqa: BLE001 - deltas already streamed are kept, as a client saw them
            return accumulated.result(exception=exception_text(error))
        return accumulated.result()


def _accumulate(accumulated: StreamAccumulator, message: Any) -> None:
    """One vLLM DeltaMessage merged as an OpenAI client merges a chunk's delta."""
    if message is None:
        return
    accumulated.add_content(message.content)
    accumulated.add_reasoning(message.reasoning)
    for call in message.tool_calls or ():
        function = call.function
        accumulated.add_tool_call(
            call.index, function.name if function else None, function.arguments if function else None
        )
