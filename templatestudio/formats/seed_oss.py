"""Seed-OSS: ``<seed:tool_call><function=NAME><parameter=k>v</parameter></function></seed:tool_call>``.

Read as ByteDance's published Seed-OSS template writes it: one function per
``<seed:tool_call>`` block, any number of blocks in a reply, whitespace
between the tags passed over. A value is everything between
``<parameter=k>`` and the first ``</parameter>``, kept exactly: unlike
Qwen3-Coder's template this one writes no newline around a value, so none
is removed. The template writes a string value as it is and any other value
through Jinja's ``string`` filter (Python's spelling: ``True``, ``None``,
``['a', 'b']``), so values are text, typed later against the tool's schema
(``string_arguments``); an array or object in Python's spelling is not JSON,
so ``coerce`` keeps it as text and ``dispatch`` reports the type. Reasoning: ``<seed:think>…</seed:think>`` at the
start of the reply (its ``<seed:cot_budget_reflect>`` notes stay inside it).

``<function=`` is also Qwen3-Coder's bare opener; inside a Seed block
nothing else is looked for, and each format's reader raises on the other's
calls because each block opens with its own literal.

Refused: a block without ``<function=NAME>``, two functions in one block, a
parameter given twice, text between the tags, a block never closed. Not
handled: values holding ``</parameter>``, keys or names holding ``<``,
``>`` or a newline (the wire cannot carry them; see ``wire_limits``).
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, WS, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.resumable_match import literal

OPEN, CLOSE = "<seed:tool_call>", "</seed:tool_call>"
FUNCTION, END_FUNCTION = "<function=", "</function>"
PARAMETER, END_PARAMETER = "<parameter=", "</parameter>"
_SPACE = re.compile(f"{WS}*")
_HEAD = re.compile(r"<function=([^<>\n]+)>")
_PARAM = re.compile(r"<parameter=([^<>\n]+)>")

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<seed:bos>assistant\n",
    "fields": {
        "thinking": {"open": "<seed:think>", "close": "</seed:think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"<seed:tool_call>[ \t\n\r]*<function=(?P<name>[^<>\n]+)>",
            "close_pattern": r"</function>[ \t\n\r]*</seed:tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<parameter=(?P<key>[^<>\n]+)>(?P<value>.*?)</parameter>"},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<seed:eos>", "content": "text"},
    },
}


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    end = len(region) - len(CLOSE)  # the extent ends every region just past the closer
    position = _SPACE.match(region, len(OPEN), end).end()
    head = _HEAD.match(region, position, end)
    if head is None:
        raise CallSyntaxError(f"no <function=NAME> at offset {position}")
    arguments: dict[str, str] = {}
    position = _SPACE.match(region, head.end(), end).end()
    while (parameter := _PARAM.match(region, position, end)) is not None:
        key = parameter.group(1)
        value_end = region.find(END_PARAMETER, parameter.end(), end)
        if value_end == -1:
            raise CallSyntaxError(f"the value of {key!r} has no {END_PARAMETER}")
        if key in arguments:
            raise CallSyntaxError(f"parameter {key!r} is given twice")
        arguments[key] = region[parameter.end() : value_end]
        position = _SPACE.match(region, value_end + len(END_PARAMETER), end).end()
    if not region.startswith(END_FUNCTION, position):
        raise CallSyntaxError(f"expected {END_FUNCTION} or another parameter at offset {position}")
    position = _SPACE.match(region, position + len(END_FUNCTION), end).end()
    if position != end:
        raise CallSyntaxError(f"expected {CLOSE} at offset {position}: one function per block")
    return [CallSpan(ParsedToolCall(head.group(1), arguments), 0, len(region))]


def write_call(call: ParsedToolCall) -> str:
    # Non-strings as the template's "string" filter spells them: Python's str().
    parameters = "".join(f"{PARAMETER}{key}>{value}{END_PARAMETER}\n" for key, value in call.arguments.items())
    return f"{OPEN}\n{FUNCTION}{call.name}>\n{parameters}{END_FUNCTION}\n{CLOSE}"


OPENER = Opener(OPEN, opener_pattern(OPEN, SPACES, literal(FUNCTION)), lambda: TagExtent(len(OPEN), CLOSE))

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = (f"{OPEN}\n<function=get_exchange_rate>\n<parameter=base>EUR</parameter>\n"
        f"<parameter=quote>JPY</parameter>\n</function>\n{CLOSE}")

FORMAT = Format(
    name="seed-oss",
    description="<seed:tool_call><function=NAME><parameter=KEY>text (ByteDance Seed-OSS)",
    openers=(OPENER,),
    read_region=read_region,
    write_call=write_call,
    closers=(CLOSE, END_FUNCTION),
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    reasoning=("<seed:think>", "</seed:think>"),
    samples=(
        Sample(_ONE, (CALL,), source="Seed-OSS's template"),
        Sample("<seed:think>The user wants a rate.<seed:cot_budget_reflect>I have used 12 tokens."
               "</seed:cot_budget_reflect></seed:think>\n" + _ONE, (CALL,), source="with reasoning and a budget note"),
        Sample(_ONE + f"\n{OPEN}\n<function=ping>\n</function>\n{CLOSE}", (CALL, ParsedToolCall("ping", {})),
               source="two blocks"),
        Sample(f"{OPEN}\n<function=write_note>\n<parameter=text>\nfirst line\nsecond line</parameter>\n"
               f"<parameter=pinned>True</parameter>\n</function>\n{CLOSE}",
               (ParsedToolCall("write_note", {"text": "\nfirst line\nsecond line", "pinned": "True"}),),
               source="values kept exactly, a bool in Python's spelling"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}\n<func", True, "cut inside the opening"),
        NearMiss(f"{OPEN}\n<function=a>\n<parameter=x>1</parameter>\n", True, "never closed"),
        NearMiss(f"{OPEN}<function=a><parameter=x>1</parameter><parameter=x>2</parameter></function>{CLOSE}", True,
                 "a parameter given twice"),
        NearMiss(f"{OPEN}<function=a></function><function=b></function>{CLOSE}", True, "two functions in one block"),
        NearMiss(f"{OPEN}<function=a>note</function>{CLOSE}", True, "text between the tags"),
        NearMiss(f"Seed-OSS opens each call with {OPEN} and a function tag.", False, "prose naming the tag"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {END_PARAMETER}, which ends the value",
                  lambda arguments: any_string(arguments, lambda s: END_PARAMETER in s)),
        WireLimit(f"a string holding {CLOSE}, which ends the call",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s)),
        WireLimit("a key that is empty or holds <, > or a newline: the tag cannot hold it",
                  lambda arguments: any(not key or any(c in key for c in "<>\n") for key in arguments)),
        WireLimit("a value that is not a string: the wire writes Python's spelling as text, typed against the schema "
                  "afterwards", lambda arguments: any(not isinstance(value, str) for value in arguments.values())),
    ),
    corpus_labels=("other:seed-oss",),
    string_arguments=True,
    vllm_parser="seed_oss",
)
