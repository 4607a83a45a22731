"""A vLLM tool parser that reads the call format from the served model's own chat template.

vLLM asks for ``--tool-call-parser NAME`` by hand, and a wrong name fails
silently: the call reaches the user as text and ``tool_calls`` stays empty.
This parser, registered as ``templatestudio``, probes the tokenizer's chat
template once when vLLM builds it (``templatestudio.detect``), logs the format
it found, and reads every reply with the package's own reader::

    python -m vllm.entrypoints.openai.api_server --model MODEL \\
        --enable-auto-tool-choice --tool-call-parser templatestudio \\
        --tool-parser-plugin "$(python -m templatestudio vllm-plugin)"

What it does, and the choices made:

- Start-up: a template that writes no format we read stops the server with
  one message (vLLM builds the parser once to validate it); the format is
  never guessed at the first request.
- Non-streaming replies go through ``templatestudio.reader.read_tool_calls``;
  streamed replies through one ``templatestudio.stream.ToolCallStream`` per
  request. A call reaches the client as a name delta, then one argument
  fragment that is the call's JSON; content deltas never hold part of a
  marker. The stream's end is ``finish_streaming``, the hook vLLM gives a
  ``ToolParser`` that sets ``engine_based_streaming`` (calls that are the
  whole reply, Llama 3's JSON, are only known once the reply ends).
- Leaks: a reply with a call marker the reader did not consume logs a
  warning naming the marker and its offset and comes back unchanged as
  content. With ``TEMPLATESTUDIO_VLLM_STRICT=1`` the request fails instead
  (HTTP 400 for a plain request, an error event for a stream). While
  streaming, calls already sent stay sent; everything not yet sent comes
  back as content.
- Reasoning is vLLM's ``--reasoning-parser``'s job: this parser only reads
  what the reasoning parser leaves as content. Without one, a thinking block
  stays in the content word for word, and a call written inside it is
  reasoning, not a tool call.
- Tool ids: an id the model wrote (Mistral's ``[CALL_ID]``) is kept; a
  template that only renders a call with a 9-character id (the probe's
  call shape) gets 9 letters and digits; otherwise vLLM's own
  ``chatcmpl-tool-…`` ids.

Not handled: a ``--chat-template`` override or a template sent with the
request (the parser sees only the tokenizer's template); ``tool_choice``
"required" or a named tool (vLLM constrains those to JSON and reads them
itself); ``tool_choice`` "none" passes text through untouched. Written
against vLLM 0.32's ``ToolParser`` interface.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import string
from collections.abc import Sequence
from dataclasses import dataclass

if __name__ == "vllm":  # vLLM loads a plugin path under its file's stem: this one would shadow vLLM
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
from vllm.renderers.chat_utils import make_tool_call_id  # noqa: E402
from vllm.tool_parsers import ToolParser, ToolParserManager  # noqa: E402

from templatestudio.calls import NoToolCallFormat, UnparsedToolCall  # noqa: E402
from templatestudio.reader import read_tool_calls  # noqa: E402
from templatestudio.stream import ReasoningDelta, TextDelta, ToolCallEvent, ToolCallStream  # noqa: E402

__all__ = [
    "PARSER_NAME",
    "STRICT_VARIABLE",
    "DetectedFormat",
    "LeakedToolCall",
    "TemplateStudioToolParser",
    "detect_served_format",
    "strict_from_environment",
]

PARSER_NAME = "templatestudio"
STRICT_VARIABLE = "TEMPLATESTUDIO_VLLM_STRICT"
# A child of vLLM's logger, so lines land in the server log in vLLM's format.
logger = logging.getLogger("vllm.templatestudio")


class LeakedToolCall(ValueError):
    """Strict mode: the reply holds a tool call the reader could not read."""


@dataclass(frozen=True)
class DetectedFormat:
    """What the probe of the served template found."""

    model: str
    format: object  # a templatestudio Format
    text_values: tuple[str, ...]  # probe arguments the template writes as text, not typed
    call_shape: str | None  # the assistant call message the template accepted
    ships_response_template: bool

    @property
    def nine_char_ids(self) -> bool:
        """The template renders a call only when its id is 9 letters and digits (Mistral)."""
        return bool(self.call_shape and "9-char id" in self.call_shape)

    def describe(self) -> str:
        if self.text_values:
            arguments = f"writes {', '.join(self.text_values)} values as text"
        else:
            arguments = "keeps argument types"
        return (
            f"templatestudio: {self.model} writes tool calls in the {self.format.name} format "
            f"({self.format.description}); arguments: {arguments}; "
            f"call turn rendered with {self.call_shape}"
        )


_detected: dict[tuple[str, str], DetectedFormat] = {}


def detect_served_format(tokenizer) -> DetectedFormat:
    """The format the tokenizer's chat template writes, probed once per template.

    The one place this integration calls the detector. The probe runs
    in-process (no sandbox): vLLM renders the same template in-process for
    every request anyway. Raises NoToolCallFormat, with a message for the
    server log, when there is none (or more than one reads the probe back).
    """
    from templatestudio.detect import detect_format
    from templatestudio.probe import TemplateProbeError, probe_template

    name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    template = getattr(tokenizer, "chat_template", None)
    key = (name, template if isinstance(template, str) else repr(template))
    if key in _detected:
        return _detected[key]
    ships = getattr(tokenizer, "response_template", None) is not None
    hand_pick = "choose vLLM's --tool-call-parser for this model by hand"
    if ships:
        hand_pick += ", or --tool-call-parser hf to read the response template it ships"
    if template is None:
        raise NoToolCallFormat(f"templatestudio: {name} has no chat template to read a format from; {hand_pick}")
    try:
        fmt = detect_format(tokenizer, deadline=None)
    except TemplateProbeError as error:
        raise NoToolCallFormat(
            f"templatestudio: the chat template of {name} cannot render a tool call "
            f"({error.template_error}); {hand_pick}"
        ) from None
    except NoToolCallFormat as error:  # AmbiguousFormat: two formats read the probe back
        raise NoToolCallFormat(f"templatestudio: {error}; {hand_pick}") from None
    probe = probe_template(tokenizer)  # cached: the probe detect_format just ran
    if fmt is None:
        raise NoToolCallFormat(
            f"templatestudio: the chat template of {name} writes no tool-call format "
            f"templatestudio reads ({probe.reason}); {hand_pick}"
        )
    found = DetectedFormat(name, fmt, tuple(probe.text_values), probe.shape, ships)
    _detected[key] = found
    logger.info("%s", found.describe())
    return found


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def strict_from_environment(environ=os.environ) -> bool:
    """Whether TEMPLATESTUDIO_VLLM_STRICT asks leaks to fail the request."""
    value = environ.get(STRICT_VARIABLE, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{STRICT_VARIABLE} must be 1 (fail on leaks) or 0 (the default), got {value!r}")


def _tools_off(request) -> bool:
    return not getattr(request, "tools", None) or getattr(request, "tool_choice", None) == "none"


class TemplateStudioToolParser(ToolParser):
    """vLLM ToolParser over templatestudio's reader and stream; see the module docstring."""

    # vLLM calls finish_streaming() at a stream's end only for parsers that say this.
    engine_based_streaming = True

    def __init__(self, tokenizer, tools=None) -> None:
        super().__init__(tokenizer, tools)
        self.detected = detect_served_format(tokenizer)
        self.format = self.detected.format
        self.strict = strict_from_environment()
        # vLLM builds one parser per request, but nothing promises it: streams are keyed by request.
        self._streams: dict[object, _ReplyStream] = {}
        self._last_stream: object = None

    def adjust_request(self, request):
        request = super().adjust_request(request)
        if not _tools_off(request):
            # Several formats open calls with special tokens (<|python_tag|>, [TOOL_CALLS]).
            request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request) -> ExtractedToolCallInformation:
        unchanged = ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        if _tools_off(request):
            return unchanged
        try:
            content, calls = _read_whole(model_output, self.format)
        except UnparsedToolCall as leak:
            self.report_leak(leak)
            return unchanged
        tool_calls = [
            ToolCall(id=self.call_id(written_id), function=FunctionCall(name=call.name, arguments=_arguments(call)))
            for call, written_id in calls
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
        if _tools_off(request):
            return DeltaMessage(content=delta_text) if delta_text else None
        key = getattr(request, "request_id", None) or id(request)
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = _ReplyStream(self)
        self._last_stream = key
        return stream.feed(delta_text)

    def finish_streaming(self) -> DeltaMessage | None:
        """The end of the stream last fed: what the stream still held."""
        stream = self._streams.pop(self._last_stream, None)
        return stream.close() if stream is not None else None

    def report_leak(self, leak: Exception) -> None:
        """Warn (default) or raise LeakedToolCall (strict) for an unread call marker."""
        if self.strict:
            raise LeakedToolCall(
                f"templatestudio ({STRICT_VARIABLE}=1): the reply holds a tool call the "
                f"{self.format.name} reader could not read: {leak}"
            ) from None
        logger.warning("templatestudio: %s; the reply is returned as content, unchanged", leak)

    def call_id(self, written: str | None = None) -> str:
        if written:
            return written
        if self.detected.nine_char_ids:
            return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(9))
        return make_tool_call_id()

    def record_call(self, call) -> None:
        """Keep vLLM's bookkeeping in step, so its end-of-stream top-up adds nothing."""
        self.prev_tool_call_arr.append({"name": call.name, "arguments": call.arguments})
        self.streamed_args_for_tool.append(_arguments(call))
        self.current_tool_id = len(self.prev_tool_call_arr) - 1


def _arguments(call) -> str:
    # The exact string vLLM's get_remaining_unstreamed_args compares against.
    return json.dumps(call.arguments, ensure_ascii=False)


class _Content:
    """Builds a reply's content from its events, and collects its calls.

    Reasoning goes back into the content inside the format's own tags, so a
    reply without calls comes back as exactly its text: splitting reasoning
    off is the reasoning parser's job. Reasoning blocks only open the reply
    (before any call or visible text), so while the reply is still opening
    the raw text is walked alongside the events: that puts back each tag
    where it was, even between two blocks the events merged into one.
    """

    def __init__(self, reasoning: tuple[str, str] | None) -> None:
        self.reasoning = reasoning
        self.opening = reasoning is not None  # no call or visible text yet: reasoning may come
        self.position = 0  # raw-text offset the content has reached, while opening
        self.in_block = False

    def add(self, events, text: str) -> tuple[str, list]:
        """(content, [(call, id written in the reply)]) for the next events; text is the reply so far."""
        pieces, calls = [], []
        for event in events:
            if isinstance(event, ReasoningDelta) and self.opening:
                pieces.append(self._reasoning(event.text, text))
                continue
            if self.in_block:
                pieces.append(self._close())
            if isinstance(event, ToolCallEvent):
                calls.append((event.call, event.id))
                self.opening = False
            else:
                pieces.append(event.text)
                self.position += len(event.text)
                self.opening = self.opening and not event.text.strip()
        return "".join(pieces), calls

    def _reasoning(self, piece: str, text: str) -> str:
        opener, closer = self.reasoning
        out = []
        while piece:
            if not self.in_block:  # the engine opens a block only where its opener stands
                out.append(opener)
                self.position += len(opener)
                self.in_block = True
            end = text.find(closer, self.position)
            room = (len(text) if end == -1 else end) - self.position
            taken, piece = piece[:room], piece[room:]
            out.append(taken)
            self.position += len(taken)
            if piece:  # this block closed and the next opened right after it
                out.append(self._close())
        return "".join(out)

    def _close(self) -> str:
        self.in_block = False
        self.position += len(self.reasoning[1])
        return self.reasoning[1]

    def finish(self, text: str) -> str:
        """The closing tag, when the reply ends right after it (no event followed to show it)."""
        if self.in_block and text.startswith(self.reasoning[1], self.position):
            return self._close()
        return ""

    def unsent(self, text: str, sent: int) -> str:
        """After a leak: the text not yet sent, given the offset the stream had settled."""
        return text[self.position :] if self.opening else text[sent:]


def _read_whole(text: str, fmt) -> tuple[str, list]:
    # reasoning_open=False: a reasoning parser has already taken any block
    # the prompt opened, and without one the block's text is plain content.
    reply = read_tool_calls(text, fmt, reasoning_open=False)
    content = _Content(fmt.reasoning)
    body, calls = content.add(reply.events, text)
    return body + content.finish(text), calls


def _stream_offset(stream: ToolCallStream) -> int:
    """Reply offset of the first character the stream has not settled into events.

    TEMPORARY private access until ToolCallStream exposes ``offset`` itself.
    """
    offset = getattr(stream, "offset", None)
    return offset if isinstance(offset, int) else stream._machine.offset


class _ReplyStream:
    """One streamed reply: its ToolCallStream, its text, and how much of it was sent.

    ``sent`` is the stream's offset after the last feed that returned: every
    character before it went out, as content or inside a call. The events of
    a feed that raised were never sent, so after a leak the text from there
    on goes out as content and nothing is lost.
    """

    def __init__(self, parser: TemplateStudioToolParser) -> None:
        self.parser = parser
        self.stream = ToolCallStream(parser.format)
        self.content = _Content(parser.format.reasoning)
        self.text = ""
        self.sent = 0
        self.passthrough = False  # after a leak: the rest is content
        self.closed = False

    def feed(self, delta: str) -> DeltaMessage | None:
        self.text += delta
        if self.passthrough:
            return DeltaMessage(content=delta) if delta else None
        try:
            events = self.stream.feed(delta)
        except UnparsedToolCall as leak:
            return self._leak(leak)
        self.sent = _stream_offset(self.stream)
        return self._message(*self.content.add(events, self.text))

    def close(self) -> DeltaMessage | None:
        if self.passthrough or self.closed:
            return None
        self.closed = True
        try:
            events = self.stream.close()
        except UnparsedToolCall as leak:
            return self._leak(leak)
        self.sent = len(self.text)
        body, calls = self.content.add(events, self.text)
        return self._message(body + self.content.finish(self.text), calls)

    def _leak(self, leak: Exception) -> DeltaMessage | None:
        self.parser.report_leak(leak)  # raises in strict mode
        self.passthrough = True
        rest = self.content.unsent(self.text, self.sent)
        self.sent = len(self.text)
        return DeltaMessage(content=rest) if rest else None

    def _message(self, content: str, calls: list) -> DeltaMessage | None:
        deltas: list[DeltaToolCall] = []
        for call, written_id in calls:
            deltas.extend(self._call_deltas(call, written_id))
        if not content and not deltas:
            return None
        return DeltaMessage(content=content or None, tool_calls=deltas)

    def _call_deltas(self, call, written_id: str | None) -> list[DeltaToolCall]:
        parser = self.parser
        index = len(parser.prev_tool_call_arr)
        parser.record_call(call)
        name = DeltaFunctionCall(name=call.name).model_dump(exclude_none=True)
        arguments = DeltaFunctionCall(arguments=_arguments(call)).model_dump(exclude_none=True)
        return [
            DeltaToolCall(index=index, type="function", id=parser.call_id(written_id), function=name),
            DeltaToolCall(index=index, function=arguments),
        ]


ToolParserManager.register_module(PARSER_NAME, module=TemplateStudioToolParser)
