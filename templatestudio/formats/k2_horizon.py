"""K2 Horizon: ``<ifm|tool_calls>`` holding ``<ifm|tool_call>NAME<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v…``.

Read as K2 Horizon writes its IFM calls: one
``<ifm|tool_calls>…</ifm|tool_calls>`` section per turn holding one or more
``<ifm|tool_call>…</ifm|tool_call>`` calls, whitespace between them. The
chat template picks one of three call bodies (its ``tool_call_format``);
all three are read, a call at a time:

- ``xml`` (the default): the name, then
  ``<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v</ifm|arg_value>`` pairs;
- ``xml_typed``: the same with ``<ifm|arg_type>TYPE</ifm|arg_type>``
  between a key and its value; the type is passed over, since values are
  typed against the tool's schema in any case;
- ``json``: one JSON object ``{"name": NAME, "arguments": {...}}``.

Whitespace between the tags is passed over; a name, key or value comes back
exactly as written between its tags. XML values are text (a string as it
is, any other value as its JSON), typed later against the tool's schema
(``string_arguments``); JSON values come back as JSON. Where an XML value
ends is HY v4's rule under these tags (``formats.hy_v4``, whose section
reader this is): an ``</ifm|arg_value>`` ends it only when the next key, or
the call's closer and then the next call or the section's end, follow it.
Reasoning: ``<ifm|think>…</ifm|think>``, or ``<ifm|think_fast>`` /
``<ifm|think_faster>`` for the lower efforts, each closed by its own tag;
the prompt opens the block, so the reply starts inside it.

The section opens a call only when ``<ifm|tool_call>`` and then a JSON
object, or a name and a key or the call's closer, follow it; anything else
after it is text (vLLM's parser also leaves such a section as content).
Refused: a name holding whitespace, ``<`` or ``>``, a key without its
value, a key given twice, an empty or malformed type tag, a value whose
``</ifm|arg_value>`` is missing, a JSON body that is not one call object
with ``name`` and ``arguments``, anything else in the section, a section
never closed. Not handled: an XML value holding the boundary above (it
ends the value, ``wire_limits``), a key holding ``</ifm|arg_key>``, and a
JSON string holding ``<ifm|arg_value>`` or ``</ifm|tool_calls>`` (the
section's extent reads the tags, not the JSON).
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.formats.hy_v4 import SectionReader
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import Call, KeyValuePairs, NameBetween, Reasoning, Section, WireShape

# The writer's shape (the default xml body, one tag a line); the opener and reader are HY's
# section reader under the IFM tags, told of the type tag and the JSON body.
WIRE = WireShape(
    section=Section("<ifm|tool_calls>", "</ifm|tool_calls>", head="\n", tail="\n"),
    call=Call("<ifm|tool_call>", "</ifm|tool_call>"),
    name=NameBetween("", "", head="\n"),
    arguments=KeyValuePairs("<ifm|arg_key>", "</ifm|arg_key>", "<ifm|arg_value>", "</ifm|arg_value>"),
    separator="\n",
    reasoning=Reasoning("<ifm|think>", "</ifm|think>", also=(("<ifm|think_fast>", "</ifm|think_fast>"),
                                                             ("<ifm|think_faster>", "</ifm|think_faster>"))),
    stop_tokens=("<|ifm|im_end|>",),
)

TYPE, END_TYPE = "<ifm|arg_type>", "</ifm|arg_type>"
READER = SectionReader(WIRE, "", typed=(TYPE, END_TYPE), json_body=True)
OPEN, CLOSE, CALL_OPEN, CALL_CLOSE = READER.open, READER.close, READER.call_open, READER.call_close
KEY, END_KEY, VALUE, END_VALUE = READER.key, READER.end_key, READER.value, READER.end_value


def _pair(key: str, value: str, kind: str = "") -> str:
    typed = f"{TYPE}{kind}{END_TYPE}" if kind else ""
    return f"{KEY}{key}{END_KEY}{typed}{VALUE}{value}{END_VALUE}"


_LOOKUP = f"{CALL_OPEN}lookup{_pair('query', '123')}{_pair('limit', '3')}{CALL_CLOSE}"
_TAIL = f"{END_VALUE}\n{CALL_CLOSE}\n{CLOSE}"  # what the writer puts after a last value

FORMAT = Format.declared(
    WIRE,
    name="k2-horizon",
    description="<ifm|tool_calls><ifm|tool_call>NAME<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v (K2 Horizon)",
    openers=(READER.opener,),
    read_region=READER.read_region,
    response_template=None,
    no_response_template=("no K2 Horizon chat template is at hand to anchor the assistant turn and check a "
                          "response template against; the reader stands alone"),
    samples=(
        Sample(f"{OPEN}\n{CALL_OPEN}read\n{KEY}filePath{END_KEY}\n{VALUE}/c{END_VALUE}\n{CALL_CLOSE}\n{CLOSE}",
               (ParsedToolCall("read", {"filePath": "/c"}),), source="the xml body, one tag a line"),
        Sample(f"<ifm|think>Two lookups.</ifm|think>Before {OPEN}{_LOOKUP}\n{CALL_OPEN}ping{CALL_CLOSE}{CLOSE} after.",
               (ParsedToolCall("lookup", {"query": "123", "limit": "3"}), ParsedToolCall("ping", {})),
               source="reasoning, text, two xml calls on one line (vLLM's k2_horizon examples)"),
        Sample(f"{OPEN}{CALL_OPEN}lookup{_pair('query', 'weather', 'string')}{_pair('limit', '2', 'integer')}"
               f"{CALL_CLOSE}{CLOSE}", (ParsedToolCall("lookup", {"query": "weather", "limit": "2"}),),
               source="the xml_typed body: the type tags passed over"),
        Sample(f'<ifm|think_faster></ifm|think_faster>{OPEN}{CALL_OPEN}{{"name": "lookup", "arguments": '
               f'{{"limit": 2, "enabled": true}}}}{CALL_CLOSE}{CLOSE}',
               (ParsedToolCall("lookup", {"limit": 2, "enabled": True}),),
               source="the json body, after the lowest effort's empty reasoning block"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}{CALL_OPEN}ping", True, "cut inside the call's opening"),
        NearMiss(f"{OPEN}{CALL_OPEN}ping{CALL_CLOSE}", True, "a section never closed"),
        NearMiss(f"{OPEN}{CALL_OPEN}a{_pair('x', '1')}{_pair('x', '2')}{CALL_CLOSE}{CLOSE}", True,
                 "a key given twice"),
        NearMiss(f"{OPEN}{CALL_OPEN}a{_pair('x', '1', '')}{KEY}y{END_KEY}{TYPE}{END_TYPE}{VALUE}2{END_VALUE}"
                 f"{CALL_CLOSE}{CLOSE}", True, "an empty type tag"),
        NearMiss(f"{OPEN}{CALL_OPEN}a{KEY}x{END_KEY}{CALL_CLOSE}{CLOSE}", True, "a key without a value"),
        NearMiss(f'{OPEN}{CALL_OPEN}{{"name": "read", "arguments": {{</ifm|tool_call>{CLOSE}', True,
                 "a JSON body cut off"),
        NearMiss(f'{OPEN}{CALL_OPEN}{{"name": "ping"}}{CALL_CLOSE}{CLOSE}', True, "a JSON body without arguments"),
        NearMiss(f"{OPEN}junk{CLOSE}", False, "a section holding no call: text, as vLLM's parser leaves it"),
        NearMiss(f"K2 puts its calls in {OPEN} blocks.", False, "prose naming the tag"),
    ),
    wire_limits=(
        WireLimit(f"a string holding what the model writes after a value ({END_VALUE} then {KEY}, or "
                  f"{CALL_CLOSE} then {CALL_OPEN} or {CLOSE}): it ends the value",
                  lambda arguments: any_string(arguments, lambda s: READER.holds_boundary(s, _TAIL))),
        WireLimit(f"a key holding {END_KEY}, which ends the key",
                  lambda arguments: any(END_KEY in key for key in arguments)),
        WireLimit("a value that is not a string: the xml body writes its JSON as text, typed against the schema "
                  "afterwards", lambda arguments: any(not isinstance(value, str) for value in arguments.values())),
    ),
    corpus_labels=(),
    variants=("xml", "xml_typed", "json", "three reasoning efforts"),
    string_arguments=True,
    vllm_parser=("k2_horizon",),
)
