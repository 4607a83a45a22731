"""What the vLLM plugin does, without vLLM: detection, the answer for a reply, streaming, leaks.

``templatestudio.integrations.vllm`` wraps these in vLLM's ``ToolParser``
types; everything that decides an answer lives here, so it can be run and
shown (notebook 19) where vLLM is not installed.

- ``detect_served_format(tokenizer)``: the format the tokenizer's chat
  template writes, probed once per template and logged; ``NoToolCallFormat``
  with one message for the server log when there is none. The probe runs
  in-process, not sandboxed: the server renders the same template
  in-process for every request anyway.
- ``read_reply(text, fmt)``: (content, calls) for a whole reply, read by
  ``templatestudio.reader.read_tool_calls``; ``ReplyStream`` gives the same
  answer for the reply fed in pieces, through one ``ToolCallStream``. Both
  take the ``Format`` that ``detect_served_format`` found: the format is
  resolved once per server (per tokenizer and template), never per reply.
- The request's tools type the calls of a format that writes values as
  text (Qwen3-Coder's XML, GLM's), as vLLM's own parsers for those formats
  do (``templatestudio.typed_arguments``); other formats' calls go out as
  read.
- Content is the reply less its calls. Reasoning is not split off here
  (that is vLLM's ``--reasoning-parser``'s job): a thinking block stays in
  the content with its tags, and a call written inside it is reasoning,
  not a call (but where a block never closed ends at a call, by its
  format's ``Reasoning.ends_at_call``). A reply without calls comes back as exactly its text.
- ``leak(error, fmt, strict)``: the policy for a reply the reader refuses
  (a marker it did not consume, a call cut short). By default a warning
  naming the marker and offset, and the caller returns the text unchanged
  as content; with ``TEMPLATESTUDIO_VLLM_STRICT=1``, ``LeakedToolCall``.
- A reply that ended inside a call (cut by ``max_tokens``) is no leak:
  the calls that closed before the cut go out as calls, the content before
  it as content, and the cut call (a ``CutToolCall``) goes out as neither,
  with a warning in the log. The request ends as vLLM ends any reply cut
  short (``finish_reason`` "length"); strict mode does not fail it.

Not handled: a prompt that opened the thinking block itself (DeepSeek-R1
style templates): without a reasoning parser its text is read as
ordinary reply text.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from templatestudio.calls import NoToolCallFormat, ParsedToolCall, UnparsedToolCall
from templatestudio.formats import Format
from templatestudio.probe_call import CallShape
from templatestudio.reader import read_tool_calls
from templatestudio.stream import CutToolCall, ReasoningDelta, ToolCallEvent, ToolCallStream

__all__ = [
    "STRICT_VARIABLE",
    "DetectedFormat",
    "LeakedToolCall",
    "ReplyStream",
    "detect_served_format",
    "leak",
    "read_reply",
    "strict_from_environment",
]

STRICT_VARIABLE = "TEMPLATESTUDIO_VLLM_STRICT"
# A child of vLLM's logger, so inside vLLM the lines land in the server log in its format.
logger = logging.getLogger("vllm.templatestudio")

Calls = list[tuple[ParsedToolCall, "str | None"]]  # each call with the id the reply wrote, if any


class LeakedToolCall(ValueError):
    """Strict mode: the reply holds a tool call the reader could not read."""


@dataclass(frozen=True)
class DetectedFormat:
    """What the probe of the served template found."""

    model: str
    format: Format
    text_values: tuple[str, ...]  # probe arguments the template writes as text, not typed
    call_shape: CallShape  # the form of assistant call message the template accepted
    ships_response_template: bool

    def describe(self) -> str:
        """The line the plugin logs at start-up."""
        if self.text_values:
            arguments = f"values of {', '.join(self.text_values)} written as text"
        else:
            arguments = "typed as written"
        shipped = "; it also ships a response template" if self.ships_response_template else ""
        return (
            f"templatestudio: {self.model} writes tool calls in the {self.format.name} format "
            f"({self.format.description}); arguments {arguments}; "
            f"call turns rendered with {self.call_shape}{shipped}"
        )


_detected: dict[tuple[str, str], DetectedFormat] = {}


def detect_served_format(tokenizer) -> DetectedFormat:
    """The format the tokenizer's chat template writes; the one place the plugin calls the detector."""
    from templatestudio.detect import detect_format
    from templatestudio.probe import TemplateProbeError, probe_template

    name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    template = getattr(tokenizer, "chat_template", None)
    key = (name, template if isinstance(template, str) else repr(template))
    if key in _detected:
        return _detected[key]
    ships = getattr(tokenizer, "response_template", None) is not None
    by_hand = "choose vLLM's --tool-call-parser for this model by hand"
    if ships:
        by_hand += ", or --tool-call-parser hf to read the response template it ships"
    if template is None:
        raise NoToolCallFormat(f"templatestudio: {name} has no chat template to read a format from; {by_hand}")
    try:
        fmt = detect_format(tokenizer, deadline=None)
    except TemplateProbeError as error:
        raise NoToolCallFormat(
            f"templatestudio: the chat template of {name} cannot render a tool call "
            f"({error.template_error}); {by_hand}"
        ) from None
    except NoToolCallFormat as error:  # AmbiguousFormat: two formats read the probe back
        raise NoToolCallFormat(f"templatestudio: {error}; {by_hand}") from None
    probe = probe_template(tokenizer)  # cached: the probe detect_format just ran
    if fmt is None:
        raise NoToolCallFormat(
            f"templatestudio: the chat template of {name} writes no tool-call format "
            f"templatestudio reads ({probe.reason}); {by_hand}"
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


def leak(error: Exception, fmt, strict: bool) -> None:
    """Warn (the caller then returns the text as content), or raise LeakedToolCall when strict."""
    if strict:
        raise LeakedToolCall(
            f"templatestudio ({STRICT_VARIABLE}=1): the reply holds a tool call the "
            f"{fmt.name} reader could not read: {error}"
        ) from None
    logger.warning("templatestudio: %s; the reply is returned as content, unchanged", error)


class ReplyContent:
    """Builds a reply's content from its events, and collects its calls.

    Reasoning blocks only open a reply (before any call or visible text), so
    while the reply is still opening the raw text is walked beside the
    events: that puts each tag back where it stood, even between two blocks
    the events merged into one delta, and around blocks with nothing inside
    (which make no event). pairs: the format's reasoning pairs
    (``Format.reasoning_pairs``); each block gets back the tags it was
    written with, and a block that ended at a call (``Reasoning.ends_at_call``)
    gets no closer it never had.
    """

    def __init__(self, pairs: tuple[tuple[str, str], ...]) -> None:
        self.pairs = pairs
        self.reasoning = pairs[0] if pairs else None  # the pair of the block being walked
        self.empties = tuple("".join(pair) for pair in pairs)  # blocks with nothing inside
        self.opening = bool(pairs)  # no call or visible text yet: reasoning may come
        self.position = 0  # raw-text offset the content has reached, while opening
        self.in_block = False

    def add(self, events, text: str) -> tuple[str, Calls]:
        """(content, calls) for the next events; text is the reply so far."""
        pieces, calls = [], []
        for event in events:
            if isinstance(event, ReasoningDelta) and self.opening:
                pieces.append(self._reasoning(event.text, text))
                continue
            if self.in_block:
                pieces.append(self._close(text))
            if isinstance(event, CutToolCall):
                if self.opening:
                    pieces.append(self._empty_blocks(text))
                self.opening = False
                _not_sent(event)
            elif isinstance(event, ToolCallEvent):
                if self.opening:
                    pieces.append(self._empty_blocks(text))
                calls.append((event.call, event.id))
                self.opening = False
            elif self.opening:
                pieces.append(self._text(event.text, text))
                self.opening = not event.text.strip()
            else:
                pieces.append(event.text)
        return "".join(pieces), calls

    def _text(self, piece: str, text: str) -> str:
        """piece as it stood in text, with the empty blocks the events merged it across.

        An empty block in the raw text that piece does not also hold at that
        point is one the engine read as reasoning (and gave no event).
        """
        out, index = [], 0
        while index < len(piece):
            empty = next((item for item in self.empties if text.startswith(item, self.position)), None)
            if empty is not None and not piece.startswith(empty, index):
                out.append(empty)
                self.position += len(empty)
                continue
            ahead = min((at for at in (text.find(item, self.position + 1) for item in self.empties) if at != -1),
                        default=-1)
            step = len(piece) - index if ahead == -1 else min(len(piece) - index, ahead - self.position)
            out.append(piece[index : index + step])
            self.position += step
            index += step
        return "".join(out)

    def _reasoning(self, piece: str, text: str) -> str:
        out = []
        while piece:
            if not self.in_block:  # the engine opens a block only where its opener stands: the first one ahead
                found = [(at, pair) for pair in self.pairs if (at := text.find(pair[0], self.position)) != -1]
                self.reasoning = min(found)[1] if found else self.reasoning
                out.append(self.reasoning[0])
                self.position += len(self.reasoning[0])
                self.in_block = True
            closer = self.reasoning[1]
            end = text.find(closer, self.position)
            room = (len(text) if end == -1 else end) - self.position
            taken, piece = piece[:room], piece[room:]
            out.append(taken)
            self.position += len(taken)
            if piece:  # this block closed and the next opened right after it
                out.append(self._close(text))
        return "".join(out)

    def _empty_blocks(self, text: str) -> str:
        """Blocks with nothing inside (``<think></think>``): they make no event at all."""
        out = []
        while (empty := next((item for item in self.empties if text.startswith(item, self.position)), None)):
            out.append(empty)
            self.position += len(empty)
        return "".join(out)

    def _close(self, text: str) -> str:
        self.in_block = False
        closer = self.reasoning[1]
        if closer not in text[self.position :]:
            return ""  # the block ended at a call (Reasoning.ends_at_call): it has no closer
        self.position += len(closer)
        return closer

    def finish(self, text: str) -> str:
        """What no event showed at the end: a closing tag, or empty blocks, the reply ended on."""
        closing = ""
        if self.in_block and text.startswith(self.reasoning[1], self.position):
            closing = self._close(text)
        return closing + (self._empty_blocks(text) if self.opening else "")

    def unsent(self, text: str, settled: int) -> str:
        """After a leak: the text not sent yet, given the offset the stream had settled."""
        return text[self.position :] if self.opening else text[settled:]


def _not_sent(cut: CutToolCall) -> None:
    named = f" to {cut.name}" if cut.name is not None else ""
    logger.warning(
        "templatestudio: the reply ended inside a tool call%s at offset %d (%d characters of it written); "
        "the call is not sent", named, cut.offset, len(cut.raw),
    )


def read_reply(text: str, fmt: Format, *, tools: list[dict] | None = None) -> tuple[str, Calls]:
    """(content, calls) of a whole reply; raises UnparsedToolCall where the reader does.

    A call the reply ended inside is neither content nor a call (see the
    module docstring).

    fmt is the served format (``detect_served_format(...).format``), so the
    reader resolves nothing here. tools: the request's tools (dicts), which
    type the values of a format that writes them as text.
    """
    # reasoning_open=False: a reasoning parser has already taken any block the
    # prompt opened, and without one that block's text is plain content.
    # layout=False: without a reasoning parser the content is the reply's own text (tags and
    # all) minus its calls, and a refused reply comes back unchanged: no whitespace is taken out.
    reply = read_tool_calls(text, fmt, reasoning_open=False, tools=tools, layout=False)
    content = ReplyContent(fmt.reasoning_pairs)
    body, calls = content.add(reply.events, text)
    return body + content.finish(text), calls


class ReplyStream:
    """One reply fed in pieces: each feed gives (content, calls) to send now.

    After a refused reply the leak policy runs once (raising when strict);
    the text not yet sent then goes out as content, and so does everything
    fed after it. ``settled`` is the stream's offset after the last feed
    that returned: every character before it was sent, as content or inside
    a call, and the events of a feed that raised were never sent, so nothing
    is lost. Calls sent before a leak stay sent. A call the reply ended
    inside is no leak: ``close`` sends neither it nor its text, and logs it.
    tools: the request's tools, as ``read_reply`` takes them.
    """

    def __init__(self, fmt: Format, *, strict: bool = False, tools: list[dict] | None = None) -> None:
        self.format, self.strict = fmt, strict
        # strict=False: a cut call is no leak (see the module docstring).
        self.stream = ToolCallStream(fmt, strict=False, tools=tools, layout=False)  # as read_reply
        self.content = ReplyContent(fmt.reasoning_pairs)
        self.text = ""
        self.settled = 0
        self.leaked = False
        self.closed = False

    def feed(self, delta: str) -> tuple[str, Calls]:
        self.text += delta
        if self.leaked:
            return delta, []
        try:
            events = self.stream.feed(delta)
        except UnparsedToolCall as error:
            return self._leak(error), []
        self.settled = self.stream.offset
        return self.content.add(events, self.text)

    def close(self) -> tuple[str, Calls]:
        if self.leaked or self.closed:
            return "", []
        self.closed = True
        try:
            events = self.stream.close()
        except UnparsedToolCall as error:
            return self._leak(error), []
        self.settled = len(self.text)
        body, calls = self.content.add(events, self.text)
        return body + self.content.finish(self.text), calls

    def _leak(self, error: Exception) -> str:
        leak(error, self.format, self.strict)
        self.leaked = True
        rest = self.content.unsent(self.text, self.settled)
        self.settled = len(self.text)
        return rest
