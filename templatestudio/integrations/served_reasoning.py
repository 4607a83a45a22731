"""The reasoning half of a served reply, without vLLM: where the reasoning ends and the content starts.

vLLM reads a reply in two steps: a reasoning parser takes the reasoning off
the front of the reply, then the tool parser reads what is left. The
``templatestudio`` reasoning parser (``integrations.vllm_reasoning``) is a
thin vLLM wrapper around ``ReasoningSplit``, which does that first step by
the served format's own reasoning rule: the engine's (``engine.Machine``), so
the split is the one the reader and the stream make.

- Only blocks that open the reply are reasoning (a ``</think>`` inside a
  later call's argument never cuts the reply); a block the reply never
  closes ends at a call where the format says so (``Reasoning.ends_at_call``).
- The reasoning comes without its delimiters and without the whitespace the
  template writes inside them (``templatestudio.layout``).
- The content is the reply's raw text after the last block: the tool parser
  reads it. The layout whitespace right after a block is not part of it;
  with no block at all, the content is the reply exactly as written.
- The reasoning ends at the first thing that is not reasoning: visible
  text, a call (read, cut, or one the reader refuses), or the reply's end.
  It ends where the engine decides so (``Machine.past_opening``), not when
  the first event of that text or call settles: a call's event waits for
  its end, and a call the reply is cut inside never settles.

Whether the prompt already opened a block (Qwen3's ``<think>\\n``
generation prompt, DeepSeek's ``<think>``) is ``opened``: the pair
``Format.opened_reasoning`` finds at the end of a prompt's text;
``rendered_prompt`` renders the prompt a request asks for with the served
template.

Not handled: a block that opens after visible text is content (as for the
reader); a request whose messages the template cannot render gets no
prompt, so a block the prompt opened is then read as if it were not.
"""

from __future__ import annotations

from templatestudio.calls import UnparsedToolCall
from templatestudio.engine import Machine
from templatestudio.events import ReasoningDelta
from templatestudio.formats import Format
from templatestudio.templates import ChatTemplate

__all__ = ["ReasoningSplit", "closes_reasoning", "rendered_prompt", "split_reply"]

Pair = tuple[str, str]


class ReasoningSplit:
    """A reply fed in pieces, split where its reasoning ends.

    ``feed`` returns the reasoning to send now; once ``ended`` is set, the
    reasoning is over and ``content`` is the raw reply text after it, which
    grows with every later feed. ``close`` ends the reply: the reasoning
    still held, and the content.
    """

    def __init__(self, fmt: Format, *, opened: Pair | None = None) -> None:
        self.format = fmt
        # strict=False: a call cut short is the tool parser's to report, not a reasoning matter.
        self.machine = Machine(fmt, reasoning_open=opened or False, strict=False)
        self.text = ""
        self.ended = False
        self._start = 0  # where the content starts in text, once ended
        self._lead = ""  # whitespace between the blocks that is not layout (a format keeping all of it)
        self._sent = 0  # characters of reasoning returned so far
        self.closed = False

    @property
    def content(self) -> str:
        """The reply's text after the reasoning (empty while the reasoning goes on)."""
        return self._lead + self.text[self._start :] if self.ended else ""

    def feed(self, delta: str) -> str:
        self.text += delta
        if self.ended:
            return ""
        try:
            reasoning = self._reasoning(self.machine.feed(delta))
        except UnparsedToolCall:  # a call region the reader refuses: the reasoning ended before it
            reasoning = self._before_refusal()
            self._end()
            return reasoning
        if self.machine.past_opening:
            self._end()  # text or a call has started: its events may settle later, the reasoning is over
        self._sent += len(reasoning)
        return reasoning

    def close(self) -> tuple[str, str]:
        """(reasoning not yet returned, content): the reply is over."""
        reasoning = ""
        if not self.ended and not self.closed:
            try:
                reasoning = self._reasoning(self.machine.close())
            except UnparsedToolCall:
                reasoning = self._before_refusal()
        self.closed = True
        if not self.ended:
            self._end()
        return reasoning, self.content

    def _before_refusal(self) -> str:
        """The reasoning the feed that raised settled before the call the reader refused (the machine's)."""
        reasoning = self._reasoning(self.machine.settled_before_refusal())
        self._sent += len(reasoning)
        return reasoning

    @staticmethod
    def _reasoning(events) -> str:
        # Only whitespace between blocks can come as text here; the content takes it from the raw text.
        return "".join(event.text for event in events if type(event) is ReasoningDelta)

    def _end(self) -> None:
        self.ended = True
        spans, spacing, text = self.machine.reasoning_spans, self.format.spacing, self.text
        if not spans:
            return  # a reply with no block is content exactly as written
        # The whitespace the template writes beside a block is layout, not content (as Layout
        # takes it): before the first block, between blocks, and after the last one.
        gaps = [text[: spans[0][0]].rstrip(spacing)]
        gaps += [text[before[1] : after[0]].strip(spacing) for before, after in zip(spans, spans[1:])]
        self._lead = "".join(gaps)
        rest = text[spans[-1][1] :]
        self._start = len(text) - len(rest.lstrip(spacing))


def split_reply(text: str, fmt: Format, *, opened: Pair | None = None) -> tuple[str | None, str | None]:
    """(reasoning, content) of a whole reply, None for an empty part (vLLM's ``extract_reasoning``)."""
    split = ReasoningSplit(fmt, opened=opened)
    reasoning = split.feed(text)
    more, content = split.close()
    return (reasoning + more) or None, content or None


def closes_reasoning(fmt: Format, text: str) -> bool:
    """Whether text ends with a reasoning block closed (``<think>…</think>`` then only layout).

    vLLM asks this of the prompt to skip reasoning altogether: a template that
    switches thinking off writes an empty block at the end of its prompt.
    A format with no reasoning has none to wait for.
    """
    if not fmt.reasoning_pairs:
        return True
    tail = text.rstrip(fmt.spacing or None)
    return any(tail.endswith(closer) for _, closer in fmt.reasoning_pairs)


def rendered_prompt(template: ChatTemplate, messages: list[dict], *, tools: list[dict] | None = None,
                    add_generation_prompt: bool = True, variables: dict | None = None) -> str:
    """The prompt a request asks for, rendered with the served template (raises what rendering raises)."""
    return template.render(messages, tools=tools or None, add_generation_prompt=add_generation_prompt,
                           **(variables or {}))
