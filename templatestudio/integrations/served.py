"""What the vLLM plugin does with a reply, without vLLM: the answer for a reply, streaming, leaks.

``templatestudio.integrations.vllm`` wraps these in vLLM's ``ToolParser``
types; everything that decides an answer lives here and in
``served_detect`` (the format the served template writes, found once per
server), so it can be run and shown (notebook 21, through
tests/vllm/served_view.py) where vLLM is not installed. Detection
(``detect_served_format``, ``grammar_refusals``) is re-exported here, where
notebooks 21, 22 and 26 import it.

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

import os

from templatestudio.argument_deltas import ArgumentStream
from templatestudio.calls import UnparsedToolCall
from templatestudio.formats import Format
from templatestudio.integrations.served_content import Calls, content_of
from templatestudio.integrations.served_detect import detect_served_format, grammar_refusals
from templatestudio.integrations.served_log import logger
from templatestudio.reader import read_tool_calls
from templatestudio.stream import ToolCallStream

__all__ = [
    "DELTAS_VARIABLE",
    "STRICT_VARIABLE",
    "LeakedToolCall",
    "ReplyStream",
    "detect_served_format",  # re-exported from served_detect
    "grammar_refusals",  # re-exported from served_detect
    "leak",
    "read_reply",
    "request_tools",
    "deltas_from_environment",
    "strict_from_environment",
]

STRICT_VARIABLE = "TEMPLATESTUDIO_VLLM_STRICT"
DELTAS_VARIABLE = "TEMPLATESTUDIO_VLLM_ARGUMENT_DELTAS"


def request_tools(request) -> list[dict] | None:
    """A chat request's tools as dicts (vLLM hands pydantic models), or None when it has none.

    Duck-typed on ``request.tools`` so that this module needs no vLLM; both
    parsers hand the result to the reader, where it types text-valued arguments.
    """
    tools = getattr(request, "tools", None)
    return [tool.model_dump() if hasattr(tool, "model_dump") else tool for tool in tools] if tools else None



class LeakedToolCall(ValueError):
    """Strict mode: the reply holds a tool call the reader could not read."""



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
    # layout=False without a reasoning parser: the content is the reply's own text (tags and
    # all) minus its calls, and a refused reply comes back unchanged: no whitespace is taken out.
    reply = read_tool_calls(text, fmt, reasoning_open=False, tools=tools, layout=reasoning_taken)
    content = content_of(fmt, reasoning_taken)
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
        self.taken = reasoning_taken
        self.content = content_of(fmt, reasoning_taken)
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
        content, calls = self.content.add(events, self.text)
        if content or calls or not self.taken:
            # With the layout, the whitespace it still holds was not sent (nor was any the events
            # have not shown yet): a leak sends it as written, as the whole reply's answer does.
            self.settled = self.stream.offset - self.stream.layout_holding
        return content, calls

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
        leak(error, self.format, self.strict, getattr(self.stream, "open_slot", None))
        self.leaked = True
        rest = self.text[self.settled :] if self.taken else self.content.unsent(self.text, self.settled)
        self.settled = len(self.text)
        return rest
