"""CanIToolCall's adapter contract at the plugin layer: templatestudio's vLLM parsers, called as vLLM serves them.

``adapter.py`` holds the reader layer (``read_tool_calls`` / ``ToolCallStream``
called directly). This module replays the same fixtures one layer up, through
``templatestudio.integrations.vllm`` (the ``templatestudio`` tool parser) and
``templatestudio.integrations.vllm_reasoning`` (the ``templatestudio``
reasoning parser) inside vLLM's own parser machinery: the path a server
started with ``--enable-auto-tool-choice --tool-call-parser templatestudio
--reasoning-parser templatestudio`` takes. It runs only where vLLM is
installed (``.venv-vllm``). What it shares with the reader layer, by
subclassing ``TemplatestudioAdapter``: the model -> template resolution (Hub
cache, else ``CORPUS_TEMPLATES``), the units (token ids or text pieces),
their text deltas, and the whole reply's text.

What vLLM 0.32's chat-completions server does, step by step, and here:

1. Start-up: ``ParserManager.get_parser(tool_parser_name=NAME,
   reasoning_parser_name=NAME, enable_auto_tools=True, model_name=...,
   is_harmony=..., tokenizer=...)`` composes a ``DelegatingParser`` class and
   builds it once against the tokenizer (the parsers probe the template
   there). NAME is ``templatestudio``, or ``templatestudio-<format>`` for the
   two models with no chat template anywhere (``FORMAT_NAMES``: DeepSeek
   V4.1, Kimi K3), whose format the operator names. The tokenizer: vLLM's
   ``get_tokenizer(repo)`` when the Hub cache holds the model; else an
   object holding the corpus template as its ``chat_template``
   (``ServedTemplate``), which is all the parsers read of a tokenizer.
2. Request: a ``ChatCompletionRequest`` with one user turn, the fixture's
   tools with ``tool_choice="auto"`` (a fixture without tools sends neither:
   vLLM then defaults ``tool_choice`` to "none", and the tool parser passes
   the text through), and the fixture's thinking switch as
   ``chat_template_kwargs``. As vLLM's renderer does when a reasoning parser
   is set, a throwaway parser runs ``adjust_request`` first.
3. Parse: a fresh parser instance per request, built with the request's
   ``chat_template_kwargs``. Whole reply: the prompt's ids handed over
   (``hand_prompt_to``), then ``parser.parse(text, request,
   enable_auto_tools=True, model_output_token_ids=ids)``: the reasoning
   parser's ``extract_reasoning``, then the tool parser's
   ``extract_tool_calls`` on the rest. Stream: ``parser.parse_delta(delta,
   delta_ids, request, prompt_token_ids=prompt, finished=last)`` per chunk;
   both parsers are engine-based, so vLLM asks the reasoning parser when the
   reasoning ended, takes the text after it from its ``finish_streaming``,
   feeds the tool parser from there, and calls ``finish_streaming`` at the
   end. Deltas are accumulated the way an OpenAI client merges them
   (content and reasoning joined, calls merged by index).

What vLLM's interface decides here, not the plugin:

- Harmony (gpt-oss): vLLM serves a ``model_type: gpt_oss`` model through its
  ``HarmonyParser``, which refuses any tool parser but its own
  ``GptOssToolParser``; those fixtures are ``unsupported``.
- A reply cut inside a call: the message has ``content`` and ``tool_calls``
  only, so the cut call is neither (the plugin logs it), as at the reader
  layer.
- The prompt: see ``PluginAdapter.prompt_text``.

Not handled: text deltas come from the shared units (the Hub tokenizer's
incremental ``decode``, or text pieces), not from vLLM's v1
``IncrementalDetokenizer``; ids reach ``parse_delta`` only when the fixture's
tokenizer is cached (with text units the ids are empty lists, which no part
of this path reads); vLLM's tokenizer modes (mistral, deepseek_v32, ...) are
not reproduced: the plugin is given the corpus template text, as for any
Jinja template.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import vllm
from canitoolcall.adapters.base import ReplayInput, Support, ToolSpec
from canitoolcall.results import ParsedToolCall, ParseResult, StreamAccumulator
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.parser.abstract_parser import Parser
from vllm.parser.parser_manager import ParserManager
from vllm.tokenizers import get_tokenizer

import templatestudio
from templatestudio.integrations.served import STRICT_VARIABLE, strict_from_environment
from templatestudio.integrations.vllm import PARSER_NAME  # importing it registers the tool parsers with vLLM
from templatestudio.integrations.vllm_reasoning import TemplateStudioReasoningParser  # noqa: F401 - and the reasoning ones
from templatestudio.probe import as_template

from tests.conformance.adapter import FORMAT_NAMES, TemplatestudioAdapter, exception_text

USER_MESSAGE = "Use the tools to answer."
"""The one user turn of every request (fixtures carry no conversation; the parser never reads it)."""

HARMONY_MODEL_PREFIX = "openai/gpt-oss-"
"""The fixtures' models whose config.json says ``model_type: gpt_oss`` (vLLM: ``is_harmony``)."""

HARMONY_REASON = (
    "vLLM serves a model_type gpt_oss model through HarmonyParser, which accepts only its own "
    "GptOssToolParser: --tool-call-parser templatestudio is refused at start-up (ValueError)"
)

def is_harmony(model: str) -> bool:
    """Whether vLLM would build its HarmonyParser for model (chat serving: model_type == "gpt_oss")."""
    return model.startswith(HARMONY_MODEL_PREFIX)


class ServedTemplate:
    """What the plugin reads of a tokenizer, for a template known only as text (a corpus file).

    No special tokens: the template renders as the bare text the reader layer
    reads. Its ids are the text's code points (``encode`` / ``decode``), the
    prompt's stand-in for a vocabulary no file here has. chat_template is
    None for a model that publishes none (the format is then named).
    """

    response_template = None

    def __init__(self, name: str, template: str | None) -> None:
        self.name_or_path, self.chat_template = name, template
        self.special_tokens_map: dict[str, str] = {}

    def get_chat_template(self, chat_template=None, tools=None) -> str | None:
        return self.chat_template

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [ord(character) for character in text]

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return "".join(chr(i) for i in ids)


def parser_name(model: str) -> str:
    """The parser a server for model is started with: the detecting one, or the one naming its format."""
    return f"{PARSER_NAME}-{FORMAT_NAMES[model]}" if model in FORMAT_NAMES else PARSER_NAME


def template_kwargs(raw: ReplayInput) -> dict[str, Any]:
    """The chat_template_kwargs a client sends for the fixture's thinking switch (both spellings templates read)."""
    return {} if raw.thinking is None else {"enable_thinking": raw.thinking, "thinking": raw.thinking}


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
        return super().supports(family, model)

    # -- vLLM's side ------------------------------------------------------------------

    def served_tokenizer(self, model: str) -> Any:
        """The tokenizer a server for model would hand the parser."""
        if model not in self._served_tokenizers:
            source = self._source(model)
            if model in FORMAT_NAMES:
                self._served_tokenizers[model] = ServedTemplate(model, None)
            elif isinstance(source.read_source, str):
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
            tool_parser_name=parser_name(model),
            reasoning_parser_name=parser_name(model),
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
        kwargs = template_kwargs(raw)
        request = ChatCompletionRequest(
            model=raw.model, messages=[{"role": "user", "content": USER_MESSAGE}], stream=stream,
            chat_template_kwargs=kwargs or None, **offered,
        )
        # OnlineRenderer.preprocess_chat: a reasoning parser is set, so the request is always adjusted.
        request = parser_cls(tokenizer, request.tools, model_config=None, chat_template_kwargs=kwargs).adjust_request(
            request=request
        )
        return request, parser_cls(tokenizer, request.tools, model_config=None, chat_template_kwargs=kwargs)

    def prompt_ids(self, raw: ReplayInput, request) -> list[int]:
        """The prompt's ids, as vLLM hands them to the parser (see ``prompt_text``)."""
        tokenizer = self.served_tokenizer(raw.model)
        return list(tokenizer.encode(self.prompt_text(raw, request), add_special_tokens=False))

    def prompt_text(self, raw: ReplayInput, request) -> str:
        """The prompt the reply was generated after.

        The fixture's recorded generation prompt where it has one: several
        served templates here are stand-ins whose own generation prompt
        differs (the corpus's DeepSeek V3 template opens ``<think>``, the
        DeepSeek-V3-0324 fixtures were generated after ``<｜Assistant｜>``).
        Otherwise the request rendered with the served template, as vLLM's
        renderer renders it; "" for a model with no template.
        """
        tokenizer = self.served_tokenizer(raw.model)
        if raw.generation_prompt is not None:
            return raw.generation_prompt
        if tokenizer.chat_template is None:
            prompt = ""
        else:
            prompt = as_template(tokenizer).render(
                [{"role": "user", "content": USER_MESSAGE}],
                tools=[tool.model_dump() for tool in request.tools] if request.tools else None,
                add_generation_prompt=True, **template_kwargs(raw),
            )
        return prompt

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
            tool_parser=parser_name(raw.model),
            reasoning_parser=parser_name(raw.model),
            is_harmony=is_harmony(raw.model),
            served_tokenizer="vllm.tokenizers.get_tokenizer" if config["template"].startswith("hf-cache:")
            else "ServedTemplate(corpus template as chat_template)" if raw.model not in FORMAT_NAMES
            else "ServedTemplate(no chat template)",
            chat_template_kwargs=template_kwargs(raw),
            tool_choice="auto (tools and tool_choice omitted when the fixture offers no tools)",
            nonstream_entrypoint="set_prompt_token_ids(prompt), DelegatingParser.parse(text, request, "
            "enable_auto_tools=True, model_output_token_ids=ids) -> extract_reasoning, extract_tool_calls",
            stream_entrypoint="DelegatingParser.parse_delta(delta, ids, request, prompt_token_ids=prompt, "
            "finished=last) -> extract_reasoning_streaming, finish_streaming, extract_tool_calls_streaming, "
            "finish_streaming",
            prompt="the fixture's generation_prompt, else the served template's rendering of the request",
            strict=f"{STRICT_VARIABLE}={int(strict_from_environment())}",
        )
        return config

    def parse(self, raw: ReplayInput, tools: Sequence[ToolSpec]) -> ParseResult:
        text = self._text(raw)
        try:
            request, parser = self.request_and_parser(raw, tools, stream=False)
            hand_prompt_to(parser, self.prompt_ids(raw, request))
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
            prompt = self.prompt_ids(raw, request)
            for index, (delta, chunk) in enumerate(steps):
                message = parser.parse_delta(
                    delta, self._ids(raw, chunk), request, prompt_token_ids=prompt, finished=index == len(steps) - 1
                )
                _accumulate(accumulated, message)
        except Exception as error:  # noqa: BLE001 - deltas already streamed are kept, as a client saw them
            return accumulated.result(exception=exception_text(error))
        return accumulated.result()


def hand_prompt_to(parser: Any, prompt_token_ids: list[int]) -> None:
    """A whole reply's prompt, handed over as vLLM 0.33's serving hands it (``set_prompt_token_ids``).

    vLLM 0.32's serving makes the same call, but its ``DelegatingParser``
    drops it; 0.33's forwards it to the reasoning parser, which is done here
    by hand on 0.32. (Without it the reasoning parser renders the request
    with the served template itself; ``tests/vllm/test_reasoning_plugin.py``
    tests that path.)
    """
    parser.set_prompt_token_ids(prompt_token_ids)
    if type(parser).set_prompt_token_ids is Parser.set_prompt_token_ids and parser.reasoning_parser is not None:
        parser.reasoning_parser.set_prompt_token_ids(prompt_token_ids)


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
