"""Apertus: ``<|tools_prefix|>[{"NAME": {…arguments…}}, …]<|tools_suffix|>``.

Model: the Swiss AI Apertus instruct models. Source: vLLM's
``tool_chat_template_apertus`` (its assistant turn writes every call of the
turn into one JSON list, each call an object whose one key is the function
name and whose value is the arguments object, ``", "`` between the calls).

Read: after ``<|tools_prefix|>`` (whitespace allowed), one JSON list of
such single-key objects, then ``<|tools_suffix|>``. Names and values come
back as written. Accepted variant: the suffix missing because the reply
ends right after the list (a server that stops on the suffix token hands
the client exactly that). Text after the suffix is content.

Refused (``UnparsedToolCall``): anything but a list after the prefix
(a bare object included), an empty list, an item that is not an object
with exactly one key, arguments that are not a JSON object (a JSON string
holding one too: the template writes the object), text between the list
and the suffix, a list cut off (read not strictly, the calls that closed
before the cut are kept and the rest is the cut call). Reasoning: the deliberation block
``<|inner_prefix|>…<|inner_suffix|>``.
"""

from __future__ import annotations

import json

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import CallSyntaxError, Found, Format, NearMiss, Opener, Sample, WireLimit, any_string
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import decode_at, skip_space
from templatestudio.resumable_match import literal
from templatestudio.wire.shape import Call, HandWritten, JsonList, JsonObject, Reasoning, WireShape

# The envelope, declared. The call itself is a JSON object keyed by the
# function's name, which the declaration language cannot say: the reader
# and the writer below are the module's own.
WIRE = WireShape(
    call=Call("<|tools_prefix|>", "<|tools_suffix|>"),
    name=HandWritten('the function name is the one key of each object in the list: [{"NAME": {…}}, …]'),
    arguments=JsonObject(listed=JsonList()),  # the calls' objects stand in one list (a cut keeps the closed ones)
    separator=", ",
    reasoning=Reasoning("<|inner_prefix|>", "<|inner_suffix|>"),
    stop_tokens=("<|assistant_end|>",),
    closer_optional=True,
)

PREFIX, SUFFIX = WIRE.call.open, WIRE.call.close


def _call(item: object, number: int) -> ParsedToolCall:
    if not isinstance(item, dict) or len(item) != 1:
        raise CallSyntaxError(f"call {number} is not an object with exactly one key, the function name")
    ((name, arguments),) = item.items()
    if not name:
        raise CallSyntaxError(f"call {number} has an empty function name")
    if not isinstance(arguments, dict):
        raise CallSyntaxError(f"the arguments of {name!r} must be a JSON object")
    return ParsedToolCall(name, arguments)


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    start = skip_space(region, len(PREFIX))
    if not region.startswith("[", start):
        raise CallSyntaxError(f"{PREFIX} must be followed by a JSON list of calls")
    payload, after = decode_at(region, start, found)
    after = skip_space(region, after)
    closed = region.startswith(SUFFIX, after) and after + len(SUFFIX) == len(region)
    if not closed and after != len(region):
        raise CallSyntaxError(f"expected {SUFFIX} after the list of calls, at offset {after}")
    if not payload:
        raise CallSyntaxError("an empty list of calls")
    return [CallSpan(_call(item, number), 0, len(region)) for number, item in enumerate(payload, 1)]


def write_call(call: ParsedToolCall) -> str:
    """One call as the template writes it: ``{"NAME": ARGUMENTS}`` in the list between the tokens."""
    return f"{PREFIX}[{json.dumps({call.name: call.arguments}, ensure_ascii=False)}]{SUFFIX}"


# The prefix is a special token: it alone opens a call region, which the
# reader then holds to the list. The region ends at the suffix outside
# strings, or at the reply's end (the suffix may be cut by a stop).
OPENER = Opener(PREFIX, literal(PREFIX), lambda: TagExtent(len(PREFIX), SUFFIX, "json", close_at_end=True))

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = '{"get_exchange_rate": {"base": "EUR", "quote": "JPY"}}'

FORMAT = Format.declared(
    WIRE,
    name="apertus",
    description='<|tools_prefix|>[{"NAME": {arguments}}, ...]<|tools_suffix|> (Swiss AI Apertus)',
    openers=(OPENER,),
    read_region=read_region,
    write_call=write_call,  # hand-written: the name is a JSON key, which the declaration cannot write
    response_template=None,
    no_response_template=(
        "the response-template language maps fixed keys to a call's name and arguments; "
        "Apertus keys each call by the function's own name"
    ),
    samples=(
        Sample(f"{PREFIX}[{_ONE}]{SUFFIX}", (CALL,), source="vLLM's tool_chat_template_apertus"),
        Sample(f'I will check. {PREFIX}[{_ONE}, {{"ping": {{}}}}]{SUFFIX}', (CALL, ParsedToolCall("ping", {})),
               source="text first, two calls in one list"),
        Sample(f'<|inner_prefix|>The rate is needed.<|inner_suffix|>{PREFIX} [\n{{"f": {{"x": [1, 2.5, null, true]}}}}\n]',
               (ParsedToolCall("f", {"x": [1, 2.5, None, True]}),), source="deliberation, spaces, the suffix cut by a stop"),
        Sample(f'{PREFIX}[{{"search": {{"q": "{SUFFIX}?"}}}}]{SUFFIX}\nDone.', (ParsedToolCall("search", {"q": f"{SUFFIX}?"}),),
               source="the suffix inside a string, text after the call"),
    ),
    near_misses=(
        NearMiss(f'{PREFIX}[{{"f": {{"x": 1', True, "cut inside the JSON"),
        NearMiss(f'{PREFIX}{{"f": {{}}}}{SUFFIX}', True, "a bare object, not a list"),
        NearMiss(f"{PREFIX}[]{SUFFIX}", True, "an empty list"),
        NearMiss(f'{PREFIX}[{{"f": {{}}, "g": {{}}}}]{SUFFIX}', True, "two names in one object"),
        NearMiss(f'{PREFIX}[{{"name": "f", "arguments": {{}}}}]{SUFFIX}', True, "hermes-style keys: two keys"),
        NearMiss(f'{PREFIX}[{{"f": "{{}}"}}]{SUFFIX}', True, "arguments as a string"),
        NearMiss(f'{PREFIX}[{{"f": {{}}}}] and more{SUFFIX}', True, "text before the suffix"),
        NearMiss(f"{PREFIX}", True, "cut right after the prefix"),
    ),
    wire_limits=(),
    corpus_labels=(),
    variants=("the suffix cut by a stop at the end of the reply",),
    vllm_parser=("apertus",),
)
