"""A vLLM tool parser that reads the call format from the served model's own chat template.

vLLM asks for ``--tool-call-parser NAME`` by hand, and a wrong name fails
silently: the call reaches the user as text and ``tool_calls`` stays empty.
This parser, registered as ``templatestudio``, probes the tokenizer's chat
template once when vLLM builds it, logs the format it found, and reads every
reply with the package's own reader::

    python -m vllm.entrypoints.openai.api_server --model MODEL \\
        --enable-auto-tool-choice --tool-call-parser templatestudio \\
        --tool-parser-plugin "$(python -m templatestudio vllm-plugin)"

What decides an answer is in ``templatestudio.integrations.served`` and
``served_detect`` (no vLLM needed there); this module fits it to vLLM 0.32's
``ToolParser``:

- Start-up: vLLM builds the parser once to validate it, so a template that
  writes no format we read stops the server there with one message.
- ``extract_tool_calls`` reads a whole reply with ``read_tool_calls``;
  ``extract_tool_calls_streaming`` feeds one ``ToolCallStream`` per request.
  A call reaches the client as a name delta (with its id), then one
  argument fragment that is the call's JSON; content deltas never hold part
  of a marker. With ``TEMPLATESTUDIO_VLLM_ARGUMENT_DELTAS=1`` an open call's
  arguments go out in pieces as they are written (``argument_deltas``: the
  pieces join to the call's JSON; a call that then proves malformed keeps an
  unfinished slot, logged, or fails the request when strict). It is off by
  default because that slot is the one thing a stream would show that the
  whole reply does not (CanIToolCall's stream-equals-whole check fails on it). The stream's end comes through ``finish_streaming``, which
  vLLM calls for a ``ToolParser`` with ``engine_based_streaming`` set; it
  is needed because a call that is the whole reply (Llama 3's JSON) is only
  known once the reply ends.
- Leaks: a warning and the text unchanged as content, or with
  ``TEMPLATESTUDIO_VLLM_STRICT=1`` a failed request (HTTP 400, or an error
  event in a stream). A reply cut inside a call (``max_tokens``) is no
  leak: the calls before the cut go out, the cut one is neither a call nor
  content (a warning in the log), and vLLM ends the request as it ends any
  reply cut short.
- Arguments: for a format that writes values as text (Qwen3-Coder's XML,
  GLM's), each call is typed by the request's tools, as vLLM's qwen3_xml
  and glm parsers type it; other formats' arguments go out as written.
- Tool ids: an id the model wrote (Mistral's ``[CALL_ID]``) is kept; a
  template whose probe rendered only with an id of a fixed length
  (``CallShape.id_length``: Mistral's nine) gets that many letters and
  digits; otherwise vLLM's own ``chatcmpl-tool-…`` ids.
- Requests with ``tool_choice`` "none", or without tools, pass the text
  through untouched.
- Strict tool calling: for "required", a named tool, and "auto" under
  ``--tool-strict-level``, ``get_structural_tag`` hands vLLM an xgrammar
  structural tag built from the format's declared wire shape and the
  request's tools (``served_grammar``), so the model writes calls in its
  own format; the reply is read like any other. For a format the grammar
  cannot express (``DetectedFormat.no_grammar``, in the start-up line)
  or with ``VLLM_ENFORCE_STRICT_TOOL_CALLING=0``, vLLM constrains
  "required" and named choices to its own JSON and reads them itself.

- The template served: the server's ``--chat-template`` override when it
  has one (``vllm_template``: vLLM hands a parser neither it nor the
  serving layer, so the plugin reads it from the command line or
  ``TEMPLATESTUDIO_CHAT_TEMPLATE``), else the tokenizer's. A request that
  sends its own ``chat_template`` (vLLM takes it with
  ``--trust-request-chat-template``) is read in the format that template
  writes, probed once per template; one that writes no format we read gets
  its reply back as content, with a warning.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Sequence

if __name__ == "vllm":  # vLLM loads a plugin file under its stem: this one would shadow vLLM itself
    raise ImportError(
        "load templatestudio's parser through integrations/vllm_plugin.py "
        "(python -m templatestudio vllm-plugin prints its path), not vllm.py"
    )

from vllm.entrypoints.generate.base.protocol import (  # noqa: E402
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm import envs  # noqa: E402
from vllm.renderers.chat_utils import make_tool_call_id  # noqa: E402
from vllm.tool_parsers import ToolParser, ToolParserManager  # noqa: E402
from vllm.tool_parsers.tool_strict_level import ToolStrictLevel  # noqa: E402
from xgrammar import StructuralTag  # noqa: E402

from templatestudio.argument_deltas import ArgumentsDelta  # noqa: E402
from templatestudio.calls import NoToolCallFormat, UnparsedToolCall  # noqa: E402
from templatestudio.formats import FORMATS  # noqa: E402
from templatestudio.integrations.served import (  # noqa: E402
    STRICT_VARIABLE,
    LeakedToolCall,
    ReplyStream,
    leak,
    read_reply,
    request_tools,
    deltas_from_environment,
    strict_from_environment,
)
from templatestudio.integrations.served_detect import (  # noqa: E402
    DetectedFormat,
    detect_served_format,
    named_served_format,
    request_served_format,
)
from templatestudio.integrations.served_grammar import request_grammar  # noqa: E402
from templatestudio.integrations.served_log import logger  # noqa: E402
from templatestudio.integrations.vllm_template import served_tokenizer  # noqa: E402

__all__ = ["PARSER_NAME", "STRICT_VARIABLE", "LeakedToolCall", "TemplateStudioToolParser", "named_parser", "parser_names"]

PARSER_NAME = "templatestudio"
_ID_CHARACTERS = string.ascii_letters + string.digits


def _tools_off(request) -> bool:
    return not getattr(request, "tools", None) or getattr(request, "tool_choice", None) == "none"


def _arguments(call) -> str:
    # The exact string vLLM's get_remaining_unstreamed_args compares against.
    return json.dumps(call.arguments, ensure_ascii=False)


class TemplateStudioToolParser(ToolParser):
    """vLLM ToolParser over templatestudio's reader and stream; see the module docstring."""

    # vLLM calls finish_streaming() at the end of a stream only for parsers that set this.
    engine_based_streaming = True
    # vLLM sets this to True on its tool parser when no --reasoning-parser is configured: the
    # reasoning is then still in the text this parser reads (see read_reply's reasoning_taken).
    skip_reasoning_parsing = False
    # Any name but None makes vLLM ask get_structural_tag (ours builds the tag from the format's
    # wire shape; xgrammar's builtin tags are never looked up under this name), and, while
    # VLLM_ENFORCE_STRICT_TOOL_CALLING is on, read "required" and named choices through
    # extract_tool_calls instead of as its own JSON list (supports_required_and_named).
    structural_tag_model = PARSER_NAME

    # A templatestudio-NAME parser: the operator named the format, so no template is probed.
    named_format: str | None = None

    def __init__(self, tokenizer, tools=None) -> None:
        super().__init__(tokenizer, tools)
        self.strict = strict_from_environment()
        self.deltas = deltas_from_environment()
        # The template the server renders with: its --chat-template override, else the tokenizer's.
        self.served = served_tokenizer(tokenizer)
        self._serve(self.detect(self.served))
        # A request whose own chat_template writes no format we read: its text passes through.
        self.unreadable: str | None = None
        # The request _follow last looked at: a stream asks once per delta, the template is read once.
        self._followed: object = None
        # vLLM builds a parser per choice of a request (0.32 and 0.33 alike: one per choice for a
        # stream, a new one for each choice after the first of a whole reply), so the bookkeeping
        # vLLM reads off a parser (prev_tool_call_arr, streamed_args_for_tool) is per choice. Nothing
        # promises it, so streams are kept per request, not per parser.
        self._streams: dict[object, ReplyStream] = {}
        self._last_stream: object = None

    @classmethod
    def detect(cls, tokenizer) -> DetectedFormat:
        """The served format: probed from the template (``templatestudio-NAME`` parsers name it)."""
        return detect_served_format(tokenizer)

    def _serve(self, detected: DetectedFormat) -> None:
        """Read in detected's format; where it has no structural tag, vLLM's own JSON for "required"."""
        self.detected, self.format = detected, detected.format
        # Where "required" has no tag (the start-up line says why), vLLM keeps its own JSON for it.
        tagged = detected.grammar_refusal("required") is None and envs.VLLM_ENFORCE_STRICT_TOOL_CALLING
        # vLLM reads "required" and named choices through extract_tool_calls when this is False.
        self.supports_required_and_named = not tagged

    def _follow(self, request) -> None:
        """Switch to the format of the request's own chat_template, when it sends one (cached per template)."""
        if request is self._followed:
            return
        self._followed = request
        template = getattr(request, "chat_template", None)
        if self.named_format is not None or not template or self.unreadable is not None:
            return
        try:
            detected = request_served_format(self.served, template, self.detected)
        except NoToolCallFormat as error:
            self.unreadable = str(error)
            logger.warning("templatestudio: the request's chat_template: %s; its reply passes through as "
                           "content", error)
            return
        if detected is not self.detected:
            self._serve(detected)

    def get_structural_tag(self, request, *, reasoning: bool = False,
                           strict_level: ToolStrictLevel = ToolStrictLevel.AUTO):
        """The request's structural tag in its format (``served_grammar``), or None."""
        self._follow(request)
        if self.unreadable is not None or self.supports_required_and_named:
            return None
        tag = request_grammar(self.detected, request, every_argument=strict_level >= ToolStrictLevel.PARAMETER)
        return None if tag is None else StructuralTag.model_validate(tag)

    def adjust_request(self, request):
        self._follow(request)
        request = super().adjust_request(request)
        if not self._tools_off(request):
            # Several formats open calls with special tokens (<|python_tag|>, [TOOL_CALLS]).
            request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request) -> ExtractedToolCallInformation:
        unchanged = ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        if self._tools_off(request):
            return unchanged
        try:
            content, calls = read_reply(model_output, self.format, tools=request_tools(request),
                                        reasoning_taken=not self.skip_reasoning_parsing)
        except UnparsedToolCall as error:
            leak(error, self.format, self.strict)
            return unchanged
        tool_calls = [
            ToolCall(id=self.call_id(written), function=FunctionCall(name=call.name, arguments=_arguments(call)))
            for call, written in calls
        ]
        return ExtractedToolCallInformation(
            tools_called=bool(tool_calls), tool_calls=tool_calls, content=content or None
        )

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request,
    ) -> DeltaMessage | None:
        if self._tools_off(request):
            return DeltaMessage(content=delta_text) if delta_text else None
        key = getattr(request, "request_id", None) or id(request)
        if key not in self._streams:
            self._streams[key] = ReplyStream(self.format, strict=self.strict, tools=request_tools(request),
                                             reasoning_taken=not self.skip_reasoning_parsing, deltas=self.deltas)
        self._last_stream = key
        return self._message(*self._streams[key].feed(delta_text))

    def finish_streaming(self) -> DeltaMessage | None:
        """The end of the stream last fed: whatever it still held."""
        stream = self._streams.pop(self._last_stream, None)
        return self._message(*stream.close()) if stream is not None else None

    def _tools_off(self, request) -> bool:
        self._follow(request)
        return self.unreadable is not None or _tools_off(request)

    def call_id(self, written: str | None = None) -> str:
        if written:
            return written
        length = self.detected.id_length
        if length is not None:
            return "".join(secrets.choice(_ID_CHARACTERS) for _ in range(length))
        return make_tool_call_id()

    def _message(self, content: str, calls) -> DeltaMessage | None:
        """One DeltaMessage: content, whole calls, and the pieces of calls still being written.

        A call whose pieces went out (``ArgumentsDelta``) took its index with its
        first piece; its last piece comes just before the call itself, which
        then only completes vLLM's bookkeeping.
        """
        deltas: list[DeltaToolCall] = []
        finishing: int | None = None
        for item in calls:
            if isinstance(item, ArgumentsDelta):
                deltas += self._piece(item)
                finishing = item.index if item.final else None
                continue
            call, written = item
            if finishing is not None:  # its pieces joined are exactly this text (argument_deltas)
                self.prev_tool_call_arr[finishing]["arguments"] = call.arguments
                self.streamed_args_for_tool[finishing] = _arguments(call)
                finishing = None
                continue
            index = len(self.prev_tool_call_arr)
            # vLLM's own bookkeeping, kept in step so its end-of-stream top-up adds nothing.
            self.prev_tool_call_arr.append({"name": call.name, "arguments": call.arguments})
            self.streamed_args_for_tool.append(_arguments(call))
            self.current_tool_id = index
            name = DeltaFunctionCall(name=call.name).model_dump(exclude_none=True)
            arguments = DeltaFunctionCall(arguments=_arguments(call)).model_dump(exclude_none=True)
            deltas.append(DeltaToolCall(index=index, type="function", id=self.call_id(written), function=name))
            deltas.append(DeltaToolCall(index=index, function=arguments))
        if not content and not deltas:
            return None
        return DeltaMessage(content=content or None, tool_calls=deltas)

    def _piece(self, delta: ArgumentsDelta) -> list[DeltaToolCall]:
        """A piece of a call's arguments; the first piece of a call opens it with its id and name."""
        out = []
        if delta.index == len(self.prev_tool_call_arr):
            # Until the call is read, vLLM's top-up sees "" streamed of "" expected, so a call that
            # proves different is topped up with nothing; no string grows piece by piece (a long
            # argument would cost quadratic work). The call's own text is set when it is read.
            self.prev_tool_call_arr.append({"name": delta.name, "arguments": ""})
            self.streamed_args_for_tool.append("")
            self.current_tool_id = delta.index
            name = DeltaFunctionCall(name=delta.name).model_dump(exclude_none=True)
            out.append(DeltaToolCall(index=delta.index, type="function", id=self.call_id(delta.id), function=name))
        if delta.text:
            arguments = DeltaFunctionCall(arguments=delta.text).model_dump(exclude_none=True)
            out.append(DeltaToolCall(index=delta.index, function=arguments))
        return out


def named_parser(base: type, name: str) -> type:
    """base with its format named instead of detected: the ``templatestudio-NAME`` parsers.

    For a model whose template writes no call (or that has none) but whose
    replies are known to be in format name; also the way to overrule the probe.
    """
    def detect(cls, tokenizer) -> DetectedFormat:
        return named_served_format(tokenizer, name)

    return type(f"{base.__name__}[{name}]", (base,),
                {"detect": classmethod(detect), "named_format": name, "__doc__": named_parser.__doc__})


def parser_names() -> dict[str, str | None]:
    """Every name this plugin registers -> the format it names (None: detected from the template)."""
    return {PARSER_NAME: None, **{f"{PARSER_NAME}-{name}": name for name in FORMATS}}


for _name, _format in parser_names().items():
    ToolParserManager.register_module(
        _name, module=TemplateStudioToolParser if _format is None else named_parser(TemplateStudioToolParser, _format)
    )
