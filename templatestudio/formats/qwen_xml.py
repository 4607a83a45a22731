"""Qwen3-Coder XML: ``<tool_call><function=NAME><parameter=KEY>value</parameter>…</function></tool_call>``.

Values are the text between the tags with one leading and one trailing
newline removed, exactly as Qwen3-Coder's template writes them; they are
text, typed later against the tool's schema (``string_arguments``). A value
ends at the first ``</parameter>``, a call at the first ``</tool_call>``;
a repeated parameter makes the call unreadable. The wrapper-less
``<function=NAME>…</function>`` (Qwen3.5 replies that drop it) is read too;
such a call ends at the first ``</function>``, so in that shape (never
written by the writer or the templates) a value cannot hold it. A value
that starts or ends with a newline comes back whole: the templates write a
newline of their own on each side, and exactly one is taken.
Reasoning: ``<think>…</think>`` at the start of the reply.
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, WS, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.resumable_match import chars, either, literal, run

OPEN, CLOSE = "<tool_call>", "</tool_call>"
FUNCTION, END_FUNCTION = "<function=", "</function>"
PARAMETER, END_PARAMETER = "<parameter=", "</parameter>"
_SPACE = re.compile(f"{WS}*")
_HEAD = re.compile(rf"{WS}*<function=([^<>\n]+)>")
_PARAM = re.compile(rf"{WS}*<parameter=([^<>\n]+)>")

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>[^<>\n]+)>",
            "close": CLOSE,
            "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<parameter=(?P<key>[^<>\n]+)>\n?(?P<value>.*?)\n?</parameter>"},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}


def _strip_one_newline(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    return value[:-1] if value.endswith("\n") else value


def read_function(region: str, start: int, end: int) -> tuple[ParsedToolCall, int]:
    """The <function=…>…</function> call in region[start:end] and the offset past it."""
    head = _HEAD.match(region, start, end)
    if head is None:
        raise CallSyntaxError("no <function=NAME> where the call should start")
    arguments: dict[str, str] = {}
    position = head.end()
    while (parameter := _PARAM.match(region, position, end)) is not None:
        key = parameter.group(1)
        value_end = region.find(END_PARAMETER, parameter.end(), end)
        if value_end == -1:
            raise CallSyntaxError(f"the value of {key!r} has no {END_PARAMETER}")
        if key in arguments:
            raise CallSyntaxError(f"parameter {key!r} is given twice")
        arguments[key] = _strip_one_newline(region[parameter.end() : value_end])
        position = value_end + len(END_PARAMETER)
    position = _SPACE.match(region, position, end).end()
    if not region.startswith(END_FUNCTION, position):
        raise CallSyntaxError(f"expected {END_FUNCTION} or another parameter at offset {position}")
    return ParsedToolCall(head.group(1), arguments), position + len(END_FUNCTION)


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    if opener.literal == FUNCTION:
        call, after = read_function(region, 0, len(region))
    else:
        call, after = read_function(region, len(OPEN), len(region) - len(CLOSE))
        after = _SPACE.match(region, after).end()
        if after != len(region) - len(CLOSE):
            raise CallSyntaxError(f"unexpected text before {CLOSE} at offset {after}")
        after = len(region)
    if after != len(region):
        raise CallSyntaxError(f"unexpected text after the call at offset {after}")
    return [CallSpan(call, 0, len(region))]


def write_call(call: ParsedToolCall) -> str:
    parameters = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in call.arguments.items())
    return f"{OPEN}\n<function={call.name}>\n{parameters}</function>\n{CLOSE}"


_NAME = run(chars(r"[^<>\n]"), at_least=1)
OPENERS = (
    Opener(OPEN, opener_pattern(OPEN, SPACES, literal(FUNCTION)), lambda: TagExtent(len(OPEN), CLOSE)),
    # Without its wrapper the tag opens a call only when a parameter or the
    # closing tag follows: prose that names "<function=get_weather>" stays
    # prose, and a reply cut there is prose too (cut_after: never).
    Opener(FUNCTION, opener_pattern(FUNCTION, chars(r"[A-Za-z_]"), run(chars(r"[\w.\-]")), literal(">"), SPACES,
                                    either(literal(PARAMETER), literal(END_FUNCTION))),
           lambda: TagExtent(len(FUNCTION), END_FUNCTION), cut_after=1 << 30),
)

_ONE = ("<tool_call>\n<function=get_exchange_rate>\n<parameter=base>\nEUR\n</parameter>\n"
        "<parameter=quote>\nJPY\n</parameter>\n</function>\n</tool_call>")
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format(
    name="qwen-xml",
    description="<tool_call><function=NAME><parameter=KEY>text (Qwen3-Coder, Qwen3.5)",
    openers=OPENERS,
    read_region=read_region,
    write_call=write_call,
    closers=(CLOSE, END_FUNCTION),
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    reasoning=("<think>", "</think>"),
    samples=(
        Sample(_ONE, (CALL,), source="Qwen3-Coder's template"),
        Sample("<think>\n\n</think>\n\n" + _ONE, (CALL,)),
        Sample(_ONE + "\n" + _ONE.replace("EUR", "USD"), (CALL, ParsedToolCall("get_exchange_rate", {"base": "USD", "quote": "JPY"}))),
        Sample("<tool_call>\n<function=write_note>\n<parameter=text>\nfirst line\nsecond line\n</parameter>\n</function>\n</tool_call>",
               (ParsedToolCall("write_note", {"text": "first line\nsecond line"}),)),
        Sample("<function=ping>\n</function>", (ParsedToolCall("ping", {}),), source="no wrapper"),
    ),
    near_misses=(
        NearMiss("<tool_call>\n<func", True, "cut inside the opening"),
        NearMiss("<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n", True, "never closed"),
        NearMiss("<tool_call>\n<function=a>\n<parameter=x>1</parameter><parameter=x>2</parameter></function></tool_call>",
                 True, "a parameter given twice"),
        NearMiss("Write <function=NAME> tags? No.", False, "prose naming the tag"),
        NearMiss("Call <function=get_weather> first.", False, "prose naming a call"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {END_PARAMETER}, which ends the value",
                  lambda arguments: any_string(arguments, lambda s: END_PARAMETER in s)),
        WireLimit(f"a string holding {CLOSE}, which ends the call",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s)),
        WireLimit("a key that is empty or holds <, > or a newline: the tag cannot hold it",
                  lambda arguments: any(not key or any(c in key for c in "<>\n") for key in arguments)),
        WireLimit("a value that is not a string: the wire writes text, typed against the schema afterwards",
                  lambda arguments: any(not isinstance(value, str) for value in arguments.values())),
    ),
    corpus_labels=("qwen-xml",),
    string_arguments=True,
    vllm_parser="qwen3_xml",
)
