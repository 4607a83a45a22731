"""OpenAI harmony (gpt-oss): ``to=functions.NAME`` in a message header, ``<|message|>{JSON}<|call|>``.

What a gpt-oss reply looks like after its generation prompt ``<|start|>assistant``:
messages, each a header, ``<|message|>``, a body and a terminator, the later
ones opened by ``<|start|>assistant``. Read:

- calls: a header naming the recipient ``to=functions.NAME`` either before
  the channel (``to=functions.NAME<|channel|>commentary json``, as the
  published gpt-oss-120b template writes history) or after it
  (``<|channel|>commentary to=functions.NAME <|constrain|>json``, as the
  model writes); the content type, when written, must be ``json``; the body
  one JSON object, ending at ``<|call|>`` or, when a server removed that
  stop token, at the end of the reply. One call per message, any number of
  messages;
- reasoning: the analysis message at the start of the reply,
  ``<|channel|>analysis<|message|>…`` up to ``<|end|><|start|>assistant``
  (the engine's reasoning pair; consecutive analysis messages at the start
  are each reasoning);
- content: the bodies of ``final`` and ``commentary`` (preamble) messages.
  Their headers, ``<|end|><|start|>assistant`` before a header, and
  ``<|return|>`` are the reply's framing: the reader drops them (the regions
  read as no call).

Refused: a recipient other than ``functions.*`` (gpt-oss's built-in
``browser`` and ``python`` tools), a call on the ``final`` channel, two
recipients, a content type other than JSON, a body that is not one JSON
object, a call that ends at ``<|end|>``.
Not handled (what the engine cannot express): an analysis message after a
preamble or a final message is not reasoning: it stays text, header
included, since the engine reads reasoning only at the start of the reply;
an analysis message that ends the reply keeps its ``<|end|>`` in the
reasoning text; a ``<|start|>assistant`` that follows ``<|call|>`` (a
second call in one reply, which a server stopping at ``<|call|>`` never
returns) stays text: the engine reads a marker inside another marker
(``<|start|>`` inside ``<|end|><|start|>assistant``) differently whole and
streamed, so only the boundary is a marker. Names holding whitespace, ``<``
or ``"`` cannot be written.

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
from templatestudio.wire.base import (
    Found, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
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
    reasoning=Reasoning("<|channel|>analysis<|message|>", "<|end|><|start|>assistant"),
    stop_tokens=("<|call|>", "<|return|>"),
    closer_optional=True,  # a server that stops on <|call|> removes it
    # Headers of final and commentary messages, the boundary before a header,
    # and <|return|>: the reply's framing, dropped by the reader.
    framing=("<|channel|>", "<|end|><|start|>assistant", "<|return|>"),
)

START, ASSISTANT, MESSAGE = "<|start|>", "assistant", "<|message|>"
CHANNEL, CALL_END = WIRE.call.open, WIRE.call.close
END, RETURN, CONSTRAIN = "<|end|>", WIRE.framing[-1], "<|constrain|>"
(TO,), FUNCTIONS = WIRE.call.also_opens, "functions."
ANALYSIS, BOUNDARY = WIRE.reasoning_pair
_NEVER = 1 << 30  # cut_after for framing: a reply cut inside it is prose
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
            "close": CALL_END,
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


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    if not any(opener is call_opener for call_opener in CALL_OPENERS):
        return []  # framing: a header, a message boundary or <|return|>; the text around it is the content
    name, body = _read_header(region)
    end = len(region) - len(CALL_END) if region.endswith(CALL_END) else len(region)  # stop token removed
    arguments = decode_whole(region, body, end, found)
    if not isinstance(arguments, dict):
        raise CallSyntaxError(f"the arguments of {name!r} must be a JSON object")
    return [CallSpan(ParsedToolCall(name, arguments), 0, len(region))]


# Hand-written: the declared name is (see WIRE), so the header is written here.
def write_call(call: ParsedToolCall) -> str:
    body = json.dumps(call.arguments, ensure_ascii=False)
    return f"{CHANNEL}commentary {TO}{FUNCTIONS}{call.name} {CONSTRAIN}json{MESSAGE}{body}{CALL_END}"


def _call_extent(skip: int):
    # JSON strings are stepped over: a string may hold "<|call|>" as text.
    return lambda: TagExtent(skip, CALL_END, "json", close_at_end=True)


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
FRAMING = (
    Opener(CHANNEL, opener_pattern(CHANNEL, _FRAMED, literal(MESSAGE)), lambda: TagExtent(len(CHANNEL), MESSAGE),
           cut_after=_NEVER),
    Opener(BOUNDARY, opener_pattern(BOUNDARY, _NEXT_HEADER), lambda: TagExtent(len(END + START), ASSISTANT),
           cut_after=_NEVER),
    Opener(RETURN, literal(RETURN), lambda: TagExtent(0, RETURN)),
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
    openers=CALL_OPENERS + FRAMING,
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
        Sample(f"{_THINK}{CHANNEL}final{MESSAGE}The rate is 160.{RETURN}", (), source="reasoning, then a final answer"),
    ),
    near_misses=(
        NearMiss(f'{CHANNEL}commentary to=functions.f {CONSTRAIN}json{MESSAGE}{{"base": "EU', True, "cut inside the JSON"),
        NearMiss(f"{CHANNEL}commentary to=functions.get_exch", True, "cut inside the header"),
        NearMiss(f'{CHANNEL}commentary to=browser.search {CONSTRAIN}json{MESSAGE}{{"query": "x"}}{CALL_END}', True,
                 "a built-in tool's recipient"),
        NearMiss(f"{CHANNEL}commentary to=functions.f {CONSTRAIN}json{MESSAGE}[1, 2]{CALL_END}", True,
                 "arguments that are not an object"),
        NearMiss(f"{CHANNEL}analysis to=functions.f code{MESSAGE}print(1){CALL_END}", True, "a content type that is not json"),
        NearMiss(f"{START}{ASSISTANT}{CHANNEL}commentary to=functions.f json{MESSAGE}{{}}{END}", True,
                 "a call ended with <|end|>, not <|call|>"),
        NearMiss("gpt-oss names a tool with to=functions.NAME in the header.", False, "prose naming the recipient"),
        NearMiss(f"The header reads {CHANNEL}final and then the message.", False, "prose naming the channel token"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CALL_END}: the response template closes the call at the first one",
                  lambda arguments: any_string(arguments, lambda s: CALL_END in s), where="response template"),
    ),
    corpus_labels=("other:harmony",),
    variants=("recipient before or after the channel", "<|constrain|>json or a bare json content type",
              "<|call|> removed as a stop token"),
)
