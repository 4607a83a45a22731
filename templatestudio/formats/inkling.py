"""Inkling: ``<|content_invoke_tool_json|>{"name": NAME, "args": {…}}<|end_message|>`` among typed blocks.

An Inkling reply is a run of blocks, each a model message: the
generation prompt ends with ``<|message_model|>``, so the first block
starts with its content-kind token, and every later block with
``<|message_model|>`` and then its own. The kinds::

    <|content_thinking|>…<|end_message|>                    reasoning
    <|content_text|>…<|end_message|>                        the answer (content)
    <|content_invoke_tool_json|>{"name": …, "args": {…}}<|end_message|>   one call
    <|content_invoke_tool_text|>…<|end_message|>            text shown as content
    <|content_tool_error|>…<|end_message|>                  text shown as content

Every marker is a special token. Any block may instead end with
``<|content_model_end_sampling|>``, the token sampling stops on; a server
that stops there and cuts it leaves the last call without its closer,
which is read when its JSON is whole. Source: vLLM 0.33's Inkling parser
and its tests; no Inkling chat template is at hand.

Read: a call block holds one JSON object with exactly ``name`` (a
non-empty string) and ``args`` (an object); several calls are several
blocks. A call block's message may name the tool between
``<|message_model|>`` and the kind token (``<|message_model|>NAME<|content_invoke_tool_json|>``):
the name must be the call's own. The block tokens other than the call's
are the reply's framing: the reader drops them, and the text of the text,
tool-text and tool-error blocks is the content.

Reasoning: thinking blocks at the start of the reply, one after another
(``<|message_model|><|content_thinking|>`` opens each after the first).
Not handled: a thinking block after a text or call block (its text comes
back as content, its tokens dropped), and a tool name written at the very
start of the reply, before the first call block's token (where the
prompt's ``<|message_model|>`` stands before it): it comes back as
content.

Refused: a call block whose body is not that object (``arguments`` or
``parameters`` in place of ``args``, arguments as a string, extra keys),
text after the object inside the block, a header name other than the
call's or holding whitespace, a header before a block that is not a call,
a message with no kind token, a call block cut before its JSON is whole.
"""

from __future__ import annotations

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import chars, literal, run
from templatestudio.wire.base import CallSyntaxError, Found, Format, NearMiss, Opener, Sample, opener_pattern
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import call_from, decode_at, skip_space
from templatestudio.wire.shape import NEVER, Call, JsonArguments, NameKey, Reasoning, WireShape

# The writer's shape (a JSON call object between the call block's tokens, one
# block per call, each later one after <|message_model|>). The openers and the
# reader are the module's own: a block ends at either end token, and a call
# block's message may name the tool before the kind token.
WIRE = WireShape(
    call=Call("<|content_invoke_tool_json|>", "<|end_message|>", also_opens=("<|message_model|>",)),
    name=NameKey("name"),
    arguments=JsonArguments("args"),
    separator="<|message_model|>",
    reasoning=Reasoning("<|content_thinking|>", "<|end_message|>",
                        also=(("<|message_model|><|content_thinking|>", "<|end_message|>"),)),
    stop_tokens=("<|content_model_end_sampling|>",),
    closer_optional=True,
    # The other blocks' tokens: the answer's, the two ends, the shown tool text and error, a later thinking block.
    framing=("<|content_text|>", "<|end_message|>", "<|content_model_end_sampling|>", "<|content_invoke_tool_text|>",
             "<|content_tool_error|>", "<|content_thinking|>"),
    # The blocks' tokens stand against the text: whitespace beside them is the model's, and stays.
    spacing="",
)

CALL, (MESSAGE,) = WIRE.call.open, WIRE.call.also_opens
TEXT, END, END_SAMPLING, TOOL_TEXT, TOOL_ERROR, THINK = WIRE.framing
_BLOCK_ENDS = (END, END_SAMPLING)
_MESSAGE_ENDS = (TEXT, THINK, TOOL_TEXT, TOOL_ERROR, *_BLOCK_ENDS)  # what may follow a message's start


def _read_block(region: str, start: int, header: str, found: Found | None) -> list[CallSpan]:
    """The call of the block whose body starts at start (just past the call token); header: its message's name."""
    position = skip_space(region, start)
    if not region.startswith("{", position):
        raise CallSyntaxError(f"no JSON object after {CALL}, at offset {position}")
    payload, after = decode_at(region, position, found)
    call, _ = call_from(payload, name_key="name", argument_keys=("args",))
    after = skip_space(region, after)
    if after < len(region) and not any(region.startswith(end, after) and after + len(end) == len(region)
                                       for end in _BLOCK_ENDS):
        raise CallSyntaxError(f"expected {END} after the call's JSON, at offset {after}")
    if header and header != call.name:
        raise CallSyntaxError(f"the message names the tool {header!r} but its call is to {call.name!r}")
    return [CallSpan(call, 0, len(region))]


def _message_start(region: str) -> list[CallSpan]:
    """A message's start before a kind token other than the call's: framing, with no header text."""
    rest = region[len(MESSAGE):]
    closer = next((token for token in _MESSAGE_ENDS if rest.endswith(token)), None)
    if closer is None:  # the reply ended inside the message's start
        if any(token.startswith(rest) for token in (*_MESSAGE_ENDS, CALL)):
            return []  # at most a token cut short: the message's start, framing
        raise CallSyntaxError(f"the reply ended in the header of a message: {rest[:40]!r}")
    if rest[: -len(closer)]:
        raise CallSyntaxError(f"text {rest[: -len(closer)][:40]!r} between {MESSAGE} and {closer}: "
                              "a message header names a tool only before a call")
    return []


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    if opener.literal == CALL:
        return _read_block(region, len(CALL), "", found)
    if opener.literal == MESSAGE and opener is not MESSAGE_CALL:
        return _message_start(region)
    if opener is not MESSAGE_CALL:
        return []  # framing: the text around it is the content
    at = region.index(CALL, len(MESSAGE))  # the opening matched: the header and the call token are whole
    return _read_block(region, at + len(CALL), region[len(MESSAGE):at], found)


# Hand-written: a call block ends at either end token, or (the stop token cut) at
# the reply's end. A message whose header (a tool name, or nothing) is followed
# by the call token opens a call, its region the whole block; before any other
# kind token the message's start is framing (its region runs to that token:
# text there is refused). A reply cut inside the header is no call: the
# message may yet be an answer; one cut once its kind token has parted from
# every other kind (``<|content_i``) was cut in a call.
_HEADER = run(chars(r'[^\s<>"]'))
_CALL_PART = next(CALL[:size] for size in range(1, len(CALL) + 1)
                  if not any(tag.startswith(CALL[:size]) for tag in WIRE.framing))
MESSAGE_CALL = Opener(MESSAGE, opener_pattern(MESSAGE, _HEADER, literal(CALL)),
                      lambda: TagExtent(len(MESSAGE), _BLOCK_ENDS, "json", close_at_end=True), cut_after=NEVER,
                      cut_from=opener_pattern(MESSAGE, _HEADER, literal(_CALL_PART)))
OPENERS = (
    Opener(CALL, literal(CALL), lambda: TagExtent(len(CALL), _BLOCK_ENDS, "json", close_at_end=True)),
    MESSAGE_CALL,
    # Framing: each region is the token alone; a reply cut inside one is text.
    Opener(MESSAGE, literal(MESSAGE), lambda: TagExtent(len(MESSAGE), _MESSAGE_ENDS, close_at_end=True),
           cut_after=NEVER),
    *(Opener(tag, literal(tag), lambda tag=tag: TagExtent(0, tag), cut_after=NEVER) for tag in WIRE.framing),
)

_ARGS = '{"city": "San Francisco", "days": 3}'
_ONE = f'{CALL}{{"name": "get_weather", "args": {_ARGS}}}{END}'
CALL_SAMPLE = ParsedToolCall("get_weather", {"city": "San Francisco", "days": 3})
_PING = f'{CALL}{{"name": "ping", "args": {{}}}}{END}'

FORMAT = Format.declared(
    WIRE,
    name="inkling",
    description='<|content_invoke_tool_json|>{"name", "args"}<|end_message|> among typed message blocks (Inkling)',
    openers=OPENERS,
    read_region=read_region,
    response_template=None,
    no_response_template=("no Inkling chat template is at hand to anchor the assistant turn (the wire here comes "
                          "from vLLM's parser and its tests)"),
    samples=(
        Sample(_ONE, (CALL_SAMPLE,), source="a call block right after the generation prompt"),
        Sample(f"{THINK}I should check the weather.{END}{MESSAGE}{TEXT}Let me check.{END}{MESSAGE}{_ONE}",
               (CALL_SAMPLE,), source="vLLM's test: reasoning, text, then a call"),
        Sample(f"{_ONE}{MESSAGE}{_PING}{MESSAGE}{TEXT}Both sent.{END_SAMPLING}",
               (CALL_SAMPLE, ParsedToolCall("ping", {})), source="two call blocks, then text ended by the stop token"),
        Sample(f"{THINK}plan{END}{MESSAGE}get_weather{_ONE}", (CALL_SAMPLE,),
               source="the message names the tool before the call block"),
        Sample(f'{CALL}{{"name": "f", "args": {{"q": "a}}b<|end_message|>", "n": [1, null]}}}}',
               (ParsedToolCall("f", {"q": "a}b<|end_message|>", "n": [1, None]}),),
               source="the stop token cut; an end token inside a string"),
        Sample(f"{TEXT}No tool needed.{END}", (), source="a text block: framing dropped"),
    ),
    near_misses=(
        NearMiss(f'{CALL}{{"name": "get_weather", "args": {{"city": "S', True, "cut inside the JSON"),
        NearMiss(f'{CALL}{{"name": "get_weather", "arguments": {_ARGS}}}{END}', True, "arguments in place of args"),
        NearMiss(f'{CALL}{{"name": "get_weather", "args": "{{}}"}}{END}', True, "args written as a string"),
        NearMiss(f'{CALL}{{"name": "get_weather", "args": {{}}}} and more{END}', True, "text after the object"),
        NearMiss(f"{CALL}get_weather(city='SF'){END}", True, "not JSON"),
        NearMiss(f"{MESSAGE}lookup{_ONE}", True, "the header names another tool"),
        NearMiss("Inkling writes each call as a JSON block.", False, "prose about the format"),
    ),
    wire_limits=(),
    corpus_labels=(),
    vllm_parser=("inkling",),
)
