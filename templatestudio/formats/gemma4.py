"""Gemma 4: ``<|tool_call>call:NAME{key:value,…}<tool_call|>``, one call per block.

The grammar Gemma 4's template writes: keys bare (or between ``<|"|>``),
strings between ``<|"|>`` delimiters with nothing escaped, bare numbers
(ASCII digits only: ``1٢٣`` is refused, never read as 123), ``true``,
``false``, ``null`` (also ``None``/``none``, which the template writes for a
Python None), lists and nested objects, no whitespace inside. A bare key
is written verbatim (the template's ``format_argument(…, escape_keys=False)``
prints the dict key as it is), so it is read up to its ``:`` and may hold
spaces and any character but ``: , { } [ ] <`` (``Basic LLM Chain:{…}``).
Whitespace after ``{``, ``[``, ``:`` and ``,`` and before ``}`` and ``]``
is separator, not value: models write ``[1, 2]`` and ``{a:1, b:2}``
(SGLang's and Ollama's reports). Names are
taken as written, ``-`` and ``.`` included (the template writes
``call:get-weather{…}`` verbatim; transformers' published response
template reads only ``\\w+`` names). Accepted variants: whitespace after
``<|tool_call>``, and the bare ``<|tool_call>:NAME{…}`` opener with the
word ``call`` missing (reported against vLLM's Gemma 4 parser as real
output). Prose that names the token stays text; once ``call:`` follows it, a call
that cannot be read raises. Reasoning: ``<|channel>thought\\n…<channel|>``.

Not handled: a bare key that starts with whitespace or holds ``: , { } [
] <`` (the template writes it verbatim, and no reader can tell where it
ends); a newline written before ``<channel|>`` stays in the reasoning
(the reasoning pair has one closer, and the newline is the model's).
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
# The value grammar is shared with FunctionGemma; MAX_NESTING stays importable from here.
from templatestudio.wire.keyed_values import MAX_NESTING, KeyedValues, any_key  # noqa: F401
from templatestudio.resumable_match import either, literal
from templatestudio.wire.shape import Call, NameBetween, OwnValues, Reasoning, WireShape

# The writer's shape. The opener and reader are the module's own: the
# reader also takes the bare ":NAME" head and whitespace before it, and the
# extent steps over strings between the format's own quote.
WIRE = WireShape(
    call=Call("<|tool_call>", "<tool_call|>"),
    name=NameBetween("call:", ""),
    arguments=OwnValues('<|"|>'),
    separator="",
    reasoning=Reasoning("<|channel>thought\n", "<channel|>"),
    stop_tokens=("<turn|>",),
)

OPEN, CLOSE, QUOTE = WIRE.call.open, WIRE.call.close, WIRE.arguments.quote
_HEAD = re.compile(r"[ \t\r\n]*(?:call)?:([^\W0-9][\w.\-]*)")
# A bare key as the template writes it: the dict key verbatim, up to its ":".
_BARE_KEY = re.compile(r"[^:,{}\[\]<\s][^:,{}\[\]<]*")
_SPACE = re.compile(r"[ \t\r\n]*")


def _unreadable_key(key: str) -> bool:
    """Whether a key written bare cannot be read back (see _BARE_KEY)."""
    return _BARE_KEY.fullmatch(key) is None


# Hand-written: the declaration's value grammar (``wire.keyed_values``, shared
# with FunctionGemma) reads keys as words and allows no whitespace; Gemma 4's
# template prints keys verbatim, and models put spaces after commas.
class _Values(KeyedValues):
    """Gemma 4's values: bare keys up to their ":", whitespace around the punctuation."""

    def value(self, index: int, depth: int) -> tuple[object, int]:
        value, after = super().value(_SPACE.match(self.text, index).end(), depth)
        return value, _SPACE.match(self.text, after).end()

    def object(self, index: int, depth: int) -> tuple[dict, int]:
        text, result = self.text, {}
        index = _SPACE.match(text, index + 1).end()
        if text.startswith("}", index):
            return result, index + 1
        while True:
            if text.startswith(self.quote, index):
                key, index = self.string(index)
            else:
                found = _BARE_KEY.match(text, index)
                if found is None:
                    raise CallSyntaxError(f"no key at offset {index}")
                key, index = found.group(0), found.end()
            if key in result:
                raise CallSyntaxError(f"key {key!r} is given twice")
            if not text.startswith(":", index):
                raise CallSyntaxError(f"expected : after key {key!r} at offset {index}")
            result[key], index = self.value(index + 1, depth)
            if text.startswith(",", index):
                index = _SPACE.match(text, index + 1).end()
            elif text.startswith("}", index):
                return result, index + 1
            else:
                raise CallSyntaxError(f"expected , or }} at offset {index}")

    def list(self, index: int, depth: int) -> tuple[list, int]:
        if self.text.startswith("]", _SPACE.match(self.text, index + 1).end()):
            return [], _SPACE.match(self.text, index + 1).end() + 1
        return super().list(index, depth)

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": ["<|turn>model\n", "<tool_response|>"],
    "fields": {
        "thinking": {"open": "<|channel>thought\n", "close": "<channel|>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"<\|tool_call>call:(?P<name>\w+)",
            "close": CLOSE,
            "repeats": True,
            "content": "json",
            "content_args": {"unquoted_keys": True, "string_delims": [[QUOTE, QUOTE]]},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"},
    },
}


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    head = _HEAD.match(region, len(OPEN))
    if head is None or not region.startswith("{", head.end()):
        raise CallSyntaxError("expected call:NAME{ after <|tool_call>")
    arguments, after = _Values(region, QUOTE).object(head.end(), 1)
    if not region.startswith(CLOSE, after) or after + len(CLOSE) != len(region):
        raise CallSyntaxError(f"expected {CLOSE} at offset {after}")
    return [CallSpan(ParsedToolCall(head.group(1), arguments), 0, len(region))]


# "call:" (or the bare ":" variant) after the token opens a call; prose that
# names the token ("the <|tool_call> token") does not, and a reply cut in
# the middle of "call:" is a call cut short.
OPENER = Opener(OPEN, opener_pattern(OPEN, SPACES, either(literal("call:"), literal(":"))),
                lambda: TagExtent(len(OPEN), CLOSE, QUOTE))
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = '<|tool_call>call:get_exchange_rate{base:<|"|>EUR<|"|>,quote:<|"|>JPY<|"|>}<tool_call|>'


FORMAT = Format.declared(
    WIRE,
    name="gemma4",
    description='<|tool_call>call:NAME{key:value}<tool_call|> with <|"|> strings (Gemma 4)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(_ONE, (CALL,), source="Gemma 4's template"),
        Sample("<|channel>thought\nThe user wants a rate.<channel|>" + _ONE, (CALL,)),
        Sample('<|tool_call>call:s{limit:10,live:true,o:{days:7},p:[<|"|>a<|"|>,1.5],since:null}<tool_call|>',
               (ParsedToolCall("s", {"limit": 10, "live": True, "o": {"days": 7}, "p": ["a", 1.5], "since": None}),)),
        Sample("<|tool_call>call:get-weather{}<tool_call|><|tool_call>call:weather.get{}<tool_call|>",
               (ParsedToolCall("get-weather", {}), ParsedToolCall("weather.get", {})), source="names as the template writes them"),
        Sample('<|tool_call>:get_weather{city:<|"|>LA<|"|>}<tool_call|>', (ParsedToolCall("get_weather", {"city": "LA"}),),
               source="bare opener reported against vLLM"),
        Sample('<|tool_call>call:plan{Daily Stand-up:{owner:<|"|>Ana<|"|>},größe (cm):2}<tool_call|>',
               (ParsedToolCall("plan", {"Daily Stand-up": {"owner": "Ana"}, "größe (cm)": 2}),),
               source="keys written verbatim by the template, spaces included"),
        Sample('<|tool_call>call:s{a:[1, 2, {k: <|"|>v<|"|>}], b:true }<tool_call|>',
               (ParsedToolCall("s", {"a": [1, 2, {"k": "v"}], "b": True}),), source="spaces after commas and colons"),
    ),
    near_misses=(
        NearMiss("Checking. <|tool_call>cal", True, "cut inside the opening"),
        NearMiss("<|tool_call>call:a{n:1٢٣}<tool_call|>", True, "digits that are not ASCII"),
        NearMiss("<|tool_call>call:a{n:" + "1" * 5000 + "}<tool_call|>", True, "an integer past the digit limit"),
        NearMiss('<|tool_call>call:a{x:<|"|>open}', True, "a string never closed"),
        NearMiss("<|tool_call>call:a{k:1,,j:2}<tool_call|>", True, "an empty key between two commas"),
        NearMiss("<|tool_call>call:a{a:b:1}<tool_call|>", True, "a bare key holding a colon"),
        NearMiss("<|tool_call>call:a{n:1 2}<tool_call|>", True, "a space inside a number"),
        NearMiss("<|tool_call>call:a{k:1,k:2}<tool_call|>", True, "a key given twice"),
        NearMiss("Gemma opens each call with the <|tool_call> token.", False, "prose naming the token"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {QUOTE}, the delimiter nothing escapes",
                  lambda arguments: any_string(arguments, lambda s: QUOTE in s)),
        WireLimit("a key written bare that starts with whitespace or holds : , { } [ ] <",
                  lambda arguments: any_key(arguments, _unreadable_key)),
        WireLimit(f"a string holding {CLOSE}: the response template closes at the first one",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s), where="response template"),
    ),
    corpus_labels=("gemma4",),
    variants=("whitespace after <|tool_call>", "<|tool_call>:NAME without 'call' (vLLM report)"),
    vllm_parser=("gemma4",),
)

