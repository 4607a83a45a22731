"""Streaming a reply to the user without ever showing part of a tool call.

``ToolCallStream`` takes a model's text in whatever pieces it arrives
(tokens, network chunks) and turns it into events: ``TextDelta`` for what
the user may see, ``ReasoningDelta`` for the format's thinking channel,
``ToolCallEvent`` for each whole parsed call. The user never sees any part
of a call marker, because text that could still become one (``<tool_`` at
the end of a chunk) is held back until the next chunk settles it.

How it decides, in one pass over the text:

- In ordinary text it watches for the opening literal of every format's
  marker (``templatestudio.leaks.MARKER_RULES``) and for the format's
  thinking opener. A literal is held until the few characters after it say
  whether it opens a call (``<tool_call>\\n{``) or is prose ("the
  ``<tool_call>`` tag"); prose is released as text. The held opening is
  read by its rule's automaton, which keeps its place between chunks, so a
  long run after an opener (``<tool_call>`` and 100 KB of spaces, fed in
  small chunks) is read once, not again with every chunk. An opener cut
  short by the length limit (``<|tool_call>`` then only whitespace) is held
  to the end of the reply, which alone can say it was a call.
- A call is held whole until its end: the closing tag, read past JSON or
  Gemma strings so a closing tag inside an argument does not end it, the
  end of the JSON for Mistral, or the end of the reply for formats whose
  call is the whole reply (``llama3-json``, ``pythonic``). The held text is
  then read by the format's strict parser, and any marker the parser did
  not consume raises ``UnparsedToolCall``.
- A reply that may open as a bare call (``{"name": …``, ``[name(``) is held
  only while its first characters still fit that shape.
- Inside the thinking channel nothing is parsed: a call rehearsed while
  thinking is reasoning text, never a ``ToolCallEvent``. The channel opens
  only before any visible text; a ``<think>`` tag after that is prose.

``parse_events`` gives the events of a whole reply at once, with the
format's parser over the full text; any chunking of a reply streams to the
same events (adjacent deltas merged).

Not handled: a reply that interleaves several formats' calls (the first
foreign one raises); thinking channels other than the format's response
template's ``thinking`` field; token ids (decode them first, keeping special
tokens); text after a call that is the whole reply is held to the end.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from templatestudio.formats import Format, get_format
from templatestudio.leaks import (
    MARKER_RULES,
    REPLY_OPENING,
    MarkerRule,
    assert_no_unparsed_markers,
)
from templatestudio.resumable_match import (
    FAILED,
    MATCHED,
    Automaton,
    Scan,
    chars,
    either,
    literal,
    optional,
    run,
    sequence,
)
from templatestudio.tools import ParsedToolCall, UnparsedToolCall


@dataclass(frozen=True)
class TextDelta:
    """Reply text the user may see."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """Text of the model's thinking channel; never parsed for calls."""

    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """One whole tool call, parsed by the stream's format."""

    call: ParsedToolCall


Event = TextDelta | ReasoningDelta | ToolCallEvent


def merge_deltas(events: list[Event]) -> list[Event]:
    """events with each run of adjacent deltas of one kind joined into one."""
    merged: list[Event] = []
    run: list[str] = []  # texts of the run of deltas being merged, joined once it ends
    kind: type | None = None
    for event in events:
        if isinstance(event, (TextDelta, ReasoningDelta)):
            if not event.text:
                continue  # an empty delta neither shows nor separates anything
            if type(event) is not kind:
                _close_run(merged, kind, run)
                kind = type(event)
            run.append(event.text)
        else:
            _close_run(merged, kind, run)
            kind = None
            merged.append(event)
    _close_run(merged, kind, run)
    return merged


def _close_run(merged: list[Event], kind: type | None, run: list[str]) -> None:
    text = "".join(run)
    run.clear()
    if kind is not None and text:
        merged.append(kind(text))


def resolve_format(fmt_or_tokenizer: object) -> Format:
    """A Format from a Format, a registered format name, or a tokenizer.

    A tokenizer's format is detected from its chat template; a template
    that writes no known format raises ``NoToolCallFormat`` naming the model.
    """
    if isinstance(fmt_or_tokenizer, Format):
        return fmt_or_tokenizer
    if isinstance(fmt_or_tokenizer, str):
        return get_format(fmt_or_tokenizer)
    from templatestudio.detect import NoToolCallFormat, detect_format

    detected = detect_format(fmt_or_tokenizer)
    if detected is None:
        name = getattr(fmt_or_tokenizer, "name_or_path", type(fmt_or_tokenizer).__name__)
        raise NoToolCallFormat(f"{name}: no tool-call format found in its chat template")
    return detected


def thinking_markers(fmt: Format) -> tuple[str, str] | None:
    """(opener, closer) of the format's thinking channel, from its response template."""
    field = fmt.response_template.get("fields", {}).get("thinking")
    if not field or not isinstance(field.get("open"), str) or not isinstance(field.get("close"), str):
        return None
    return field["open"], field["close"]


def parse_events(text: str, fmt: Format | str, *, reasoning_open: bool = False) -> list[Event]:
    """The events of a whole reply, read at once: what a stream of it must produce.

    reasoning_open says the prompt already opened the thinking channel.
    Raises ``UnparsedToolCall`` where the stream would.
    """
    fmt = resolve_format(fmt)
    thinking = thinking_markers(fmt)
    events: list[Event] = []
    at_start = True
    position = 0
    in_reasoning = reasoning_open and thinking is not None
    while position < len(text) or in_reasoning:
        if in_reasoning:
            end = text.find(thinking[1], position)
            stop = len(text) if end == -1 else end
            events.append(ReasoningDelta(text[position:stop]))
            position = len(text) if end == -1 else end + len(thinking[1])
            in_reasoning = False
            continue
        opener = text.find(thinking[0], position) if thinking and at_start else -1
        if opener != -1 and text[position:opener].strip():
            opener = -1  # reasoning comes first; later, the tag is prose
        stop = len(text) if opener == -1 else opener
        segment = text[position:stop]
        spans = [] if fmt.start_only and not at_start else fmt.parser.scan(segment)
        assert_no_unparsed_markers(segment, spans, fmt, at_reply_start=at_start, offset=position)
        events.extend(_events_from(segment, spans))
        at_start = at_start and not segment.strip()
        position = stop
        if opener != -1:
            position = opener + len(thinking[0])
            in_reasoning = True
    return merge_deltas(events)


def _events_from(text: str, spans: list) -> list[Event]:
    events: list[Event] = []
    cursor = 0
    for span in spans:
        if span.start > cursor:
            events.append(TextDelta(text[cursor : span.start]))
        events.append(ToolCallEvent(span.call))
        cursor = max(cursor, span.end)
    if cursor < len(text):
        events.append(TextDelta(text[cursor:]))
    return events


class ToolCallStream:
    """Feed a reply in pieces; get text, reasoning and whole calls back as events.

    ``feed(chunk)`` returns the events that chunk settles, ``close()`` the
    rest. ``UnparsedToolCall`` is raised by ``feed`` when a call closes that
    the format's parser cannot read (or another format's call appears), and
    by ``close`` when the reply ends inside a call. ``chars_examined`` counts
    the characters the stream has looked at, to show that cost grows
    linearly with the reply.
    """

    def __init__(self, fmt_or_tokenizer: object, *, reasoning_open: bool = False) -> None:
        self.format = resolve_format(fmt_or_tokenizer)
        self._thinking = thinking_markers(self.format)
        literals = [rule.literal for rule in MARKER_RULES if not rule.start_only]
        if self._thinking:
            literals.append(self._thinking[0])
        self._literals = regex.compile("|".join(regex.escape(item) for item in literals))
        self._pending = ""  # text not yet classified, while outside calls and reasoning
        self._offset = 0  # offset in the reply of _pending[0] (or of the open call)
        self._started = False  # the reply has shown non-whitespace text or a call
        self._region: _Region | None = None
        self._reasoning_tail: str | None = "" if (reasoning_open and self._thinking) else None
        self._probe: _Probe | None = None  # the held opening being read, anchored at _pending[0]
        self._reply_checked = False  # whether the reply's opening is known not to be a bare call
        self._closed = False
        self.chars_examined = 0

    def feed(self, chunk: str) -> list[Event]:
        if self._closed:
            raise RuntimeError("ToolCallStream already closed")
        events: list[Event] = []
        self._route(chunk, events, final=False)
        return merge_deltas(events)

    def close(self) -> list[Event]:
        if self._closed:
            raise RuntimeError("ToolCallStream already closed")
        self._closed = True
        events: list[Event] = []
        self._route("", events, final=True)
        return merge_deltas(events)

    # Each mode consumes what it can of text and hands the rest to the next mode.
    def _route(self, text: str, events: list[Event], *, final: bool) -> None:
        while True:
            if self._reasoning_tail is not None:
                rest = self._reason(text, events, final)
            elif self._region is not None:
                rest = self._in_call(text, events, final)
            else:
                rest = self._text(text, events, final)
            if rest is None:
                return
            text = rest

    def _reason(self, text: str, events: list[Event], final: bool) -> str | None:
        closer = self._thinking[1]
        window = self._reasoning_tail + text
        self.chars_examined += len(window)
        end = window.find(closer)
        if end != -1:
            events.append(ReasoningDelta(window[:end]))
            self._reasoning_tail = None
            self._offset += end + len(closer)
            return window[end + len(closer) :]
        keep = 0 if final else _partial_suffix(window, closer)
        events.append(ReasoningDelta(window[: len(window) - keep]))
        self._offset += len(window) - keep
        self._reasoning_tail = window[len(window) - keep :]
        return None

    def _text(self, text: str, events: list[Event], final: bool) -> str | None:
        pending = self._pending + text
        self._pending = ""
        position = 0
        while True:
            if not self._started and not self._reply_checked:
                decided = self._reply_opening(pending, position, final)
                if decided == "hold":
                    return self._hold(pending, position, events, final)
                if decided == "call":
                    return self._open_call(pending, position, _EndOfReply, at_start=True)
                self._reply_checked = True
            if self._probe is not None:  # a literal held from the last chunk opens pending
                start, literal = position, self._probe.literal
            else:
                found = self._literals.search(pending, position, partial=not final)
                self.chars_examined += (len(pending) if found is None else found.end()) - position
                if found is None:
                    self._emit_text(pending[position:], events)
                    self._offset += len(pending) - position
                    return None
                if found.partial:
                    return self._hold(pending, position, events, final, at=found.start())
                self._emit_text(pending[position : found.start()], events)
                self._offset += found.start() - position
                start, literal = found.start(), found.group()
            if self._thinking and literal == self._thinking[0]:
                if self._started:  # reasoning comes first; later, the tag is prose
                    self._emit_text(literal, events)
                    self._offset += len(literal)
                    position = start + len(literal)
                    continue
                self._reasoning_tail = ""
                self._reply_checked = False  # the reply proper starts after the reasoning
                self._offset += len(literal)
                return pending[start + len(literal) :]
            decided = self._opening(_RULES[literal], pending, start, final)
            if decided == "hold":
                return self._hold(pending, start, events, final)
            if decided == "call":
                return self._open_call(pending, start, _CLOSERS[literal], at_start=not self._started)
            self._emit_text(literal, events)  # prose that names a tag
            self._offset += len(literal)
            position = start + len(literal)

    def _opening(self, rule: MarkerRule, pending: str, start: int, final: bool) -> str:
        """'call', 'hold' or 'text': whether the literal at pending[start] opens a call.

        A literal held from an earlier chunk keeps its probe, which reads
        only the characters that arrived since.
        """
        probe = self._probe
        if probe is None:  # the literal was found whole: the scan starts past it
            probe = self._probe = _Probe(rule.automaton.scan(rule.literal), rule.literal)
        decided = probe.read(pending, start, final, truncated=rule.truncated)
        self.chars_examined += probe.drain_examined()
        if decided != "hold":
            self._probe = None
        return decided

    def _reply_opening(self, pending: str, position: int, final: bool) -> str:
        """'call', 'hold' or 'text': whether the reply's first characters open a bare call."""
        probe = self._probe
        if probe is None:
            probe = self._probe = _Probe(REPLY_OPENING.scan(), "", leading_space=True)
        decided = probe.read(pending, position, final, truncated=False)
        self.chars_examined += probe.drain_examined()
        if decided != "hold":
            self._probe = None
        return decided

    def _hold(
        self, pending: str, position: int, events: list[Event], final: bool, at: int | None = None
    ) -> None:
        at = position if at is None else at
        self._emit_text(pending[position:at], events)
        self._offset += at - position
        self._pending = pending[at:]
        if final:  # nothing more can come: what was held is text
            self._emit_text(self._pending, events)
            self._pending = ""
        return None

    def _emit_text(self, text: str, events: list[Event]) -> None:
        if text:
            events.append(TextDelta(text))
            self._started = self._started or not text.isspace()

    def _open_call(self, pending: str, start: int, closer: type, *, at_start: bool) -> str:
        self._region = _Region(closer(), at_start, [])
        return pending[start:]

    def _in_call(self, text: str, events: list[Event], final: bool) -> str | None:
        region = self._region
        end = region.closer.feed(text)
        self.chars_examined += len(text)
        if end is None and not final:
            region.parts.append(text)
            return None
        if end is None:
            region.parts.append(text)
            held = "".join(region.parts)
            if not isinstance(region.closer, _EndOfReply):
                self._raise_truncated(held, region)
            self._finish(held, region, events)
            return None
        region.parts.append(text[:end])
        self._finish("".join(region.parts), region, events)
        return text[end:]

    def _finish(self, held: str, region: _Region, events: list[Event]) -> None:
        fmt = self.format
        spans = [] if fmt.start_only and not region.at_start else fmt.parser.scan(held)
        assert_no_unparsed_markers(held, spans, fmt, at_reply_start=region.at_start, offset=self._offset)
        for event in _events_from(held, spans):
            if isinstance(event, TextDelta):
                self._emit_text(event.text, events)
            else:
                events.append(event)
                self._started = True
        self._offset += len(held)
        self._region = None

    def _raise_truncated(self, held: str, region: _Region) -> None:
        spans = [] if self.format.start_only and not region.at_start else self.format.parser.scan(held)
        try:
            assert_no_unparsed_markers(held, spans, self.format, at_reply_start=region.at_start)
        except UnparsedToolCall:
            opener = held.lstrip()[:20]
            raise UnparsedToolCall(
                f"the reply ended inside a tool call: {opener!r} at offset "
                f"{self._offset + len(held) - len(held.lstrip())} was never closed"
            ) from None


_SPACE_RUN = regex.compile(r"\s*+")


class _Probe:
    """A possible call opening, read one chunk at a time from where it stopped.

    The probe is anchored at the first character the stream holds: a
    marker's literal (already read: the scan starts past it), or the start
    of the reply (literal ""). ``fed`` counts the characters after the
    anchor it has read, so each chunk costs only its own length. ``blank``
    says whether only whitespace has followed the literal, which at the end
    of the reply makes a truncated call. leading_space passes over
    whitespace before the scan starts, as a reply may open with some before
    a bare call.
    """

    def __init__(self, scan: Scan, literal: str, *, leading_space: bool = False) -> None:
        self.scan = scan
        self.literal = literal
        self.skip = len(literal)
        self.fed = len(literal)
        self.blank = True
        self.leading_space = leading_space
        self._examined = 0

    def read(self, pending: str, anchor: int, final: bool, *, truncated: bool) -> str:
        """'call', 'hold' or 'text' once pending[anchor + fed:] is read too."""
        begin = anchor + self.fed
        if self.leading_space:
            # str.isspace, as find_call_markers strips a reply's leading whitespace.
            first = len(pending) - len(pending[begin:].lstrip())
            self._examined += first - begin
            if first == len(pending):
                self.fed = len(pending) - anchor
                return "text" if final else "hold"
            self.leading_space = False
            begin = first
        if truncated and self.blank:
            after = max(begin, anchor + self.skip)
            spaces = _SPACE_RUN.match(pending, after).end() if after < len(pending) else after
            self._examined += spaces - after
            self.blank = spaces == len(pending)
        before = self.scan.examined
        verdict, index = self.scan.feed(pending, begin)
        self._examined += self.scan.examined - before
        self.fed = len(pending) - anchor
        if verdict == MATCHED:
            return "call"
        if truncated and self.blank:
            return "call" if final else "hold"
        return "text" if verdict == FAILED or final else "hold"

    def drain_examined(self) -> int:
        """Characters read since the last call."""
        examined, self._examined = self._examined, 0
        return examined


@dataclass
class _Region:
    closer: _Closer
    at_start: bool
    parts: list[str]


def _partial_suffix(text: str, literal: str) -> int:
    """Length of the longest end of text that is a proper prefix of literal."""
    for size in range(min(len(literal) - 1, len(text)), 0, -1):
        if literal.startswith(text[-size:]):
            return size
    return 0


class _Closer:
    """Finds where a held call ends, reading each character once.

    feed() takes the call's text piece by piece, starting with its opening
    literal, and returns the offset in that piece just past the call's end,
    or None while the call is still open.
    """

    def feed(self, text: str) -> int | None:  # pragma: no cover - abstract
        raise NotImplementedError


class _EndOfReply(_Closer):
    """A call that is the whole reply ends only with it."""

    def feed(self, text: str) -> int | None:
        return None


class _Tokens(_Closer):
    """Ends at a closing literal outside strings and outside a leading JSON value.

    Class settings: skip, the opening literal's length; head, a pattern the
    opening must match before its JSON value starts (Mistral's
    ``NAME[ARGS]``); json, whether a JSON value may follow the opening (its
    strings and brackets are then stepped over as units); close, the literal
    that ends the call (None: the JSON value ends it); quote, a string
    delimiter between which nothing closes (Gemma 4's ``<|"|>``).
    """

    skip = 0
    head: Automaton | None = None
    literal_length = 0
    json = False
    close: str | None = None
    quote: str | None = None

    def __init__(self) -> None:
        self._fed = 0  # characters of the call before the current piece
        self._state = "head" if self.head is not None else ("value" if self.json else "scan")
        self._head = self.head.scan() if self.head is not None else None
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._tail = ""

    def feed(self, text: str) -> int | None:
        try:
            return self._advance(text, max(0, self.skip - self._fed))
        finally:
            self._fed += len(text)

    def _advance(self, text: str, index: int) -> int | None:
        while index < len(text):
            if self._state == "head":
                verdict, end = self._head.feed(text, index)
                if verdict == FAILED:  # no shape we can follow: the call is its opening literal
                    return max(self.literal_length - self._fed, 0)
                if verdict != MATCHED:
                    return None
                index = end - 1  # the JSON value's first bracket
                self._state = "json"
            elif self._state == "value":
                while index < len(text) and text[index].isspace():
                    index += 1
                if index < len(text):
                    self._state = "json" if text[index] in "[{" else "scan"
            elif self._state == "json":
                index = self._read_json(text, index)
                if index is None:
                    return None
                if self.close is None:
                    return index
                self._state = "scan"
            else:
                return self._read_scan(text, index)
        return None

    def _read_json(self, text: str, index: int) -> int | None:
        for position in range(index, len(text)):
            char = text[position]
            if self._in_string:
                if self._escape:
                    self._escape = False
                elif char == "\\":
                    self._escape = True
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char in "[{":
                self._depth += 1
            elif char in "]}":
                self._depth -= 1
                if self._depth == 0:
                    return position + 1
        return None

    def _read_scan(self, text: str, index: int) -> int | None:
        window = self._tail + text[index:]
        shift = index - len(self._tail)  # window offset -> piece offset
        position = 0
        # Where each literal next occurs at or after position (-1: nowhere). A
        # closer far ahead stays valid while strings open and close before it,
        # so the window is not searched again from every quote.
        ahead: dict[str, int] = {}
        while True:
            wanted = [self.quote] if self._in_string else [self.close, self.quote]
            wanted = [item for item in wanted if item]
            for item in wanted:
                at = ahead.get(item)
                if at is None or (at != -1 and at < position):
                    ahead[item] = window.find(item, position)
            hits = [(ahead[item], item) for item in wanted if ahead[item] != -1]
            if not hits:
                keep = max(_partial_suffix(window[position:], item) for item in wanted if item)
                self._tail = window[len(window) - keep :] if keep else ""
                return None
            found, item = min(hits)
            if item == self.close and not self._in_string:
                return found + len(item) + shift
            self._in_string = not self._in_string
            position = found + len(item)


def _closer(name: str, **settings) -> type:
    return type(name, (_Tokens,), settings)


_CLOSERS: dict[str, type] = {
    "<tool_call>": _closer("_TagCloser", skip=len("<tool_call>"), close="</tool_call>", json=True),
    "```json": _closer("_FenceCloser", skip=len("```json"), close="```", json=True),
    "<function=": _closer("_FunctionCloser", skip=len("<function="), close="</function>"),
    "<|tool_call>": _closer(
        "_GemmaCloser", skip=len("<|tool_call>"), close="<tool_call|>", quote='<|"|>'
    ),
    "<|tool_call_start|>": _closer(
        "_WrappedCloser", skip=len("<|tool_call_start|>"), close="<|tool_call_end|>"
    ),
    "[TOOL_CALLS]": _closer(
        "_MistralCloser",
        literal_length=len("[TOOL_CALLS]"),
        # [TOOL_CALLS], then NAME[ARGS] or NAME[CALL_ID]ID[ARGS] or whitespace, then the JSON.
        head=Automaton(
            sequence(
                literal("[TOOL_CALLS]"),
                either(
                    sequence(
                        run(chars(r"[A-Za-z0-9_.\-]"), at_least=1),
                        optional(sequence(literal("[CALL_ID]"), run(chars("[A-Za-z0-9]"), at_least=1))),
                        literal("[ARGS]"),
                    ),
                    run(chars(r"\s")),
                ),
                chars(r"[\[{]"),
            )
        ),
    ),
    "<|python_tag|>": _EndOfReply,
}
_RULES: dict[str, MarkerRule] = {rule.literal: rule for rule in MARKER_RULES if not rule.start_only}
