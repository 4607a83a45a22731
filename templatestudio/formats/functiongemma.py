"""FunctionGemma: ``<start_function_call>call:NAME{key:value,…}<end_function_call>``, one call per block.

Model: Google's FunctionGemma (Gemma 3 270M tuned for function calling).
Source: the corpus template ``tool_chat_template_functiongemma`` (vLLM's
example template). The value grammar is Gemma 4's with ``<escape>`` as the
string delimiter (``formats.keyed_values``): strings between ``<escape>``
with nothing escaped, bare ASCII numbers, ``true``/``false``/``null``,
lists and nested objects, keys bare words.

vLLM's template writes every value as its Python text between
``<escape>`` (``count:<escape>42<escape>``, ``on:<escape>True<escape>``):
those come back as the strings written, never guessed into numbers; the
schema types them (``templatestudio.coerce``). The template lists the tools
only inside a system or developer message, so a conversation without one
shows the model no tools, though it still writes the calls of past turns.

Read: several blocks anywhere in the reply, text between them; names as
written, ``-`` and ``.`` included. Refused: no ``call:`` after the token
(prose that merely names the token stays text), whitespace inside the call,
a string never closed, non-ASCII digits, text between ``}`` and
``<end_function_call>``, a block that never closes. No reasoning channel.

The response template, like Gemma 4's, reads only names of word characters
(``\\w+``): ``call:get-weather{…}`` defeats it.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.keyed_values import any_key, bad_key
from templatestudio.wire.shape import Call, NameBetween, OwnValues, WireShape

# Openers, reader, writer and closers are derived from this declaration
# (the arguments in the keyed-values grammar of ``wire.keyed_values``; the
# call's extent steps over strings between the format's own quote). "call:"
# after the token opens a call; the token alone in prose does not.
WIRE = WireShape(
    call=Call("<start_function_call>", "<end_function_call>"),
    name=NameBetween("call:", ""),
    arguments=OwnValues("<escape>"),
    separator="",
    stop_tokens=("<end_of_turn>", "<start_function_response>"),
)

OPEN, CLOSE, QUOTE = WIRE.call.open, WIRE.call.close, WIRE.arguments.quote

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<start_of_turn>model",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<start_function_call>call:(?P<name>\w+)",
            "close": CLOSE,
            "repeats": True,
            "content": "json",
            "content_args": {"unquoted_keys": True, "string_delims": [[QUOTE, QUOTE]]},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": ["<end_of_turn>", "<start_function_response>"], "content": "text"},
    },
}


CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = f"{OPEN}call:get_exchange_rate{{base:{QUOTE}EUR{QUOTE},quote:{QUOTE}JPY{QUOTE}}}{CLOSE}"

FORMAT = Format.declared(
    WIRE,
    name="functiongemma",
    description="<start_function_call>call:NAME{key:value}<end_function_call> with <escape> strings (FunctionGemma)",
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(_ONE, (CALL,), source="tool_chat_template_functiongemma"),
        Sample(f"{OPEN}call:s{{limit:10,live:true,o:{{days:7}},p:[{QUOTE}a{QUOTE},1.5],since:null}}{CLOSE}",
               (ParsedToolCall("s", {"limit": 10, "live": True, "o": {"days": 7}, "p": ["a", 1.5], "since": None}),),
               source="typed values, as FunctionGemma writes them"),
        Sample(f"{OPEN}call:probe{{count:{QUOTE}42{QUOTE},on:{QUOTE}True{QUOTE},tags:{QUOTE}['a']{QUOTE}}}{CLOSE}",
               (ParsedToolCall("probe", {"count": "42", "on": "True", "tags": "['a']"}),),
               source="vLLM's template: every value as its Python text"),
        Sample(f"Two lookups.\n{_ONE}\n{OPEN}call:get-weather{{city:{QUOTE}Paris, FR{QUOTE}}}{CLOSE}",
               (CALL, ParsedToolCall("get-weather", {"city": "Paris, FR"})), source="two calls after text"),
    ),
    near_misses=(
        NearMiss(f"FunctionGemma opens each call with the {OPEN} token.", False, "prose naming the token"),
        NearMiss(f"Checking. {OPEN}cal", True, "cut inside the opening"),
        NearMiss(f"{OPEN}call:a{{x:{QUOTE}open}}{CLOSE}", True, "a string never closed"),
        NearMiss(f"{OPEN}call:a{{n:1٢٣}}{CLOSE}", True, "digits that are not ASCII"),
        NearMiss(f"{OPEN}call:a{{n: 1}}{CLOSE}", True, "whitespace inside the call"),
        NearMiss(f"{OPEN}call:a{{}} done{CLOSE}", True, "text before the closer"),
        NearMiss(f"{OPEN}call:a{{}}", True, "the block never closes"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {QUOTE}, the delimiter nothing escapes",
                  lambda arguments: any_string(arguments, lambda s: QUOTE in s)),
        WireLimit("a key that is not a bare word", lambda arguments: any_key(arguments, bad_key)),
        WireLimit(f"a string holding {CLOSE}: the response template closes at the first one",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s), where="response template"),
        WireLimit("a key holding - or .: the response template quotes only \\w+ keys",
                  lambda arguments: any_key(arguments, lambda key: "-" in key or "." in key), where="response template"),
    ),
    corpus_labels=("other:functiongemma",),
    variants=("every value as its Python text between <escape> (vLLM's template)",),
    vllm_parser=("functiongemma",),
)
