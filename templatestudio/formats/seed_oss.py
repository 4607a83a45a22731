"""Seed-OSS: ``<seed:tool_call><function=NAME><parameter=k>v</parameter></function></seed:tool_call>``.

Read as ByteDance's published Seed-OSS template writes it: one function per
``<seed:tool_call>`` block, any number of blocks in a reply, whitespace
between the tags passed over. A value is everything between
``<parameter=k>`` and the first ``</parameter>``, kept exactly: unlike
Qwen3-Coder's template this one writes no newline around a value, so none
is removed. The template writes a string value as it is and any other value
through Jinja's ``string`` filter (Python's spelling: ``True``, ``None``,
``['a', 'b']``), so values are text, typed later against the tool's schema
(``string_arguments``); an array or object in Python's spelling is not JSON,
so ``coerce`` keeps it as text and ``dispatch`` reports the type. Reasoning: ``<seed:think>…</seed:think>`` at the
start of the reply (its ``<seed:cot_budget_reflect>`` notes stay inside it).

``<function=`` is also Qwen3-Coder's bare opener; inside a Seed block
nothing else is looked for, and each format's reader raises on the other's
calls because each block opens with its own literal.

The shape is declared in ``WIRE``; the function element and its
parameters are read by ``wire.xml_params`` from that declaration, as
Qwen3-Coder's are.

A value may hold the wire's own markers (nothing is escaped): a
``</parameter>`` ends it only when whitespace and then the next
``<parameter=KEY>`` or ``</function>`` and ``</seed:tool_call>`` follow, and
the block ends at the first ``</seed:tool_call>`` outside a value; a closer
left out is recovered where the structure stands unmistakably (the rule is
``wire.xml_params``', shared with Qwen3-Coder).

Refused: a block without ``<function=NAME>``, two functions in one block, a
parameter given twice, text between the tags, a block never closed, a value
whose closer is missing that also holds a ``</parameter>`` that did not end
it. Not handled: a value holding the template's own boundary
(``</parameter>`` then an opening tag or ``</function>``
``</seed:tool_call>``; a line starting ``<parameter=KEY>``), keys or names
holding ``<``, ``>`` or a newline (the wire cannot carry them; see
``wire_limits``).
"""

from __future__ import annotations

import re

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import Call, Invoke, Reasoning, WireShape, XmlParameters
from templatestudio.wire.xml_params import xml_limits

# Everything about the wire, declared: write_call, markers, closers,
# reasoning, the opener and the reader come from it (the reader is
# xml_params' reading of the declaration, one function per block:
# ``wire.shape_reader``'s "invoke parameters").
WIRE = WireShape(
    call=Call("<seed:tool_call>", "</seed:tool_call>", head="\n", tail="\n"),
    name=Invoke("<function=", ">", "</function>", head="\n"),
    # Non-strings as the template's "string" filter spells them: Python's str().
    arguments=XmlParameters("<parameter=", ">", "</parameter>", values="str"),
    reasoning=Reasoning("<seed:think>", "</seed:think>"),
    stop_tokens=("<seed:eos>",),
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close
AFTER_CALL = (OPEN, *WIRE.stop_tokens)  # what may follow a whole call (wire.xml_params' missing-closer rule)

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<seed:bos>assistant\n",
    "fields": {
        "thinking": {"open": "<seed:think>", "close": "</seed:think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"<seed:tool_call>[ \t\n\r]*<function=(?P<name>[^<>\n]+)>",
            "close_pattern": r"</function>[ \t\n\r]*</seed:tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<parameter=(?P<key>[^<>\n]+)>(?P<value>.*?)</parameter>"},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<seed:eos>", "content": "text"},
    },
}


_RESPONSE_CALL_END = re.compile(RESPONSE_TEMPLATE["fields"]["tool_calls"]["close_pattern"])


CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = (f"{OPEN}\n<function=get_exchange_rate>\n<parameter=base>EUR</parameter>\n"
        f"<parameter=quote>JPY</parameter>\n</function>\n{CLOSE}")

FORMAT = Format.declared(
    WIRE,
    name="seed-oss",
    description="<seed:tool_call><function=NAME><parameter=KEY>text (ByteDance Seed-OSS)",
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(_ONE, (CALL,), source="Seed-OSS's template"),
        Sample("<seed:think>The user wants a rate.<seed:cot_budget_reflect>I have used 12 tokens."
               "</seed:cot_budget_reflect></seed:think>\n" + _ONE, (CALL,), source="with reasoning and a budget note"),
        Sample(_ONE + f"\n{OPEN}\n<function=ping>\n</function>\n{CLOSE}", (CALL, ParsedToolCall("ping", {})),
               source="two blocks"),
        Sample(f"{OPEN}\n<function=write_note>\n<parameter=text>\nfirst line\nsecond line</parameter>\n"
               f"<parameter=pinned>True</parameter>\n</function>\n{CLOSE}",
               (ParsedToolCall("write_note", {"text": "\nfirst line\nsecond line", "pinned": "True"}),),
               source="values kept exactly, a bool in Python's spelling"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}\n<func", True, "cut inside the opening"),
        NearMiss(f"{OPEN}\n<function=a>\n<parameter=x>1</parameter>\n", True, "never closed"),
        NearMiss(f"{OPEN}<function=a><parameter=x>1</parameter><parameter=x>2</parameter></function>{CLOSE}", True,
                 "a parameter given twice"),
        NearMiss(f"{OPEN}<function=a></function><function=b></function>{CLOSE}", True, "two functions in one block"),
        NearMiss(f"{OPEN}<function=a>note</function>{CLOSE}", True, "text between the tags"),
        NearMiss(f"Seed-OSS opens each call with {OPEN} and a function tag.", False, "prose naming the tag"),
    ),
    wire_limits=(
        *xml_limits(WIRE.arguments, WIRE.name.close, CLOSE,
                    "the wire writes Python's spelling as text, typed against the schema afterwards", AFTER_CALL),
        WireLimit(f"a string holding {WIRE.arguments.close} or {WIRE.name.close} then {CLOSE}: the response "
                  f"template's value and call end at the first", lambda arguments: any_string(
                      arguments, lambda s: WIRE.arguments.close in s or _RESPONSE_CALL_END.search(s) is not None),
                  where="response template"),
    ),
    corpus_labels=("other:seed-oss",),
    string_arguments=True,
    vllm_parser=("seed_oss",),
)
