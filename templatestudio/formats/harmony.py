"""OpenAI harmony (gpt-oss): ``to=functions.NAME`` in a message header, ``<|message|>{JSON}<|call|>``.

What a gpt-oss reply looks like after its generation prompt ``<|start|>assistant``:
messages, each a header, ``<|message|>``, a body and a terminator, the later
ones opened by ``<|start|>assistant``. Read:

- calls: a header naming the recipient ``to=functions.NAME`` either before
  the channel (``to=functions.NAME<|channel|>commentary json``, as the
  published gpt-oss-120b template writes history) or after it
  (``<|channel|>commentary to=functions.NAME <|constrain|>json``, as the
  model writes); the content type, when written, must be ``json``; the body
  one JSON object, ending at ``<|call|>``, at ``<|end|>`` (below) or, when
  a server removed the stop token, at the end of the reply. One call per
  message, any number of messages;
- a call message ended by ``<|end|>``: OpenAI's harmony documentation has
  the model end a call with ``<|call|>``, but ``<|end|>`` ends a message
  as well (the reference parser, openai-harmony's ``StreamableParser``,
  ends a message at any of ``<|end|>``, ``<|call|>``, ``<|return|>``, and
  the recipient alone makes it a call; vLLM reads such a reply, its test
  ``test_commentary_with_recipient_excluded``). The reading is unambiguous:
  the header addresses the message to ``functions.NAME``, and ``<|end|>``
  cannot stand inside the JSON body except in a string, where it is text;
- reasoning: the analysis message at the start of the reply,
  ``<|channel|>analysis<|message|>…`` up to ``<|end|><|start|>assistant``
  (the engine's reasoning pair; consecutive analysis messages at the start
  are each reasoning);
- content: the bodies of ``final`` and ``commentary`` (preamble) messages.
  Their headers, ``<|end|><|start|>assistant`` before a header, and
  ``<|return|>`` are the reply's framing: the reader drops them (the regions
  read as no call). The space of ``<|start|>assistant to=…`` (the
  recipient in the role) is the header's, not content;
- several messages after a call: when a server does not stop at
  ``<|call|>`` (ignore_eos), ``<|start|>assistant`` and the next header
  follow it; the call's region takes ``<|start|>assistant`` (and the space
  after it) as framing, so a second call, a preamble or a final answer
  after a call reads as it does anywhere else;
- llama.cpp's stray header (its #21286): ``<|channel|>commentary
  to=assistant`` right before another header (``<|channel|>…``), a message
  addressed to the assistant role itself, is framing too: its region is
  the header alone, so the header after it reads as any header does.

Refused: a recipient other than ``functions.*`` (gpt-oss's built-in
``browser`` and ``python`` tools), a call on the ``final`` channel, two
recipients, a content type other than JSON, a body that is not one JSON
object, a call message ended by ``<|return|>`` (the end of a final answer:
no template or server writes it after a call, so the body holds it as
text and is no JSON object).

Message bodies are content: every call is addressed by its header
(``WIRE.addressed``), so by default a harmony reader does not watch the
formats whose calls open on plain text (``{``, ``[``, a code fence, a bare
word: JSON such as ``{"name": …, "arguments": …}`` in a final answer is the
answer, ``templatestudio.guards.guard_of``); another format's marked call
(``<tool_call>``, ``[TOOL_CALLS]``, …) in a message body still raises as
that format's leak, and so does Muse's (``to=NAME<|message|><atem:…``:
the other addressed format stays watched). Left out with them: the marked openers those formats
also have (Llama 3's ``<|python_tag|>``, the pythonic format's
``<|tool_call_start|>`` and ``<|python_start|>``), since a guard is a tuple
of whole formats; ``guard=`` watches them again. The rule holds in the
whole reply, text before any header included.
Not handled (what the engine cannot express): an analysis message after a
preamble or a final message is not reasoning: it stays text, header
included, since the engine reads reasoning only at the start of the reply;
an analysis message that ends the reply keeps its ``<|end|>`` in the
reasoning text; ``<|start|>`` is no marker (the engine reads a marker
inside another marker, ``<|start|>`` inside ``<|end|><|start|>assistant``,
differently whole and streamed), so ``<|start|>assistant`` stays text
unless it follows a call's ``<|call|>`` or ``<|end|>``, or ``<|end|>`` with
a header after it (the
space before ``to=`` at the very start of the reply or right after the
reasoning, ``…<|end|><|start|>assistant to=…``, touches the call, so it
is layout: ``templatestudio.layout``); the analysis message after a stray
header at the reply's start is not reasoning (the engine reads reasoning
only at the start, and the framing region stands there): it stays text,
its ``<|channel|>analysis<|message|>`` included, so nothing is lost; a
stray header on another channel, with no header after it, or cut, is a
call header refused as before (``to=assistant`` is no function).
Names holding whitespace, ``<`` or ``"`` cannot be written.

Library: ``openai-harmony`` (OpenAI's Rust parser, on PyPI) installs here
but cannot run offline: loading its encoding downloads the
``o200k_base.tiktoken`` vocabulary at run time, and no package from the
registries this project uses ships that file, so it is neither used nor
tested against; this reader follows the format as the gpt-oss template and
OpenAI's harmony documentation write it.
"""

from __future__ import annotations

import json
import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.formats.harmony_extents import Boundary, CallThenNextMessage, call_end
from templatestudio.wire.base import (
    Found, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.token_extent import TokenExtent
from templatestudio.wire.jsonbody import decode_whole
from templatestudio.resumable_match import chars, either, literal, run
from templatestudio.wire.shape import Call, HandWritten, JsonObject, Reasoning, WireShape

# The declared shape: what a declaration can say of harmony is its literals
# (the markers, the closer, the reasoning pair, the framing); its header is
# not a fixed envelope, so the name, the openers, the reader and the writer
# are this module's own.
WIRE = WireShape(
    call=Call("<|channel|>", "<|call|>", also_opens=("to=",)),
    name=HandWritten(
        "the recipient to=functions.NAME stands in the message header, before the channel "
        "(the template's history) or after it (the model's), with an optional content type; "
        "the channel decides whether the header opens a call, a reasoning or a content message"
    ),
    arguments=JsonObject(),
    separator="",
    # also: llama.cpp's stray header (its #21286), a commentary header addressed to the
    # assistant role itself, written before the analysis message: the block opens after it.
    reasoning=Reasoning("<|channel|>analysis<|message|>", "<|end|><|start|>assistant",
                        also=(("<|channel|>commentary to=assistant<|channel|>analysis<|message|>",
                               "<|end|><|start|>assistant"),)),
    stop_tokens=("<|call|>", "<|return|>"),
    closer_optional=True,  # a server that stops on <|call|> removes it
    # Headers of final and commentary messages, the boundary before a header,
    # and <|return|>: the reply's framing, dropped by the reader.
    framing=("<|channel|>", "<|end|><|start|>assistant", "<|return|>"),
    addressed=True,  # to=functions.NAME in the header: a message body is content
)

START, ASSISTANT, MESSAGE = "<|start|>", "assistant", "<|message|>"
CHANNEL, CALL_END = WIRE.call.open, WIRE.call.close
END, RETURN, CONSTRAIN = "<|end|>", WIRE.framing[-1], "<|constrain|>"
(TO,), FUNCTIONS = WIRE.call.also_opens, "functions."
ANALYSIS, BOUNDARY = WIRE.reasoning_pair
_NEVER = 1 << 30  # cut_after for framing: a reply cut inside it is prose
# What ends a call message: <|call|>, or <|end|>, which ends any message (see the module docstring).
_CALL_CLOSERS = (CALL_END, END)
# llama.cpp's stray header (its #21286): a message addressed to the assistant role itself.
STRAY = f"{CHANNEL}commentary {TO}{ASSISTANT}"
_RECIPIENT = re.compile(r'to=([^ \t\n\r<"]+)')
_CHANNEL_NAME = re.compile(r"[a-z]+")
_CONTENT_TYPE = re.compile(r" ?(<\|constrain\|>)?([^ \t\n\r<]*)")
_CALL_CHANNELS = ("analysis", "commentary")

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|start|>assistant",
    "fields": {
        "thinking": {"open": ANALYSIS, "close": END, "content": "text", "repeats": True, "join": "\n"},
        "tool_calls": {
            "open_pattern": (r"(?:<\|channel\|>(?:analysis|commentary) )?to=functions\.(?P<name>[^ \t\n\r<\"]+)"
                             r"(?:<\|channel\|>(?:analysis|commentary))? ?(?:<\|constrain\|>)?(?:json)?<\|message\|>"),
            "close": list(_CALL_CLOSERS),
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"open_pattern": r"<\|channel\|>(?:final|commentary)<\|message\|>", "close": [END, RETURN],
                    "content": "text", "repeats": True, "join": "\n"},
    },
}


def _recipient(region: str, position: int) -> tuple[str, int]:
    found = _RECIPIENT.match(region, position)
    if found is None:
        raise CallSyntaxError(f"no recipient after {TO!r} at offset {position}")
    return found.group(1), found.end()


def _read_header(region: str) -> tuple[str, int]:
    """The recipient of a call's header and the offset of its body."""
    recipient, position = _recipient(region, 0) if region.startswith(TO) else (None, 0)
    if not region.startswith(CHANNEL, position):
        raise CallSyntaxError(f"expected {CHANNEL} at offset {position}")
    channel = _CHANNEL_NAME.match(region, position + len(CHANNEL))
    if channel is None or channel.group() not in _CALL_CHANNELS:
        shown = channel.group() if channel else region[position + len(CHANNEL) : position + len(CHANNEL) + 12]
        raise CallSyntaxError(f"a call on the {shown!r} channel, not {' or '.join(_CALL_CHANNELS)}")
    position = channel.end()
    if region.startswith(" " + TO, position):
        if recipient is not None:
            raise CallSyntaxError("the header names two recipients")
        recipient, position = _recipient(region, position + 1)
    if recipient is None:
        raise CallSyntaxError("the header names no recipient")
    content_type = _CONTENT_TYPE.match(region, position)
    constrained, kind = content_type.group(1), content_type.group(2)
    if kind not in ("", "json") or (constrained and not kind):
        raise CallSyntaxError(f"content type {kind!r} after {recipient!r} is not json")
    position = content_type.end()
    if not region.startswith(MESSAGE, position):
        raise CallSyntaxError(f"the header of the call to {recipient!r} does not end with {MESSAGE}")
    if not recipient.startswith(FUNCTIONS) or recipient == FUNCTIONS:
        raise CallSyntaxError(f"the recipient {recipient!r} is not a function (gpt-oss's built-in tools are not read)")
    return recipient[len(FUNCTIONS) :], position + len(MESSAGE)


# What follows <|call|> when a server does not stop there: the next message's
# start, and the space before a recipient in its role (``<|start|>assistant
# to=…``). Both are framing, never content.
_NEXT = START + ASSISTANT


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    if not any(opener is call_opener for call_opener in CALL_OPENERS):
        return []  # framing: a header, a message boundary or <|return|>; the text around it is the content
    name, body = _read_header(region)
    end = call_end(region, _CALL_CLOSERS, _NEXT)
    for closer in _CALL_CLOSERS:
        if region.startswith(closer, end - len(closer)):
            end -= len(closer)  # else the server removed the stop token
            break
    arguments = decode_whole(region, body, end, found)
    if not isinstance(arguments, dict):
        raise CallSyntaxError(f"the arguments of {name!r} must be a JSON object")
    return [CallSpan(ParsedToolCall(name, arguments), 0, len(region))]


# Hand-written: the declared name is (see WIRE), so the header is written here.
def write_call(call: ParsedToolCall) -> str:
    body = json.dumps(call.arguments, ensure_ascii=False)
    return f"{CHANNEL}commentary {TO}{FUNCTIONS}{call.name} {CONSTRAIN}json{MESSAGE}{body}{CALL_END}"


# Hand-written (``formats.harmony_extents``): a call's region takes the next
# message's start after its terminator, and a boundary the space of the role
# before a recipient; both are framing, never content.
def _call_extent(skip: int):
    return lambda: CallThenNextMessage(skip, _CALL_CLOSERS, _NEXT)


_NEXT_HEADER = either(literal(" " + TO), literal(CHANNEL))
_FRAMED = either(literal("final"), literal("commentary"))
CALL_OPENERS = (
    # Cut short only past the point where a reasoning or framing header
    # (``<|channel|>commentary<|message|>``) could still be what arrives.
    Opener(CHANNEL, opener_pattern(CHANNEL, either(*map(literal, (*_CALL_CHANNELS, "final"))), literal(" " + TO)),
           _call_extent(len(CHANNEL)), cut_after=len(CHANNEL + "commentary ")),
    # The recipient cannot hold "=": a run of "to=to=…" is then read once, not
    # again from every "to=" in it.
    Opener(TO, opener_pattern(TO, run(chars(r'[^ \t\n\r<"=]'), at_least=1), literal(CHANNEL)),
           _call_extent(len(TO)), cut_after=len(TO + FUNCTIONS)),
)
# Hand-written: the stray header is a message header addressed to no tool, followed by
# the real header; its region is the header alone (framing), so the real header after it
# is read as any header is. Tried before the call opener, which its text also matches.
STRAY_HEADER = Opener(CHANNEL, opener_pattern(STRAY, literal(CHANNEL)), lambda: TagExtent(0, STRAY),
                      cut_after=_NEVER)
FRAMING = (
    STRAY_HEADER,
    Opener(CHANNEL, opener_pattern(CHANNEL, _FRAMED, literal(MESSAGE)), lambda: TagExtent(len(CHANNEL), MESSAGE),
           cut_after=_NEVER),
    Opener(BOUNDARY, opener_pattern(BOUNDARY, _NEXT_HEADER), lambda: Boundary(BOUNDARY, " " + TO), cut_after=_NEVER),
    Opener(RETURN, literal(RETURN), TokenExtent(RETURN)),
)

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ARGS = '{"base": "EUR", "quote": "JPY"}'
_MODEL = f"{CHANNEL}commentary to=functions.get_exchange_rate {CONSTRAIN}json{MESSAGE}{_ARGS}{CALL_END}"
_TEMPLATE = f"to=functions.get_exchange_rate{CHANNEL}commentary json{MESSAGE}{_ARGS}{CALL_END}"
_THINK = f"{ANALYSIS}The user wants a rate.{BOUNDARY}"

FORMAT = Format.declared(
    WIRE,
    name="harmony",
    description="<|channel|>commentary to=functions.NAME ...<|message|>{JSON}<|call|> (OpenAI gpt-oss harmony)",
    openers=(STRAY_HEADER, *CALL_OPENERS, *FRAMING[1:]),
    read_region=read_region,
    write_call=write_call,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(" " + _TEMPLATE, (CALL,), source="gpt-oss-120b template, right after the generation prompt"),
        Sample(_THINK + " " + _TEMPLATE, (CALL,), source="gpt-oss-120b template with thinking"),
        Sample(_MODEL, (CALL,), source="the model's own order, <|constrain|>"),
        Sample(_THINK + _MODEL, (CALL,), source="reasoning, then a call"),
        Sample(f"{CHANNEL}commentary{MESSAGE}Checking the rate.{BOUNDARY}{_MODEL}", (CALL,),
               source="a commentary preamble, then a call"),
        Sample(_MODEL + f'{START}{ASSISTANT}{CHANNEL}commentary to=functions.ping{MESSAGE}{{"n": [1, 2.5, null]}}{CALL_END}',
               (CALL, ParsedToolCall("ping", {"n": [1, 2.5, None]})), source="two call messages"),
        Sample(_MODEL[: -len(CALL_END)], (CALL,), source="<|call|> removed by the server as a stop token"),
        Sample(f"{_THINK} {_TEMPLATE}{START}{ASSISTANT} to=functions.ping{CHANNEL}commentary json{MESSAGE}{{}}",
               (CALL, ParsedToolCall("ping", {})), source="two calls, recipients in the role (no stop at <|call|>)"),
        Sample(f"{_MODEL}{START}{ASSISTANT}{CHANNEL}final{MESSAGE}The rate is 160.{RETURN}", (CALL,),
               source="a call, then the final answer (no stop at <|call|>)"),
        Sample(f"{_THINK}{CHANNEL}final{MESSAGE}The rate is 160.{RETURN}", (), source="reasoning, then a final answer"),
        Sample(f"{CHANNEL}commentary{MESSAGE}Checking the rate.{BOUNDARY} to=functions.get_exchange_rate"
               f"{CHANNEL}commentary{MESSAGE}{_ARGS}{END}", (CALL,),
               source="a call message ended by <|end|> (vLLM's test_commentary_with_recipient_excluded)"),
    ),
    near_misses=(
        NearMiss(f'{CHANNEL}commentary to=functions.f {CONSTRAIN}json{MESSAGE}{{"base": "EU', True, "cut inside the JSON"),
        NearMiss(f"{CHANNEL}commentary to=functions.get_exch", True, "cut inside the header"),
        NearMiss(f'{CHANNEL}commentary to=browser.search {CONSTRAIN}json{MESSAGE}{{"query": "x"}}{CALL_END}', True,
                 "a built-in tool's recipient"),
        NearMiss(f"{CHANNEL}commentary to=functions.f {CONSTRAIN}json{MESSAGE}[1, 2]{CALL_END}", True,
                 "arguments that are not an object"),
        NearMiss(f"{CHANNEL}analysis to=functions.f code{MESSAGE}print(1){CALL_END}", True, "a content type that is not json"),
        NearMiss(f"{CHANNEL}commentary to=functions.f json{MESSAGE}{{}}{RETURN}", True,
                 "a call ended with <|return|>, the end of a final answer"),
        NearMiss("gpt-oss names a tool with to=functions.NAME in the header.", False, "prose naming the recipient"),
        NearMiss(f"The header reads {CHANNEL}final and then the message.", False, "prose naming the channel token"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CALL_END} or {END}: the response template closes the call at the first one",
                  lambda arguments: any_string(arguments, lambda s: CALL_END in s or END in s),
                  where="response template"),
    ),
    corpus_labels=("other:harmony",),
    vllm_parser=("openai",),
    variants=("recipient before or after the channel", "<|constrain|>json or a bare json content type",
              "<|call|> removed as a stop token", "a call message ended by <|end|>"),
)
