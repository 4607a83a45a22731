"""What the vLLM plugin does, without vLLM: detection, the answer for a reply, streaming, leaks.

``templatestudio.integrations.vllm`` wraps these in vLLM's ``ToolParser``
types; everything that decides an answer lives here, so it can be run and
shown (notebook 21, through tests/vllm/served_view.py) where vLLM is not installed.

- ``detect_served_format(tokenizer)``: the format the tokenizer's chat
  template writes, probed once per template and logged; ``NoToolCallFormat``
  with one message for the server log when there is none. The probe runs
  in-process, not sandboxed: the server renders the same template
  in-process for every request anyway.
- ``read_reply(text, fmt)``: (content, calls) for a whole reply, read by
  ``templatestudio.reader.read_tool_calls``; ``ReplyStream`` gives the same
  answer for the reply fed in pieces, through one ``ToolCallStream`` (with
  ``deltas``, an ``ArgumentStream``: an open call's arguments also go out as
  they arrive, and join to the arguments the whole read gives). Both
  take the ``Format`` that ``detect_served_format`` found: the format is
  resolved once per server (per tokenizer and template), never per reply.
- The request's tools type the calls of a format that writes values as
  text (Qwen3-Coder's XML, GLM's), as vLLM's own parsers for those formats
  do (``templatestudio.typed_arguments``); other formats' calls go out as
  read.
- Content is the reply less its calls. Reasoning is not split off here:
  that is the reasoning parser's job (``served_reasoning``, served as
  ``--reasoning-parser templatestudio``). With it (``reasoning_taken``), the
  text read is what follows the reasoning, and the whitespace the template
  writes beside a call is layout, not content (``served_content.TakenContent``).
  Without one, a thinking block stays in the content with its tags, a call
  written inside it is reasoning, not a call (but where a block never
  closed ends at a call, by its format's ``Reasoning.ends_at_call``), and a
  reply without calls comes back as exactly its text (``ReplyContent``).
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
style templates) when no reasoning parser runs: the block's text is then
read as ordinary reply text.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from templatestudio.argument_deltas import ArgumentStream
from templatestudio.calls import NoToolCallFormat, UnparsedToolCall
from templatestudio.detect import detect_format
from templatestudio.formats import Format, get_format
from templatestudio.integrations.served_content import Calls, ReplyContent, TakenContent
from templatestudio.probe import TemplateProbeError, probe_template
from templatestudio.probe_call import CallShape
from templatestudio.reader import read_tool_calls
from templatestudio.stream import ToolCallStream
from templatestudio.wire.structural_tag import refusal

__all__ = [
    "DELTAS_VARIABLE",
    "STRICT_VARIABLE",
    "DetectedFormat",
    "TemplateView",
    "LeakedToolCall",
    "ReplyStream",
    "detect_served_format",
    "grammar_refusals",
    "named_served_format",
    "leak",
    "request_served_format",
    "read_reply",
    "request_tools",
    "deltas_from_environment",
    "strict_from_environment",
]

STRICT_VARIABLE = "TEMPLATESTUDIO_VLLM_STRICT"
DELTAS_VARIABLE = "TEMPLATESTUDIO_VLLM_ARGUMENT_DELTAS"
# A child of vLLM's logger, so inside vLLM the lines land in the server log in its format.
logger = logging.getLogger("vllm.templatestudio")


def request_tools(request) -> list[dict] | None:
    """A chat request's tools as dicts (vLLM hands pydantic models), or None when it has none.

    Duck-typed on ``request.tools`` so that this module needs no vLLM; both
    parsers hand the result to the reader, where it types text-valued arguments.
    """
    tools = getattr(request, "tools", None)
    return [tool.model_dump() if hasattr(tool, "model_dump") else tool for tool in tools] if tools else None



class LeakedToolCall(ValueError):
    """Strict mode: the reply holds a tool call the reader could not read."""


GRAMMAR_MODES = ("required", "auto")


def grammar_refusals(fmt: Format) -> tuple[tuple[str, str], ...]:
    """(mode, why) for each tool_choice mode in which fmt has no structural tag; empty when it has both."""
    if fmt.wire is None:
        return tuple((mode, f"{fmt.name} declares no wire shape") for mode in GRAMMAR_MODES)
    found = ((mode, refusal(fmt.wire, mode)) for mode in GRAMMAR_MODES)
    return tuple((mode, why) for mode, why in found if why is not None)


@dataclass(frozen=True)
class DetectedFormat:
    """What the probe of the served template found."""

    model: str
    format: Format
    text_values: tuple[str, ...]  # probe arguments the template writes as text, not typed
    call_shape: CallShape | None  # the form of assistant call message the template accepted (None: named)
    ships_response_template: bool
    # (mode, why) where the format has no structural tag (grammar_refusals), found once per detection.
    no_grammar: tuple[tuple[str, str], ...]

    def grammar_refusal(self, mode: str) -> str | None:
        """Why there is no structural tag in mode ("required" or "auto"), None when there is one."""
        return dict(self.no_grammar).get(mode)

    @property
    def id_length(self) -> int | None:
        """The length of id the template's calls need (Mistral's nine), None for none."""
        return self.call_shape.id_length if self.call_shape is not None else None

    def describe(self) -> str:
        """The line the plugin logs at start-up, ending with what strict tool calling gets."""
        return self._found() + self._grammar()

    def _found(self) -> str:
        if self.call_shape is None:
            return (f"templatestudio: {self.model} is served in the {self.format.name} format "
                    f"({self.format.description}), as its parser's name says (no template probed)")
        if self.text_values:
            arguments = f"values of {', '.join(self.text_values)} written as text"
        else:
            arguments = "typed as written"
        shipped = "; it also ships a response template" if self.ships_response_template else ""
        if self.format.derived_from:
            values = "written as text, typed by the tool's schema" if self.format.values_are_text else "typed as written"
            return (
                f"templatestudio: {self.model}'s chat template matches no registered format, so its wire shape "
                f"was derived from the template and checked by round trip ({self.format.description}); "
                f"arguments {values}; call turns rendered with {self.call_shape}{shipped}"
            )
        return (
            f"templatestudio: {self.model} writes tool calls in the {self.format.name} format "
            f"({self.format.description}); arguments {arguments}; "
            f"call turns rendered with {self.call_shape}{shipped}"
        )

    def _grammar(self) -> str:
        required, auto = self.grammar_refusal("required"), self.grammar_refusal("auto")
        if required is not None:
            return (f"; no structural tag ({required}): tool_choice 'required' and named tools keep "
                    "vLLM's JSON")
        if auto is not None:
            return f"; structural tags for 'required' and named tools, none for 'auto' ({auto})"
        return "; structural tags for every tool_choice"


_detected: dict[tuple[str, str], DetectedFormat] = {}


def detect_served_format(tokenizer) -> DetectedFormat:
    """The format the tokenizer's chat template writes; the one place the plugin calls the detector."""
    name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    if isinstance(tokenizer, TemplateView):
        name = f"{name} (rendered with {tokenizer.where})"
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
    found = DetectedFormat(name, fmt, tuple(probe.text_values), probe.shape, ships, grammar_refusals(fmt))
    _detected[key] = found
    logger.info("%s", found.describe())
    return found


class TemplateView:
    """A tokenizer seen with another chat template: a request's own, or the server's override.

    Everything but the template (name, special tokens, response template) is
    the tokenizer's; ``detect_served_format`` then probes this template, and
    caches the answer by (name, template) as it does for the tokenizer's own.
    where says which template it is, for the start-up line.
    """

    def __init__(self, tokenizer, template: str, *, where: str = "the request's chat_template") -> None:
        self._tokenizer, self.chat_template, self.where = tokenizer, template, where

    def get_chat_template(self, tools=None) -> str:
        return self.chat_template

    def __getattr__(self, name: str):
        return getattr(self._tokenizer, name)


def request_served_format(tokenizer, template: str | None, served: DetectedFormat) -> DetectedFormat:
    """The format of the template a request is rendered with: its own ``chat_template``, else served.

    Raises ``NoToolCallFormat`` (with the detector's reason) when the
    request's template writes no format templatestudio reads.
    """
    if not template or template == getattr(tokenizer, "chat_template", None):
        return served
    return detect_served_format(TemplateView(tokenizer, template))


def named_served_format(tokenizer, name: str) -> DetectedFormat:
    """The format an operator named (``--tool-call-parser templatestudio-NAME``): no template is probed.

    For a model with no chat template, or one whose template writes no call
    (DeepSeek V4.1 and Kimi K3 publish none). Raises ``UnknownFormat`` for a
    name no format has. Calls get the server's own ids.
    """
    model = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    key = (model, f"named:{name}")
    if key not in _detected:
        fmt = get_format(name)
        ships = getattr(tokenizer, "response_template", None) is not None
        found = DetectedFormat(model, fmt, (), None, ships, grammar_refusals(fmt))
        _detected[key] = found
        logger.info("%s", found.describe())
    return _detected[key]


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def _setting(variable: str, meaning: str, environ) -> bool:
    value = environ.get(variable, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{variable} must be 1 ({meaning}) or 0 (the default), got {value!r}")


def strict_from_environment(environ=os.environ) -> bool:
    """Whether TEMPLATESTUDIO_VLLM_STRICT asks leaks to fail the request."""
    return _setting(STRICT_VARIABLE, "fail on leaks", environ)


def deltas_from_environment(environ=os.environ) -> bool:
    """Whether TEMPLATESTUDIO_VLLM_ARGUMENT_DELTAS asks for an open call's arguments in pieces.

    Off by default: a stream then answers exactly what the whole reply
    answers, for every reply. On, a client gets a call's arguments as they
    are written, and a call that proves malformed after its pieces went out
    keeps an unfinished slot (``argument_deltas``' rule), which a whole
    reply never shows: the price of the early pieces.
    """
    return _setting(DELTAS_VARIABLE, "send an open call's arguments in pieces", environ)


def leak(error: Exception, fmt, strict: bool, unfinished: int | None = None) -> None:
    """Warn (the caller then returns the text as content), or raise LeakedToolCall when strict.

    unfinished: the index of a call whose arguments went out in pieces before
    the reader refused it (``argument_deltas``): its arguments stay unfinished.
    """
    streamed = "" if unfinished is None else \
        f" (tool call {unfinished}, whose arguments were streamed, stays unfinished)"
    if strict:
        raise LeakedToolCall(
            f"templatestudio ({STRICT_VARIABLE}=1): the reply holds a tool call the "
            f"{fmt.name} reader could not read: {error}{streamed}"
        ) from None
    logger.warning("templatestudio: %s; the reply is returned as content, unchanged%s", error, streamed)


def read_reply(text: str, fmt: Format, *, tools: list[dict] | None = None,
               reasoning_taken: bool = False) -> tuple[str, Calls]:
    """(content, calls) of a whole reply; raises UnparsedToolCall where the reader does.

    A call the reply ended inside is neither content nor a call (see the
    module docstring).

    fmt is the served format (``detect_served_format(...).format``), so the
    reader resolves nothing here. tools: the request's tools (dicts), which
    type the values of a format that writes them as text. reasoning_taken:
    a reasoning parser has already taken the reasoning off the reply's front
    (``served_reasoning``), so text is the rest of the reply; see
    ``TakenContent``.
    """
    # reasoning_open=False: a reasoning parser has already taken any block the
    # prompt opened, and without one that block's text is plain content.
    if reasoning_taken:
        reply = read_tool_calls(text, fmt, reasoning_open=False, tools=tools)
        return TakenContent(fmt.reasoning_pairs).add(reply.events)
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

    def __init__(self, fmt: Format, *, strict: bool = False, tools: list[dict] | None = None,
                 reasoning_taken: bool = False, deltas: bool = False) -> None:
        self.format, self.strict = fmt, strict
        # strict=False: a cut call is no leak (see the module docstring). Layout as read_reply's.
        # deltas: an open call's arguments go out as they arrive (argument_deltas; its rule for a
        # call that then proves different: ArgumentsWithdrawn, logged, and the slot stays unfinished).
        stream = ArgumentStream if deltas else ToolCallStream
        self.stream = stream(fmt, strict=False, tools=tools, layout=reasoning_taken)
        self.taken = TakenContent(fmt.reasoning_pairs) if reasoning_taken else None
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
        return self._add(events)

    def close(self) -> tuple[str, Calls]:
        if self.leaked or self.closed:
            return "", []
        self.closed = True
        try:
            events = self.stream.close()
        except UnparsedToolCall as error:
            return self._leak(error), []
        self.settled = len(self.text)
        if self.taken is not None:
            return self.taken.add(events)
        body, calls = self.content.add(events, self.text)
        return body + self.content.finish(self.text), calls

    def _add(self, events) -> tuple[str, Calls]:
        return self.taken.add(events) if self.taken is not None else self.content.add(events, self.text)

    def _leak(self, error: Exception) -> str:
        leak(error, self.format, self.strict, getattr(self.stream, "open_slot", None))
        self.leaked = True
        rest = self.text[self.settled :] if self.taken is not None else self.content.unsent(self.text, self.settled)
        self.settled = len(self.text)
        return rest
