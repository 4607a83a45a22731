"""GigaChat 3 and 3.1: ``{"name": NAME, "arguments": {…}}`` after GigaChat's call marker.

Sources: the corpus templates ``GigaChat3-10B-A1.8B`` and
``GigaChat3.1-10B-A1.8B`` (Sber's GigaChat 3 / 3.1 10B-A1.8B). The two
versions write the same JSON object behind different markers:

- GigaChat 3: the call is a turn of its own, after the assistant's text
  and its end-of-message token:
  ``…text<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{…}``;
- GigaChat 3.1: inside the assistant turn, ``…text<|function_call|>{…}``.

One format with three openers, since one corpus label covers both
templates and a reader of either version must read the other's calls
rather than call them foreign: ``<|message_sep|>`` opens a call only when
``function call<|role_sep|>`` and an object follow (otherwise it is the
end of a plain message and stays text; a reply that ends right after it
is a plain message, one that ends past it while the call turn may still
follow was cut in a call); ``function call<|role_sep|>`` opens
one by itself (a reply that starts with the call turn); and
``<|function_call|>``. Read: exactly ``name`` and ``arguments`` (a JSON
object), whitespace between the markers and the object. Refused: a JSON
list, arguments as a string (the templates write an object either way),
any other key, a marker with no object after it. The
``<|message_sep|>`` that ends a call turn is part of the call (a reply cut
inside it still gives the call), never content.

Not handled: the templates render only the first call of a turn, so a
turn holds one call as far as the model has seen; two markers in a row
are read as two calls. No reasoning block, no ids.
"""

from __future__ import annotations

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.value_extent import value_extent
from templatestudio.wire.optional_closer import ThenOptionalCloser, only_closer_after
from templatestudio.wire.jsonbody import call_from, decode_at, skip_space
from templatestudio.resumable_match import either, literal
from templatestudio.wire.shape import Call, JsonArguments, NameKey, WireShape

# The writer's shape and the literals a call opens with. The reader is the
# module's own: a call opens three ways (GigaChat 3's call turn, with or
# without the message separator before it, and 3.1's token), and the
# separator that ends the call turn after the JSON belongs to the call.
WIRE = WireShape(
    call=Call("<|function_call|>", also_opens=("<|message_sep|>", "function call<|role_sep|>")),
    name=NameKey("name"),
    arguments=JsonArguments("arguments"),
    separator="",
    stop_tokens=("<|message_sep|>",),
)

FUNCTION_CALL = WIRE.call.open
MESSAGE_SEP, CALL_TURN = WIRE.call.also_opens

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "assistant<|role_sep|>\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"(?:<\|message_sep\|>\s*)?function call<\|role_sep\|>\s*(?=\{)|<\|function_call\|>\s*(?=\{)",
            # The end of the message, of the reply, or the next call's marker.
            "close_pattern": r"\s*(?:<\|message_sep\|>|\Z|(?=<\|function_call\|>|function call<\|role_sep\|>))",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"content": "text"},
    },
}


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    index = skip_space(region, len(opener.literal))
    if opener.literal == MESSAGE_SEP:
        index = skip_space(region, index + len(CALL_TURN))  # the opener matched: the call turn's role is there
    if region.startswith("[", index):
        raise CallSyntaxError(f"a JSON list after {opener.literal}: GigaChat writes one object per call")
    payload, stop = decode_at(region, index, found)
    if not only_closer_after(region, stop, MESSAGE_SEP):
        raise CallSyntaxError(f"unexpected text after the JSON value at offset {stop}")
    call, _ = call_from(payload)
    return [CallSpan(call, 0, len(region))]


_OBJECT = either(literal("{"), literal("["))


def _extent(skip: int):
    # The <|message_sep|> that ends GigaChat 3's call turn belongs to the call.
    make = value_extent(skip)
    return lambda: ThenOptionalCloser(make(), MESSAGE_SEP)

OPENERS = (
    Opener(FUNCTION_CALL, opener_pattern(FUNCTION_CALL, SPACES, _OBJECT), _extent(len(FUNCTION_CALL))),
    # GigaChat 3: the end of the assistant's message, then the call turn.
    # Ending right after the separator is a plain message (the server's stop
    # token); a reply that goes on past it, while what follows can still
    # become the call turn, was cut in a call (the template writes nothing
    # after a message's end but the next message's role; the assistant's next
    # turn with a role of its own would part from "function call" at once).
    Opener(MESSAGE_SEP, opener_pattern(MESSAGE_SEP, SPACES, literal(CALL_TURN), SPACES, _OBJECT),
           _extent(len(MESSAGE_SEP)), cut_after=len(MESSAGE_SEP) + 1),
    Opener(CALL_TURN, opener_pattern(CALL_TURN, SPACES, _OBJECT), _extent(len(CALL_TURN))),
)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_JSON = '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}'

FORMAT = Format.declared(
    WIRE,
    name="gigachat",
    description="GigaChat's function call<|role_sep|> turn (v3) or <|function_call|> (v3.1), then a JSON call",
    openers=OPENERS,
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"{MESSAGE_SEP}\n\n{CALL_TURN}\n{_JSON}", (CALL,), source="GigaChat 3's template"),
        Sample(f"Let me check.{MESSAGE_SEP}\n\n{CALL_TURN}\n{_JSON}{MESSAGE_SEP}", (CALL,),
               source="GigaChat 3: text, then the call turn and its end"),
        Sample(f"{CALL_TURN}\n{_JSON}", (CALL,), source="a reply that starts with the call turn"),
        Sample(f"{FUNCTION_CALL}{_JSON}", (CALL,), source="GigaChat 3.1's template"),
        Sample(f'Checking both.{FUNCTION_CALL}{{"name": "a", "arguments": {{}}}}{FUNCTION_CALL}'
               f'{{"arguments": {{"x": [1, 2]}}, "name": "b"}}',
               (ParsedToolCall("a", {}), ParsedToolCall("b", {"x": [1, 2]})), source="two markers in a row"),
    ),
    near_misses=(
        NearMiss(f"{MESSAGE_SEP}\n\n{CALL_TURN}\n", True, "cut right after the call turn's role"),
        NearMiss(f'{FUNCTION_CALL}{{"name": "a", "arguments": {{"x": 1}}', True, "cut inside the JSON"),
        NearMiss(f"{FUNCTION_CALL}", True, "cut right after the marker"),
        NearMiss(f'{FUNCTION_CALL}{{"name": "a", "arguments": "{{}}"}}', True, "arguments as a string"),
        NearMiss(f'{FUNCTION_CALL}[{{"name": "a", "arguments": {{}}}}]', True, "a JSON list"),
        NearMiss(f"The answer is 42.{MESSAGE_SEP}", False, "a plain message and its end"),
        NearMiss(f"Checking.{MESSAGE_SEP}\n\nfunction ca", True, "cut inside the call turn's role"),
        NearMiss(f"Checking.{MESSAGE_SEP}\n", True, "cut after the separator, where only the call turn may follow"),
        NearMiss(f"Done.{MESSAGE_SEP}\n\nuser<|role_sep|>\nThanks", False, "the next turn is not a call"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {MESSAGE_SEP}, {FUNCTION_CALL} or {CALL_TURN}: the response template "
                  "closes the call there", lambda arguments: any_string(
                      arguments, lambda s: any(marker in s for marker in (MESSAGE_SEP, FUNCTION_CALL, CALL_TURN))),
                  where="response template"),
    ),
    corpus_labels=("other:gigachat",),
    variants=("GigaChat 3 call turn", "GigaChat 3.1 <|function_call|>", "a call turn without the separator before it"),
    vllm_parser=("gigachat3",),
)
