"""Olmo 3: ``<function_calls>name(key=value, …)`` one call per line ``</function_calls>``.

Model: AI2's Olmo 3 (Instruct and Think). The calls of one turn stand in
one ``<function_calls>`` block, each a Python-style call with keyword
arguments, one per line. Values are Python literals or JSON ones, as the
model writes either: strings in single or double quotes, numbers,
``True``/``False``/``None`` and ``true``/``false``/``null``, lists and
string-keyed dicts. A double-quoted string is read as JSON first (JSON's
escapes, surrogate pairs included) and as a Python literal when it is not
JSON. Names and keys come back exactly as written (never through ``ast``:
``wire.python_literals``). Calls may also be separated by a comma (with
whitespace) instead of a line break. Text around the block is content.
Reasoning: ``<think>…</think>`` (Olmo 3 Think).

Opens a call: ``<function_calls>`` then, after whitespace, ``name(``.
The tag followed by anything else is prose (``<function_calls>`` is plain
text to Olmo's tokenizer); a reply that ends right after it is a cut call.

Refused (``UnparsedToolCall``): a positional argument, an argument given
twice, a value that is no literal (an expression, a name), two calls with
nothing between them, text after the last call, a block never closed.
Not handled: a string holding ``</function_calls>`` (the block ends at the
first one); calls written without the block (bare lines of calls are
prose here); dotted names (``<function_calls>a.b(`` is prose: a name ends
before a dot, so prose like ``<function_calls> tags.`` opens nothing);
triple-quoted strings.
"""

from __future__ import annotations

import json
import re

from templatestudio.calls import ParsedToolCall, region_spans
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import decode_at
from templatestudio.wire.python_literals import CONNECTORS, PythonLiterals
from templatestudio.wire.shape import Call, HandWritten, Reasoning, Section, WireShape
from templatestudio.resumable_match import chars, literal, run

# The envelope, declared: the block's literals, the line between calls and
# the reasoning block. Python call syntax is beyond the declaration
# language: the reader and writer below are the module's own.
WIRE = WireShape(
    section=Section("<function_calls>", "</function_calls>"),
    call=Call(),
    name=HandWritten("a Python identifier, read as written, then its keyword argument list"),
    arguments=HandWritten("keyword arguments whose values are Python or JSON literals"),
    separator="\n",
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("<|im_end|>",),
)

OPEN, CLOSE = WIRE.section.open, WIRE.section.close
_JSON_WORDS = {"true": True, "false": False, "null": None}
# A Python identifier as written (never NFKC-normalised), no dots: "tags." in prose opens nothing.
_NAME = re.compile(rf"(?:[^\W0-9]|[{CONNECTORS}])[\w{CONNECTORS}]*")


class _Calls(PythonLiterals):
    """The block's grammar: ``name(key=value, …)`` calls, one per line, over Python and JSON literals."""

    def value(self, index: int, depth: int) -> tuple[object, int]:
        text = self.text
        if text.startswith('"', index):
            try:
                return decode_at(text, index)  # JSON's escapes first
            except CallSyntaxError:
                pass  # not JSON: a Python string literal
        word = _NAME.match(text, index)
        if word is not None and word.group(0) in _JSON_WORDS:
            return _JSON_WORDS[word.group(0)], word.end()
        return super().value(index, depth)

    def calls(self, index: int, end: int) -> list[ParsedToolCall]:
        text = self.text
        found: list[ParsedToolCall] = []
        while True:
            call, index = self.call(index)
            found.append(call)
            after = self.space(index)
            apart = "\n" in text[index:after]
            if text.startswith(",", after):
                after, apart = self.space(after + 1), True
            if after == end:
                return found
            if not apart:
                raise CallSyntaxError(f"expected a line break or {CLOSE} after a call, at offset {after}")
            index = after

    def call(self, index: int) -> tuple[ParsedToolCall, int]:
        text = self.text
        name = _NAME.match(text, index)
        if name is None or not text.startswith("(", name.end()):
            raise CallSyntaxError(f"expected name( at offset {index}")
        index = self.space(name.end() + 1)
        arguments: dict[str, object] = {}
        while not text.startswith(")", index):
            key = _NAME.match(text, index)
            if key is None or not text.startswith("=", self.space(key.end())):
                raise CallSyntaxError(f"expected a keyword argument at offset {index}")
            if key.group(0) in arguments:
                raise CallSyntaxError(f"argument {key.group(0)!r} is given twice")
            arguments[key.group(0)], index = self.value(self.space(self.space(key.end()) + 1), 0)
            index = self.space(index)
            if text.startswith(",", index):
                index = self.space(index + 1)
            elif not text.startswith(")", index):
                raise CallSyntaxError(f"expected , or ) at offset {index}")
        return ParsedToolCall(name.group(0), arguments), index + 1


def read_region(region: str, opener: Opener, found: Found | None):
    if not region.endswith(CLOSE):
        raise CallSyntaxError(f"the {OPEN} block was never closed with {CLOSE}")
    end = len(region) - len(CLOSE)
    reader = _Calls(region)
    start = reader.space(len(OPEN))
    try:
        calls = reader.calls(start, end)
    except RecursionError:
        raise CallSyntaxError("values nested too deeply") from None
    return region_spans(calls, len(region))


def write_call(call: ParsedToolCall) -> str:
    """One call in its block, the values as JSON literals (which the reader reads as such)."""
    arguments = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in call.arguments.items())
    return f"{OPEN}{call.name}({arguments}){CLOSE}"


_NAME_START = chars(rf"(?:[^\W0-9]|[{CONNECTORS}])")
OPENER = Opener(OPEN, opener_pattern(OPEN, SPACES, _NAME_START, run(chars(rf"[\w{CONNECTORS}]")), literal("(")),
                lambda: TagExtent(len(OPEN), CLOSE))

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})


def _not_json_number(value: object) -> bool:
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_not_json_number(item) for item in value.values())
    if isinstance(value, list):
        return any(_not_json_number(item) for item in value)
    return False


FORMAT = Format.declared(
    WIRE,
    name="olmo3",
    description="<function_calls> with name(key=value) calls one per line (AI2 Olmo 3)",
    openers=(OPENER,),
    read_region=read_region,
    write_call=write_call,  # hand-written: the declaration cannot write Python call syntax
    response_template=None,
    no_response_template=(
        "the response-template language cannot read Python call syntax: keyword arguments, "
        "single-quoted strings and True/None are not JSON"
    ),
    samples=(
        Sample(f'{OPEN}get_exchange_rate(base="EUR", quote="JPY"){CLOSE}', (CALL,), source="Olmo 3, JSON values"),
        Sample(f"{OPEN}get_weather(city='San Francisco', metric='celsius')\nping(){CLOSE}",
               (ParsedToolCall("get_weather", {"city": "San Francisco", "metric": "celsius"}), ParsedToolCall("ping", {})),
               source="two calls, one per line"),
        Sample(f"<think>A user to register.</think>\nSure.{OPEN}register_user(name='John Doe', age=37, "
               f"address={{'city': 'SF'}}, role=null, passed=true, old=False, aliases=['J'], x=None){CLOSE}",
               (ParsedToolCall("register_user", {"name": "John Doe", "age": 37, "address": {"city": "SF"}, "role": None,
                                                 "passed": True, "old": False, "aliases": ["J"], "x": None}),),
               source="reasoning, text, Python and JSON literals mixed"),
        Sample(f'{OPEN}\nf(q="caf\\u00e9 \\ud83d\\ude00", s=\'Martha\\\'s\')\n{CLOSE}\nDone.',
               (ParsedToolCall("f", {"q": "café 😀", "s": "Martha's"}),), source="JSON and Python escapes, text after"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}get_weather(city='LA')", True, "never closed"),
        NearMiss(f"{OPEN}get_weather('LA'){CLOSE}", True, "a positional argument"),
        NearMiss(f"{OPEN}f(a=1, a=2){CLOSE}", True, "an argument given twice"),
        NearMiss(f"{OPEN}f(a=x){CLOSE}", True, "a name, not a literal"),
        NearMiss(f"{OPEN}f()g(){CLOSE}", True, "two calls with nothing between"),
        NearMiss(f"{OPEN}f() then stop{CLOSE}", True, "text after the call"),
        NearMiss(f"{OPEN}", True, "cut right after the tag"),
        NearMiss(f"Olmo puts its calls in {OPEN} tags.", False, "prose naming the tag"),
        NearMiss("Call get_weather(city='LA') first.", False, "a call in prose, no block"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CLOSE}: the block ends at the first one",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s)),
        WireLimit("a keyword that is not a plain identifier (call syntax has no way to write it)",
                  lambda arguments: any(not _NAME.fullmatch(key) for key in arguments)),
        WireLimit("a float that is infinite or not a number: JSON writes a name, not a literal", _not_json_number),
    ),
    corpus_labels=(),
    variants=("JSON literals (true/false/null, JSON escapes) beside Python ones", "calls separated by a comma"),
    vllm_parser=("olmo3",),
)
