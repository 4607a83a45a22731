"""CanIToolCall's adapter contract, fulfilled by templatestudio's production reader and stream.

The suite (PyPI ``canitoolcall``) replays recorded model outputs through an
engine's own parser and checks the parse. Here the "engine" is
templatestudio's public API, nothing else:

- non-streaming: ``templatestudio.read_tool_calls(text, source, prefix=...)``
  (the production reader; it resolves ``source`` to a format itself);
- streaming: ``templatestudio.ToolCallStream`` over the format
  ``templatestudio.resolve_format`` gives for the same source, fed one text
  delta per chunk, then closed; its events are accumulated the way an
  OpenAI client merges deltas (the suite's ``StreamAccumulator``).

Which template reads a fixture: the reference model's own chat template,
taken from the Hugging Face cache when the model is mirrored there (the
tokenizer itself is then the source, as a program would pass it), else the
corpus template named for the model in ``CORPUS_TEMPLATES`` (fixture model
names and corpus file names differ, so the map is explicit). templatestudio
detects the format from that template; the adapter never names a format.
A model with neither is reported the suite's way, ``Support(False, reason)``.

Units (contract rule 1, "token ids first"): the fixture's
``output_token_ids`` when the pinned tokenizer's repository is in the
offline cache, decoded incrementally with that tokenizer, special tokens
kept. Otherwise the fixture's text is cut into text units: every marker of
the detected format (``Format.holdback``: call markers and reasoning
delimiters) is one unit, the text between them is cut into words,
whitespace runs and single punctuation characters. Unit ``i`` is then the
index of the ``i``-th piece. The stop token is never re-appended (fixtures
end before it), so truncated fixtures (cut by ``max_tokens``) get none
either. A call the reply was cut inside (``Reply.cut``, a ``CutToolCall``
event of the stream) is neither content nor a call, and the suite's
``ParseResult`` has no third place for it, so it is not reported; the suite's
truncation fixtures expect exactly that (no call, nothing leaked). Both
paths run non-strict (``STRICT``). An exception raised by templatestudio is
a parse outcome, ``ParseResult(exception="Type: message")``; only harness
problems (corpus or tokenizer missing) raise.

The fixture's ``tools`` go to both paths (``tools=``), so the values a
format writes as text (Qwen3-Coder's XML, GLM's) are typed by the tool's
schema, as the suite's vLLM reference parsers type them.

Not handled: the suite's ``char:*`` synthetic strategies (no text-delta path);
tokenizers not in the offline cache are never fetched; a mirrored tokenizer
is loaded at the cache's revision, not the fixture's pin (the decoded text
is checked against ``raw_output`` instead).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from canitoolcall.adapters.base import Adapter, ReplayInput, Support, ToolSpec
from canitoolcall.chunking import TokensPerStep
from canitoolcall.results import ParsedToolCall, ParseResult, StreamAccumulator
from huggingface_hub import try_to_load_from_cache
from transformers import AutoTokenizer

import templatestudio
from templatestudio import (
    CutToolCall,
    Format,
    NoToolCallFormat,
    ReasoningDelta,
    TemplateProbeError,
    TextDelta,
    ToolCallEvent,
    ToolCallStream,
    read_tool_calls,
    resolve_format,
)
from templatestudio.corpus import corpus_dir

# Fixture reference model (``models[0]``) -> corpus template (templates/<name>.jinja).
# None: no template of that model exists in the corpus; its fixtures are unsupported.
# "stand-in" marks a template of the same model family and wire, not the model's own file.
CORPUS_TEMPLATES: dict[str, str | None] = {
    "Qwen/Qwen3-0.6B": "Qwen-Qwen3-0.6B",  # used only when the Hub cache lacks the model
    "Qwen/Qwen3-4B-Instruct-2507": "qwen3_instruct_2507",
    # stand-in: the hybrid Qwen3 template; Thinking-2507's own template differs only in
    # pre-filling <think>, which the fixture's generation_prompt carries.
    "Qwen/Qwen3-4B-Thinking-2507": "qwen3",
    "Qwen/Qwen3-Coder-30B-A3B-Instruct": "Qwen-Qwen3-Coder-30B-A3B-Instruct",
    "Qwen/Qwen3-Coder-Next": "Qwen3-Coder",  # stand-in: the Qwen3-Coder template
    "Qwen/Qwen3.5-9B": "Qwen3.5-vllm-nvfp4-5090",  # community Qwen3.5 template
    "Qwen/Qwen3.8-27B": "Qwen3.8-27B",
    "deepseek-ai/DeepSeek-V3-0324": "deepseekv3",
    "deepseek-ai/DeepSeek-V3.1": "deepseek-ai-DeepSeek-V3.1",
    "deepseek-ai/DeepSeek-V3.2": "deepseek-ai-DeepSeek-V3.2",
    "deepseek-ai/DeepSeek-V4-Flash": "deepseek-ai-DeepSeek-V4",
    "google/gemma-4-31B-it": "google-gemma-4-31B-it-interleaved",
    "zai-org/GLM-4.5": "glm4moe",
    "zai-org/GLM-4.7": "GLM-4.7-Flash",
    "zai-org/GLM-5.3": "GLM-5.2",  # stand-in: GLM-5.2, the same compact wire
    "openai/gpt-oss-20b": "openai-gpt-oss-120b",  # the gpt-oss models share one template
    "moonshotai/Kimi-K2-Instruct-0905": "moonshotai-Kimi-K2",
    # stand-in: the K2 template, the same section tokens. The closer Kimi-K2-Thinking template
    # does not render in transformers' sandbox (labels.json: SecurityError on list.append).
    "moonshotai/Kimi-K2.6": "moonshotai-Kimi-K2",
    "meta-llama/Llama-3.3-70B-Instruct": "meta-llama-Llama-3.3-70B-Instruct",
    # vLLM's pythonic Llama 4 template (written by vLLM; Meta's own file is not in the corpus)
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": "tool_chat_template_llama4_pythonic",
    "mistralai/Mistral-7B-Instruct-v0.3": "mistral-common-v3",
    "mistralai/Mistral-Small-3.2-24B-Instruct-2506": "Mistral-Small-3.2-24B-Instruct-2506",
    "mistralai/Magistral-Small-2506": "mistral-common-v11_think",
    "mistralai/Magistral-Small-2509": "mistral-common-v13_think",
    "mistralai/Ministral-3-14B-Reasoning-2512": "mistral-common-v13_think",
    "mistralai/Ministral-3-14B-Instruct-2512": "mistral-common-v13",
    "mistralai/Devstral-Small-2507": "mistral-common-v11_think",  # stand-in: tokenizer v11 wire
}

# Models with no chat template anywhere here: DeepSeek V4.1 publishes no template in the
# corpus, and Kimi K3 none at all (its encoder is Python code, not a chat template). The
# format is named, as a program serving such a model would name it; these are the only
# fixtures whose format is not detected from a template.
FORMAT_NAMES: dict[str, str] = {
    "deepseek-ai/DeepSeek-V4.1-Flash": "deepseek-v4.1",
    "moonshotai/Kimi-K3": "kimi-k3",
}

STRICT = False
"""Both paths run non-strict, the reader's default: a reply cut inside a call
gives the calls before the cut and a ``CutToolCall`` rather than raising. The
stream's default is strict, so it is named for both, and they read alike."""

TEXT_PIECE = re.compile(r"\s+|\w+|[^\w\s]")
"""Text units between markers: a word, a whitespace run, or one other character."""


def exception_text(error: BaseException) -> str:
    """``"Type: message"``, the suite's form of a parser's exception."""
    return f"{type(error).__name__}: {error}"


def mirrored(repo: str) -> bool:
    """Whether the offline Hugging Face cache holds repo's tokenizer files."""
    return isinstance(try_to_load_from_cache(repo, "tokenizer_config.json"), str)


@dataclass(frozen=True)
class Source:
    """What the reader is given for one model: a cached tokenizer, or corpus template text."""

    origin: str  # "hf-cache:<repo>" or "corpus:<name>"
    read_source: Any  # passed to read_tool_calls: the tokenizer, or the template text
    template_sha256: str


class TemplatestudioAdapter(Adapter):
    """templatestudio's reader and stream behind CanIToolCall's adapter contract."""

    name: ClassVar[str] = "templatestudio"
    pinned_version: ClassVar[str] = templatestudio.__version__
    tokens_per_step: ClassVar[TokensPerStep] = "many"
    """``ToolCallStream.feed`` takes any chunk, so every strategy counts."""

    def __init__(self) -> None:
        self._sources: dict[str, Source] = {}
        self._tokenizers: dict[str, Any] = {}

    # -- identity and coverage ------------------------------------------------

    def version(self) -> str:
        return templatestudio.__version__

    def engine_details(self) -> dict[str, Any]:
        return {"corpus": str(corpus_dir()), "corpus_templates": dict(CORPUS_TEMPLATES)}

    def supports(self, family: str, model: str) -> Support:
        if mirrored(model) or CORPUS_TEMPLATES.get(model) or model in FORMAT_NAMES:
            return Support(True)
        if model in CORPUS_TEMPLATES:
            return Support(False, f"no chat template of {model} in the Hub cache or the corpus")
        return Support(False, f"{model} is neither in the Hub cache nor mapped in CORPUS_TEMPLATES")

    # -- sources ----------------------------------------------------------------

    def _source(self, model: str) -> Source:
        if model in self._sources:
            return self._sources[model]
        if mirrored(model):
            tokenizer = self._tokenizer(model)
            text = tokenizer.chat_template
            source = Source(f"hf-cache:{model}", tokenizer, hashlib.sha256(text.encode()).hexdigest())
        elif model in FORMAT_NAMES:
            name = FORMAT_NAMES[model]
            source = Source(f"format:{name}", name, hashlib.sha256(name.encode()).hexdigest())
        else:
            name = CORPUS_TEMPLATES.get(model)
            if not name:
                raise RuntimeError(f"{model}: no template (supports() should have declined it)")
            path = corpus_dir() / "templates" / f"{name}.jinja"
            text = path.read_text(encoding="utf-8")  # FileNotFoundError: a harness problem
            source = Source(f"corpus:{name}", text, hashlib.sha256(text.encode()).hexdigest())
        self._sources[model] = source
        return source

    def _tokenizer(self, repo: str) -> Any:
        if repo not in self._tokenizers:
            self._tokenizers[repo] = AutoTokenizer.from_pretrained(repo)
        return self._tokenizers[repo]

    def _unit_tokenizer(self, raw: ReplayInput) -> Any | None:
        """The pinned tokenizer when it is cached and the fixture has ids, else None (text units)."""
        repo = raw.tokenizer.repo if raw.tokenizer is not None else raw.model
        if raw.token_ids is None or not mirrored(repo):
            return None
        return self._tokenizer(repo)

    def _format(self, raw: ReplayInput) -> Format:
        """The format templatestudio detects from the source; raises what resolve_format raises."""
        source = self._source(raw.model).read_source
        if isinstance(source, str):
            return resolve_format(source)
        return resolve_format(source, deadline=None)  # a tokenizer we loaded: probed in-process

    # -- units --------------------------------------------------------------------

    def _pieces(self, raw: ReplayInput) -> list[tuple[str, bool]]:
        """Text units of raw.text: (piece, is a marker of the detected format)."""
        try:
            markers = sorted(set(self._format(raw).holdback), key=len, reverse=True)
        except (NoToolCallFormat, TemplateProbeError):  # the parse reports it; the units stay plain text
            markers = []
        pieces: list[tuple[str, bool]] = []
        if markers:
            splitter = re.compile("(" + "|".join(re.escape(m) for m in markers) + ")")
            parts = splitter.split(raw.text)
        else:
            parts = [raw.text]
        for index, part in enumerate(parts):
            if index % 2 == 1:
                pieces.append((part, True))
            else:
                pieces.extend((piece, False) for piece in TEXT_PIECE.findall(part))
        if "".join(piece for piece, _ in pieces) != raw.text:
            raise RuntimeError(f"{raw.fixture_id}: text units do not cover the text")
        return pieces

    def units(self, raw: ReplayInput) -> list[int]:
        if self._unit_tokenizer(raw) is not None:
            return list(raw.token_ids)
        return list(range(len(self._pieces(raw))))

    def special_token_ids(self, raw: ReplayInput) -> Collection[int] | None:
        tokenizer = self._unit_tokenizer(raw)
        if tokenizer is None:
            return frozenset(i for i, (_, marker) in enumerate(self._pieces(raw)) if marker)
        ids = {int(i) for i in tokenizer.all_special_ids}
        ids.update(int(i) for i, t in tokenizer.added_tokens_decoder.items() if getattr(t, "special", False))
        return frozenset(ids)

    def text_deltas(self, raw: ReplayInput, chunks: Sequence[Sequence[int]]) -> list[str]:
        """One text delta per chunk: incremental decoding of ids, or the chunk's text pieces."""
        tokenizer = self._unit_tokenizer(raw)
        if tokenizer is None:
            pieces = self._pieces(raw)
            return ["".join(pieces[i][0] for i in chunk) for chunk in chunks]
        deltas, ids, shown = [], [], ""
        for index, chunk in enumerate(chunks):
            ids.extend(chunk)
            text = tokenizer.decode(ids, skip_special_tokens=False)
            last = index == len(chunks) - 1
            if text.endswith("\ufffd") and not last:
                deltas.append("")  # an incomplete UTF-8 character waits for its next token
                continue
            deltas.append(text[len(shown):])
            shown = text
        return deltas

    def _text(self, raw: ReplayInput) -> str:
        """The whole reply as the detokenizer gives it (or raw.text with text units)."""
        tokenizer = self._unit_tokenizer(raw)
        if tokenizer is None:
            return raw.text
        text = tokenizer.decode(list(raw.token_ids), skip_special_tokens=False)
        if text != raw.text:
            raise RuntimeError(f"{raw.fixture_id}: the cached tokenizer decodes the ids to other text")
        return text

    # -- parsing ------------------------------------------------------------------

    def parser_config(self, raw: ReplayInput) -> dict[str, Any]:
        source = self._source(raw.model)
        try:
            detected = self._format(raw).name
        except (NoToolCallFormat, TemplateProbeError) as error:  # recorded; the parse reports it
            detected = exception_text(error)
        tokenizer = self._unit_tokenizer(raw)
        return {
            "template": source.origin,
            "template_sha256": source.template_sha256,
            "format": detected,
            "prefix": raw.generation_prompt,
            "units": "token ids, tokenizer from the Hub cache" if tokenizer is not None else "text units",
            "nonstream_entrypoint": "templatestudio.read_tool_calls(text, source, prefix=generation_prompt, "
            f"strict={STRICT}, tools=fixture tools)",
            "stream_entrypoint": "templatestudio.ToolCallStream(resolve_format(source), "
            f"reasoning_open=fmt.reasoning_opened_by(prefix), strict={STRICT}, tools=fixture tools).feed/.close",
            "stop_token_appended": False,
            "cut_call": "Reply.cut / CutToolCall not reported (no ParseResult field)",
            "truncated": raw.truncated,
        }

    def parse(self, raw: ReplayInput, tools: Sequence[ToolSpec]) -> ParseResult:
        text = self._text(raw)
        source = self._source(raw.model).read_source
        try:
            reply = read_tool_calls(text, source, prefix=raw.generation_prompt, strict=STRICT, tools=list(tools))
        except Exception as error:  # noqa: BLE001 - the reader's exception is the outcome
            return ParseResult(exception=exception_text(error))
        return ParseResult(
            content=reply.content or None,
            reasoning_content=reply.reasoning or None,
            tool_calls=tuple(
                ParsedToolCall(call.name, json.dumps(call.arguments, ensure_ascii=False)) for call in reply.calls
            ),
        )

    def parse_stream(self, raw: ReplayInput, chunks: Sequence[Sequence[int]], tools: Sequence[ToolSpec]) -> ParseResult:
        deltas = self.text_deltas(raw, chunks)
        accumulated = StreamAccumulator()
        try:
            fmt = self._format(raw)
            opened = fmt.reasoning_opened_by(raw.generation_prompt)
            stream = ToolCallStream(fmt, reasoning_open=opened, strict=STRICT, tools=list(tools))
            for delta in deltas:
                _accumulate(accumulated, stream.feed(delta))
            _accumulate(accumulated, stream.close())
        except Exception as error:  # noqa: BLE001 - deltas already streamed are kept, as a client saw them
            return accumulated.result(exception=exception_text(error))
        return accumulated.result()


def _accumulate(accumulated: StreamAccumulator, events: Iterable[object]) -> None:
    for event in events:
        if isinstance(event, TextDelta):
            accumulated.add_content(event.text)
        elif isinstance(event, ReasoningDelta):
            accumulated.add_reasoning(event.text)
        elif isinstance(event, ToolCallEvent):
            accumulated.append_tool_call(event.call.name, json.dumps(event.call.arguments, ensure_ascii=False))
        elif isinstance(event, CutToolCall):
            continue  # the suite's ParseResult has no field for it: see the module docstring
        else:
            raise TypeError(f"unexpected stream event {event!r}")
