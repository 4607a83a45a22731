"""Apriel: ``<tool_calls>[{"name": NAME, "arguments": {…}}, …]</tool_calls>`` (ServiceNow Apriel 1.5, 1.6).

Sources: the corpus templates ``Apriel-1.6-15b-Thinker-fixed`` and
``ServiceNow-AI-Apriel-1.5-15b-Thinker``. Every call of a turn sits in one
JSON list between the tags; a history turn adds ``"id": ID`` to each call,
and the id comes back on the call's span.

Read: one list per block, any number of blocks anywhere in the reply, keys
in any order, ``name`` and ``arguments`` and an optional string ``id``.
Arguments are a JSON object, or, as Apriel 1.5's template writes them (it
prints a dict with Jinja's ``string`` filter, which is Python's repr), a
Python dict literal: ``{'base': 'EUR', 'live': True, 'since': None}``.
The model learnt its calls from that rendering, so refusing it would
refuse Apriel 1.5's own history. The Python literal is read by the
shared literal reader ``wire.python_literals`` (strings with Python escapes, ASCII
numbers, ``True``/``False``/``None``, lists and string-keyed dicts), never
evaluated; everything around it stays JSON. The response template reads
JSON arguments only: Apriel 1.5's Python literal is not JSON to it.

Refused (``UnparsedToolCall``): a single object instead of a list, an
empty list, arguments written as a string (the 1.6 template double-encodes
string arguments; the model writes the object), a key given twice, any
other key, text between the list and ``</tool_calls>``, a block that never
closes.

Reasoning: Apriel thinks in plain text, from ``Here are my reasoning
steps:`` (1.6's generation prompt writes it; 1.5's model writes it itself)
up to ``[BEGIN FINAL RESPONSE]``. Not handled: the ``[END FINAL RESPONSE]``
that 1.5 writes at the end of its answer stays in the content, and 1.5's
``<thinking>`` tags (its template writes them only when a variable no
caller sets is on) are text.
"""

from __future__ import annotations

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import call_from, decode_at, skip_space
from templatestudio.wire.python_literals import PythonLiterals
from templatestudio.resumable_match import either, literal
from templatestudio.wire.shape import Call, JsonArguments, JsonList, NameKey, Reasoning, WireShape

# The writer's shape. The reader and its opener are the module's own:
# Apriel 1.5's template writes the arguments as a Python dict literal
# (read by wire.python_literals, as pythonic's values are), whose strings may hold a
# lone '"', so the extent tracks no strings and a reader of JSON alone
# would refuse them.
WIRE = WireShape(
    call=Call("<tool_calls>", "</tool_calls>"),
    name=NameKey("name"),
    arguments=JsonArguments(
        "arguments", extras={"id": lambda value: isinstance(value, str) and bool(value)}, id_key="id",
        listed=JsonList(),
    ),
    reasoning=Reasoning("Here are my reasoning steps:", "[BEGIN FINAL RESPONSE]"),
    stop_tokens=("<|end|>",),
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close
REASONING = WIRE.reasoning_pair
_ID = WIRE.arguments.extras

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": ["<|begin_assistant|>\n", "<|assistant|>\n"],
    "fields": {
        "thinking": {"open": REASONING[0], "close": REASONING[1], "content": "text"},
        "tool_calls": {
            "open": OPEN,
            "close": CLOSE,
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"close": "<|end|>", "content": "text"},
    },
}


def _arguments_at(region: str, index: int, parser: PythonLiterals) -> tuple[object, int]:
    """The arguments value at index: JSON, else (an object only) a Python dict literal."""
    try:
        return decode_at(region, index)
    except CallSyntaxError as json_error:
        if not region.startswith("{", index):
            raise
        try:
            return parser.value(index, 0)
        except CallSyntaxError:
            raise json_error from None
        except RecursionError:
            raise CallSyntaxError("values nested too deeply") from None


def _read_object(region: str, index: int, parser: PythonLiterals) -> tuple[dict, int]:
    """One call object starting at index: JSON keys, JSON values (arguments may be a Python dict)."""
    payload: dict = {}
    index = skip_space(region, index + 1)  # past "{"
    if region.startswith("}", index):
        return payload, index + 1
    while True:
        if not region.startswith('"', index):
            raise CallSyntaxError(f"expected a quoted key at offset {index}")
        key, index = decode_at(region, index)
        index = skip_space(region, index)
        if not region.startswith(":", index):
            raise CallSyntaxError(f"expected : after the key {key!r}")
        if key in payload:
            raise CallSyntaxError(f"the key {key!r} is given twice")
        start = skip_space(region, index + 1)
        payload[key], index = _arguments_at(region, start, parser) if key == "arguments" else decode_at(region, start)
        index = skip_space(region, index)
        if region.startswith("}", index):
            return payload, index + 1
        if not region.startswith(",", index):
            raise CallSyntaxError(f"expected , or }} at offset {index}")
        index = skip_space(region, index + 1)


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    index = skip_space(region, len(OPEN))
    if region.startswith("{", index):
        raise CallSyntaxError(f"a single object inside {OPEN}: Apriel writes a JSON list of calls")
    end = len(region) - len(CLOSE)  # the extent ends just past the closer
    parser = PythonLiterals(region)
    spans: list[CallSpan] = []
    index = skip_space(region, index + 1)  # past "["
    while not region.startswith("]", index):
        if not region.startswith("{", index):
            raise CallSyntaxError(f"expected a call object at offset {index}")
        payload, index = _read_object(region, index, parser)
        call, extras = call_from(payload, extras=_ID)
        spans.append(CallSpan(call, 0, len(region), extras.get("id")))
        index = skip_space(region, index)
        if region.startswith(",", index):
            index = skip_space(region, index + 1)
        elif not region.startswith("]", index):
            raise CallSyntaxError(f"expected , or ] after a call at offset {index}")
    if not spans:
        raise CallSyntaxError("an empty list of calls")
    if skip_space(region, index + 1) != end:
        raise CallSyntaxError(f"expected {CLOSE} after the list, at offset {index + 1}")
    return spans


# A bracket after the tag opens a call; "{" opens one too, so that a lone
# object is refused rather than shown as text.
OPENER = Opener(
    OPEN,
    opener_pattern(OPEN, SPACES, either(literal("["), literal("{"))),
    # No string tracking: Apriel 1.5's Python strings may hold a lone '"'.
    lambda: TagExtent(len(OPEN), CLOSE),
)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = f'{OPEN}[{{"name": "get_exchange_rate", "arguments": {{"base": "EUR", "quote": "JPY"}}}}]{CLOSE}'

FORMAT = Format.declared(
    WIRE,
    name="apriel",
    description='a JSON list of {"name", "arguments"} inside <tool_calls> tags (ServiceNow Apriel 1.5, 1.6)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample("\n" + _ONE, (CALL,), source="Apriel 1.6's template"),
        Sample(f"\n{OPEN}[{{\"name\": \"get_exchange_rate\", \"arguments\": {{'base': 'EUR', 'quote': 'JPY'}}}}]{CLOSE}",
               (CALL,), source="Apriel 1.5's template: a Python dict literal"),
        Sample(f"{REASONING[0]}\nThe user wants a rate.\n{REASONING[1]}\n{_ONE}", (CALL,), source="Apriel with reasoning"),
        Sample(f'{OPEN}[{{"name": "a", "arguments": {{}}, "id": "call00001"}}, '
               f'{{"id": "call00002", "arguments": {{"x": [1, 2]}}, "name": "b"}}]{CLOSE}',
               (ParsedToolCall("a", {}), ParsedToolCall("b", {"x": [1, 2]})), ids=("call00001", "call00002"),
               source="a history turn: two calls with ids"),
        Sample(f"{OPEN}[{{\"name\": \"s\", \"arguments\": {{'q': 'it\\'s \"x\"', 'live': True, 'since': None, 'n': [1, 2.5]}}}}]{CLOSE}",
               (ParsedToolCall("s", {"q": "it's \"x\"", "live": True, "since": None, "n": [1, 2.5]}),),
               source="Python literals: quotes, True, None"),
        Sample("Let me check.\n" + _ONE, (CALL,), source="text before the block"),
    ),
    near_misses=(
        NearMiss(f'{OPEN}[{{"name": "a", "arguments": {{"x": 1}}}}]', True, "never closed"),
        NearMiss(f'{OPEN}[{{"name": "a", "argu', True, "cut inside the list"),
        NearMiss(f"Checking. {OPEN}", True, "cut right after the opener"),
        NearMiss(f'{OPEN}{{"name": "a", "arguments": {{}}}}{CLOSE}', True, "one object, not a list"),
        NearMiss(f'{OPEN}[{{"name": "a", "arguments": "{{}}"}}]{CLOSE}', True, "arguments as a string"),
        NearMiss(f'{OPEN}[{{"name": "a", "arguments": {{}}, "name": "b"}}]{CLOSE}', True, "a key given twice"),
        NearMiss(f"{OPEN}[]{CLOSE}", True, "an empty list"),
        NearMiss(f"{OPEN}[{{\"name\": \"a\", \"arguments\": {{'x': true}}}}]{CLOSE}", True, "JSON true in a Python dict"),
        NearMiss(f"Apriel wraps its calls in {OPEN} tags.", False, "prose naming the tag"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CLOSE}: the first one ends the block",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s)),
        # Apriel 1.6's prompt opens the reasoning; a reply read after it ends the
        # reasoning at the first closer, wherever it stands.
        WireLimit(f"a string holding {REASONING[1]}: after a prompt that opened the reasoning, a reply with no "
                  "reasoning before the call ends the reasoning inside the call",
                  lambda arguments: any_string(arguments, lambda s: REASONING[1] in s)),
    ),
    corpus_labels=("other:tool_calls-json",),
    vllm_parser=("jamba", "hunyuan_a13b"),
    variants=("Python dict literal arguments (Apriel 1.5's template)", "ids on history calls", "keys in any order"),
)
