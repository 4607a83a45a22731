"""Phi-4-mini: a bare JSON object ``{"name": NAME, "arguments": {…}}``, wherever it stands.

Model: Microsoft's Phi-4-mini-instruct. Source: the corpus template
``tool_chat_template_phi4_mini`` (vLLM's), which writes each past call as
that object, calls separated by ``,`` and a newline.

Which objects open a call is decided with Llama 3's JSON format
(``wire.bare_json``): ``"arguments"`` as the first key, or ``"name"``
and then ``"arguments"``, is this format's; ``"parameters"`` is Llama 3's,
and this reader raises on it as a call in another format. Llama 3's reader
reads this format's objects too (as vLLM and SGLang do): a Phi-4-mini
machine reads them as its own (its opener is tried first), and a template
probe that both read back is this format's, the narrower one
(``probe_read_back``).

Read: exactly the keys ``name`` and ``arguments`` in either order, the
arguments a JSON object; several calls; the prose around a call stays
content, and so does the ``,`` the template writes between two calls. An
object with ``"arguments"`` first and no ``name`` is data and stays text.
Refused: any other key, arguments that are not a JSON object (a JSON string
included), an object that opened as a call and is not JSON.

The template writes dict arguments with Jinja's ``{{ … }}``, which gives
Python's repr (``{'base': 'EUR'}``), not JSON; given JSON-string arguments
it writes them as they are, which is JSON. Decided: the reader reads JSON
only, the way the model is prompted to answer, and refuses the repr with a
reason saying so; the probe then finds that the template needs
JSON-string arguments (``TemplateProbe.shape``), and the loop renders past
calls that way.

Not handled: the template's system prompt asks the model for
``functools[{…}, …]``, a list behind a marker. That is firefunction's
wire shape, read by the format that claims that marker, so a Phi-4-mini
reply written that way raises here as another format's call. The response
template reads a call only where it opens the reply or follows a ``,``,
with ``name`` first and written without escapes, and ends it at the first
``}`` followed by ``, {"name"``: inside the arguments that is a list in
which an object is followed by one whose first key is ``name`` (a declared
limit); inside a string the quote is ``\"``, so strings are carried. No
reasoning channel.
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import Found, WS, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit
from templatestudio.wire.bare_json import ARGUMENTS_OPENING
from templatestudio.wire.value_extent import value_extent
from templatestudio.wire.jsonbody import call_from, decode_whole
from templatestudio.wire.shape import Call, JsonArguments, NameKey, WireShape

# The writer's shape. The opener and reader are the module's own: a bare
# object opens at "{" only with Phi-4-mini's keys (``wire.bare_json``), and
# an object with no name is data, not a call.
WIRE = WireShape(
    call=Call("", marker="{"),
    name=NameKey("name"),
    arguments=JsonArguments("arguments"),
    separator=", ",
)

_PYTHON_ARGUMENTS = re.compile(rf'"arguments"{WS}*:{WS}*[{{\[]{WS}*\'')

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open_pattern": r'(?:\A|,)\s*\{\s*"name":\s*"(?P<name>[^"\\]+)",\s*"arguments":\s*',
            "close_pattern": r'\}\s*(?=,\s*\{\s*"name"|\Z)',
            "content": "json",
            "repeats": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"content": "text"},
    },
}


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan] | None:
    try:
        payload = decode_whole(region, 0, len(region), found)
    except CallSyntaxError as error:
        if _PYTHON_ARGUMENTS.search(region):
            raise CallSyntaxError(
                "the arguments are a Python repr, not JSON (Phi-4-mini's template writes dict arguments "
                "that way; give it the arguments as a JSON string)"
            ) from None
        raise error
    if "name" not in payload:
        return None  # {"arguments": ...} with no name: data, not a call
    call, _ = call_from(payload)
    return [CallSpan(call, 0, len(region))]


def _object_then_name_first(value: object) -> bool:
    """Whether a list anywhere in value holds an object followed by an object whose first key is "name".

    Only there does JSON put ``}`` then ``, {"name"`` outside a string.
    """
    if isinstance(value, dict):
        return any(_object_then_name_first(item) for item in value.values())
    if isinstance(value, list):
        return any(
            isinstance(left, dict) and isinstance(right, dict) and next(iter(right), None) == "name"
            for left, right in zip(value, value[1:])
        ) or any(_object_then_name_first(item) for item in value)
    return False


OPENER = Opener("{", ARGUMENTS_OPENING, value_extent(0), cut_after=3)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}'

FORMAT = Format.declared(
    WIRE,
    name="phi4-mini",
    description='bare JSON {"name", "arguments"} objects (Phi-4-mini)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(_ONE, (CALL,), source="tool_chat_template_phi4_mini, JSON-string arguments"),
        Sample('{"name": "a", "arguments": {}},\n{"name": "b", "arguments": {"x": [1, {"y": null}]}}',
               (ParsedToolCall("a", {}), ParsedToolCall("b", {"x": [1, {"y": None}]})), source="two calls, as the template joins them"),
        Sample('{"arguments": {"base": "EUR", "quote": "JPY"}, "name": "get_exchange_rate"}', (CALL,), source="keys reversed"),
        Sample("Let me check. " + _ONE + " One moment.", (CALL,), source="a call inside prose"),
        Sample('{"name": "na\\"me", "arguments": {"q": "a, b"}}', (ParsedToolCall('na"me', {"q": "a, b"}),),
               source="an escaped quote in the name"),
    ),
    near_misses=(
        NearMiss('{"name": "get_exchange_rate", "arguments": {\'base\': \'EUR\'}}', True,
                 "the template's Python repr of dict arguments"),
        NearMiss('{"name": "f", "arguments": {}, "id": "c1"}', True, "an extra key"),
        NearMiss('{"name": "f", "arguments": "{}"}', True, "arguments as a JSON string"),
        NearMiss('{"name": "f", "arguments": {"x": 1', True, "cut inside the JSON"),
        NearMiss('The reply was {"arguments": ["a", "b"]}.', False, "data with an arguments key and no name"),
        NearMiss('A person: {"name": "Ada", "age": 36}.', False, "JSON data with a name"),
    ),
    wire_limits=(
        WireLimit('a list holding an object, then an object whose first key is "name": the response template '
                  "closes the call after the first", _object_then_name_first, where="response template"),
    ),
    corpus_labels=("other:bare-json-arguments",),
    variants=("keys in either order", "calls joined by a comma, as the template writes them"),
    vllm_parser=("phi4_mini_json",),
)
