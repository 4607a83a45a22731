"""xLAM: a bare JSON list of calls, ``[{"name": NAME, "arguments": {…}}, …]``, wherever it stands.

Model: Salesforce's xLAM-2 (Llama 3.1 and Qwen 2.5 based). Sources: the
corpus templates ``tool_chat_template_xlam_llama`` and
``tool_chat_template_xlam_qwen`` (vLLM's), whose system prompt asks for
exactly that list.

A ``[`` opens a call when ``{`` follows with ``"arguments"`` as its first
key, or ``"name": "…",`` and then ``"arguments"`` (``formats.bare_json``);
Llama 3.2's pythonic ``[name(`` is told apart by its first character after
``[``. The whole list is one region, so the objects inside are never read
as Phi-4-mini's or Llama 3's calls, and those formats' calls raise here.

Read: every object in the list, exactly ``name`` and ``arguments`` (either
order), the arguments a JSON object; prose around the list stays content.
Refused: a list that opened as calls and is not JSON, an item that is not
such an object (any other key, ``parameters``, data), arguments that are
not a JSON object (the templates double-encode string arguments into a JSON
string; the model never writes that). A list of data (``[{"name": "Ada",
"age": 36}]``) opens no call and stays text. No reasoning channel.

The response template reads a list only when it is the whole reply: text
after the list makes it fail.
"""

from __future__ import annotations

from templatestudio.calls import CallSpan, ParsedToolCall, region_spans
from templatestudio.wire.base import Found, SPACES, Format, NearMiss, Opener, Sample
from templatestudio.wire.bare_json import ARGUMENTS_OPENING
from templatestudio.wire.value_extent import value_extent
from templatestudio.wire.jsonbody import calls_from, decode_whole
from templatestudio.resumable_match import literal, sequence
from templatestudio.wire.shape import Call, JsonArguments, JsonList, NameKey, WireShape

# The writer's shape. The opener and reader are the module's own: a bare
# list opens at "[", and only a first object with the arguments key keeps
# it apart from Llama 3's and Phi-4-mini's bare objects (``wire.bare_json``).
WIRE = WireShape(
    call=Call("", marker="["),
    name=NameKey("name"),
    arguments=JsonArguments("arguments", listed=JsonList()),
)

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": ["<|start_header_id|>assistant<|end_header_id|>\n\n", "<|im_start|>assistant\n"],
    "fields": {
        "tool_calls": {
            "open_pattern": r"\A\s*(?=\[\s*\{)",
            "close_pattern": r"(?<=\])\s*\Z",
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"content": "text"},
    },
}


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    payload = decode_whole(region, 0, len(region), found)
    return region_spans(calls_from(payload, numbered=True), len(region))


OPENER = Opener("[", sequence(literal("["), SPACES, ARGUMENTS_OPENING), value_extent(0), cut_after=4)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}'

FORMAT = Format.declared(
    WIRE,
    name="xlam",
    description='a bare JSON list of {"name", "arguments"} calls (xLAM)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"[{_ONE}]", (CALL,), source="tool_chat_template_xlam_llama, tool_chat_template_xlam_qwen"),
        Sample(f'[{_ONE}, {{"name": "ping", "arguments": {{}}}}]', (CALL, ParsedToolCall("ping", {})), source="parallel calls"),
        Sample(f'Sure.\n[ {{"arguments": {{"q": "[x]"}}, "name": "search"}} ]\nDone.',
               (ParsedToolCall("search", {"q": "[x]"}),), source="prose around, keys reversed, spaces inside"),
    ),
    near_misses=(
        NearMiss('[{"name": "f", "arguments": {}}, {"name": "g", "parameters": {}}]', True, "an item with parameters"),
        NearMiss('[{"name": "f", "arguments": {}}, 3]', True, "an item that is not an object"),
        NearMiss('[{"name": "f", "arguments": "{}"}]', True, "arguments as a JSON string"),
        NearMiss('[{"name": "f", "arguments": {"x": 1}}', True, "the list never closes"),
        NearMiss('[{"name": "f", "arguments": {}}}]', True, "not JSON"),
        NearMiss('The guests: [{"name": "Ada", "age": 36}].', False, "a list of data"),
        NearMiss("Use [1, 2] or [{}] here.", False, "brackets in prose"),
    ),
    wire_limits=(),
    corpus_labels=("other:xlam",),
    variants=("keys in either order", "prose around the list"),
    vllm_parser=("xlam",),
)
