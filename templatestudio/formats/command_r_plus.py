"""Command R+: ``Action:`` then a fenced json list of ``{"tool_name": NAME, "parameters": {…}}``.

Source: the corpus template ``CohereForAI-c4ai-command-r-plus-tool_use``
(Cohere Command R+, the ``tool_use`` template of its tokenizer config),
which writes every call of a turn as::

    Action:
    ```json
    [
        {
            "tool_name": "get_exchange_rate",
            "parameters": {"base": "EUR", "quote": "JPY"}
        }
    ]```

Read: one list per block, any whitespace between ``Action:``, the fence
and the list, several calls in one list, text before the block (Command R+
may write a plan first). Each item has exactly ``tool_name`` and
``parameters`` (a JSON object). The pseudo-tool ``directly-answer`` that
the template tells the model to call when no tool is needed comes back as
a call like any other: the caller decides what it means.

Refused (``UnparsedToolCall``): a single object instead of a list, an
empty list, ``name``/``arguments`` keys, parameters that are not an object
(the template double-encodes string arguments), text between the list and
the closing fence, a block that never closes.

The fence is fenced-json's marker too; the two stay apart because this
opener is ``Action:`` and its region holds the whole fence, and a
fenced-json call has ``"name"`` where this one has ``"tool_name"``.
Not handled: Command R+'s grounded-answer lines (``Relevant Documents:``,
``Grounded answer:``) are plain text. No reasoning block.
"""

from __future__ import annotations

import functools

from templatestudio.calls import CallSpan, ParsedToolCall, region_spans
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.jsonbody import calls_from, decode_whole, skip_space
from templatestudio.wire.past_head_extent import PastHeadTagExtent
from templatestudio.resumable_match import either, literal
from templatestudio.wire.shape import Call, JsonArguments, JsonList, NameKey, WireShape

# The writer's shape. The opener, extent and reader are the module's own:
# the closing fence is also how the opening fence begins, so the region's
# end is searched for only past the opening fence, wherever whitespace put it.
WIRE = WireShape(
    call=Call("Action:", "```", head="\n```json\n"),
    name=NameKey("tool_name"),
    arguments=JsonArguments("parameters", listed=JsonList(indent=4)),
    stop_tokens=("<|END_OF_TURN_TOKEN|>",),
)

ACTION, CLOSE = WIRE.call.open, WIRE.call.close
FENCE = WIRE.call.head.strip()

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "fields": {
        "tool_calls": {
            "open_pattern": r"Action:\s*```json\s*(?=\[)",
            "close_pattern": r"\s*```",
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}},
        },
        "content": {"close": "<|END_OF_TURN_TOKEN|>", "content": "text"},
    },
}


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    fence = skip_space(region, len(ACTION))
    start = skip_space(region, fence + len(FENCE))
    if region.startswith("{", start):
        raise CallSyntaxError("a single object after Action: — Command R+ writes a JSON list of actions")
    payload = decode_whole(region, start, len(region) - len(CLOSE), found)
    if not payload:
        raise CallSyntaxError("an empty list of actions")
    return region_spans(calls_from(payload, name_key="tool_name", argument_keys=("parameters",)), len(region))


OPENER = Opener(
    ACTION,
    opener_pattern(ACTION, SPACES, literal(FENCE), SPACES, either(literal("["), literal("{"))),
    functools.partial(PastHeadTagExtent, len(ACTION), FENCE, CLOSE),
    # "Action:" ending a reply may be prose; anything after it that still
    # fits the opening (whitespace, a backtick) makes it a call cut short.
    cut_after=len(ACTION) + 1,
)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = ('Action:\n```json\n[\n    {\n        "tool_name": "get_exchange_rate",\n        "parameters": {\n'
        '            "base": "EUR",\n            "quote": "JPY"\n        }\n    }\n]```')

FORMAT = Format.declared(
    WIRE,
    name="command-r-plus",
    description='Action: then a fenced json list of {"tool_name", "parameters"} (Cohere Command R+)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample("\n" + _ONE, (CALL,), source="Command R+'s tool_use template"),
        Sample('I will look up both rates.\nAction: ```json\n[{"tool_name": "a", "parameters": {}}, '
               '{"tool_name": "b", "parameters": {"x": [1, "```"]}}]\n```',
               (ParsedToolCall("a", {}), ParsedToolCall("b", {"x": [1, "```"]})),
               source="a plan, then two actions; a fence inside a string"),
        Sample('Action:\n```json\n[{"tool_name": "directly-answer", "parameters": {}}]\n```',
               (ParsedToolCall("directly-answer", {}),), source="the template's no-tool action"),
    ),
    near_misses=(
        NearMiss('Action:\n```json\n[{"tool_name": "a", "parameters": {}}]', True, "the fence never closes"),
        NearMiss("Action:\n```js", True, "cut inside the opening fence"),
        NearMiss('Action:\n```json\n{"tool_name": "a", "parameters": {}}\n```', True, "one object, not a list"),
        NearMiss('Action:\n```json\n[{"name": "a", "arguments": {}}]\n```', True, "name/arguments keys"),
        NearMiss('Action:\n```json\n[{"tool_name": "a", "parameters": "{}"}]\n```', True, "parameters as a string"),
        NearMiss("Action:\n```json\n[]\n```", True, "an empty list"),
        NearMiss("Action: buy the tickets today.", False, "prose with an Action: label"),
        NearMiss("The next step is the Action:", False, "a reply ending with the word"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CLOSE}: the response template closes the block at the first one",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s), where="response template"),
    ),
    corpus_labels=("other:command-r",),
    variants=("text before the block", "Action: and the fence on one line", "several actions in one list"),
)
