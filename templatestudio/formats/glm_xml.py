"""GLM XML: ``<tool_call>NAME`` then ``<arg_key>k</arg_key><arg_value>v</arg_value>`` pairs, then ``</tool_call>``.

Variants read, both from Z.ai's published templates:

- GLM-4.5 / GLM-4.6 (``glm4moe``): the name, each tag and the closer on
  lines of their own (``<tool_call>NAME\\n<arg_key>k</arg_key>\\n<arg_value>…``);
- GLM-4.7 (``GLM-4.7-Flash``): the same tags with nothing between them.

Whitespace between the tags is passed over; a name, key or value comes back
exactly as written between its tags, nothing stripped. The templates write
a string value as it is and any other value as its JSON (``tojson``), so a
value cannot say which it was: values are text, typed later against the
tool's schema (``string_arguments``). One call per block, any number of
blocks in a reply. Reasoning: ``<think>…</think>`` at the start of the reply
(GLM-4.7's prompt opens it; GLM-4.5 writes ``<think></think>`` itself).

``<tool_call>`` is also the Hermes and Qwen3-Coder literal: a GLM call opens
only when a name character (a word character or ``.-:/@``) follows the tag
at once and the name is followed by ``<arg_key>`` or ``</tool_call>``,
so the three openings never overlap and prose naming the tag stays text.

Nothing is escaped, so a value may hold any of the tags. Where it ends
is what the templates write after it (``ENDS``, read by
``wire.xml_params``' scanner, which the extent and the reader share): an
``</arg_value>`` ends the value only when whitespace and then
``<arg_key>`` or ``</tool_call>`` follow it, and the call ends at the first
``</tool_call>`` outside a value; any other tag in a value is its text. A
closer the model left out is recovered where the structure stands
unmistakably: ``<arg_key>K</arg_key><arg_value>`` starts the next pair, and
a ``</tool_call>`` followed only by whitespace and the end of the reply, the
next ``<tool_call>`` or a stop token ends the last value.

Refused: a name holding any other character followed by GLM's tags (a
name of other characters with no tags after it is prose: a regex quoted
after the tag, Hermes' ``{`` or Qwen3-Coder's ``<``), a key without its
value, a key given twice, anything else between the tags, a block never
closed, a value whose ``</arg_value>`` is missing that also holds one that
did not end it (a held closer and a missing one read the same). Not
handled: a value holding the templates' own boundary (``</arg_value>`` then
``<arg_key>`` or ``</tool_call>``; ``<arg_key>K</arg_key><arg_value>``): it
reads as that boundary, since the template writes both alike (see
``wire_limits``); a key holding ``</arg_key>``.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire import named_pairs
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import Call, KeyValuePairs, NameBetween, Reasoning, WireShape
from templatestudio.wire.xml_params import holds_boundary

# Everything about the wire, declared: the writer, markers, closers, reasoning, and the opener and
# reader (``wire.named_pairs``: the name runs from the tag to the first whitespace or tag).
WIRE = WireShape(
    call=Call("<tool_call>", "</tool_call>"),
    # A tool's name: word characters and the punctuation names use (MCP's server.tool, a/b, ns:name);
    # other text after the tag is prose (the regex in a sentence about the tag) or, with GLM's tags
    # after it, a malformed call the machine refuses.
    name=NameBetween("", "", head="\n", chars=r"[\w.\-:/@]"),
    arguments=KeyValuePairs("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", values="json"),
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("<|user|>", "<|observation|>"),
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close
KEY, END_KEY = WIRE.arguments.key_open, WIRE.arguments.key_close
VALUE, END_VALUE = WIRE.arguments.value_open, WIRE.arguments.value_close
# Where a value ends (what the templates write after one: whitespace, then the next key or the
# call's closer) and the reader and opener are ``wire.named_pairs``', built from WIRE; the module
# keeps the ends for its wire limits.
ENDS = named_pairs.ends(WIRE)

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|assistant|>",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": f"<tool_call>(?P<name>{WIRE.name.chars}+)",
            "close": CLOSE,
            "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<arg_key>(?P<key>.*?)</arg_key>[ \t\n\r]*<arg_value>(?P<value>.*?)</arg_value>"},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": ["<|user|>", "<|observation|>"], "content": "text"},
    },
}


CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_NEWLINES = ("<tool_call>get_exchange_rate\n<arg_key>base</arg_key>\n<arg_value>EUR</arg_value>\n"
             "<arg_key>quote</arg_key>\n<arg_value>JPY</arg_value>\n</tool_call>")
_COMPACT = ("<tool_call>get_exchange_rate<arg_key>base</arg_key><arg_value>EUR</arg_value>"
            "<arg_key>quote</arg_key><arg_value>JPY</arg_value></tool_call>")

FORMAT = Format.declared(
    WIRE,
    name="glm-xml",
    description="<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> (GLM-4.5, 4.6, 4.7)",
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample("\n<think></think>\n" + _NEWLINES, (CALL,), source="glm4moe (GLM-4.5/4.6) template"),
        Sample(_COMPACT, (CALL,), source="GLM-4.7-Flash template"),
        Sample("<think>The user wants a rate.</think>" + _COMPACT + "<tool_call>ping</tool_call>",
               (CALL, ParsedToolCall("ping", {})), source="GLM-4.7: reasoning, then two calls"),
        Sample("<tool_call>write_note\n<arg_key>text</arg_key>\n<arg_value> two\nlines </arg_value>\n"
               "<arg_key>count</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
               (ParsedToolCall("write_note", {"text": " two\nlines ", "count": "3"}),),
               source="values kept exactly, numbers as their text"),
    ),
    near_misses=(
        NearMiss("<tool_call>get_exchange_rate\n<arg_k", True, "cut inside a key tag"),
        NearMiss("<tool_call>get_exchange_rate\n<arg_key>base</arg_key>\n<arg_value>EUR</arg_value>\n", True,
                 "never closed"),
        NearMiss("<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value><arg_key>x</arg_key><arg_value>2</arg_value>"
                 "</tool_call>", True, "a key given twice"),
        NearMiss("<tool_call>a<arg_key>x</arg_key></tool_call>", True, "a key without a value"),
        NearMiss("<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value>note</tool_call>", True,
                 "text between the tags"),
        NearMiss("GLM writes <tool_call>NAME then <arg_key> pairs.", False, "prose naming the tags"),
    ),
    wire_limits=(
        WireLimit(f"a string holding what the templates write between two pairs ({END_VALUE} then {KEY} or "
                  f"{CLOSE}; {KEY}K{END_KEY}{VALUE}): it ends the value",
                  lambda arguments: any_string(arguments, lambda s: holds_boundary(
                      s, f"{KEY}k{END_KEY}{VALUE}", ENDS, f"{END_VALUE}{CLOSE}"))),
        WireLimit(f"a string holding {END_VALUE} or {CLOSE}: the response template's value and call end at the first",
                  lambda arguments: any_string(arguments, lambda s: END_VALUE in s or CLOSE in s),
                  where="response template"),
        WireLimit(f"a key holding {END_KEY}, which ends the key",
                  lambda arguments: any(END_KEY in key for key in arguments)),
        WireLimit("a value that is not a string: the wire writes its JSON as text, typed against the schema afterwards",
                  lambda arguments: any(not isinstance(value, str) for value in arguments.values())),
    ),
    corpus_labels=("other:glm-xml",),
    variants=("GLM-4.5/4.6 one tag per line", "GLM-4.7 compact"),
    string_arguments=True,
    vllm_parser=("glm47", "glm45", "poolside_v1", "ling3"),
)
