"""The openers and the region reader of a declared wire shape, for the shapes they can be derived for.

``WireShape.derived_openers`` and ``WireShape.derived_reader`` come here. Three
shapes are derived: a JSON call object (or list of them) after an opening
literal ("json call", read by ``wire.tagged_json.read_json_call``), a name
between literals then a JSON object ("named json",
``tagged_json.read_named_json``), and a name between literals then an object
of the keyed-values grammar ("own values", ``keyed_values.read_named_values``).

Not handled (``ShapeError`` says which applies): hand-written parts,
sections, call ids, second openers, wrappers and bare calls without an
opening literal: their modules pass their own openers and reader.
"""

from __future__ import annotations

from templatestudio.resumable_match import literal, sequence
from templatestudio.wire import keyed_values, tagged_json
from templatestudio.wire.arguments import JsonArguments, JsonObject, NameBetween, OwnValues
from templatestudio.wire.base import Opener
from templatestudio.wire.envelope import ShapeError
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.value_extent import value_extent

# ``wire`` below is a ``wire.shape.WireShape``; the name is not imported, as
# shape.py imports this module (its methods are the way in).


def kind(wire: WireShape, what: str) -> str:
    """Which derived reading applies ("json call", "named json", "own values"); ShapeError when none does."""
    if wire.hand_written:
        why = "it declares hand-written parts: " + "; ".join(wire.hand_written)
    elif wire.section is not None or wire.call_id is not None or wire.call.also_opens or wire.wrappers:
        why = "sections, call ids, second openers and wrappers are read by the module's own code"
    elif not wire.call.open:
        why = "a bare call (no opening literal) is told from prose by the module's own opening"
    elif isinstance(wire.arguments, JsonArguments):
        return "json call"
    elif isinstance(wire.name, NameBetween) and wire.call.close and wire.name.close:
        if isinstance(wire.arguments, JsonObject):
            return "named json"
        why = "only JSON arguments are read after a closed name"
    elif isinstance(wire.name, NameBetween) and isinstance(wire.arguments, OwnValues) and wire.call.close:
        return "own values"
    else:
        why = "only JSON bodies and the keyed-values grammar after an opening literal are derived"
    raise ShapeError(f"no {what} can be derived: {why}")


def openers(wire: WireShape) -> tuple[Opener, ...]:
    """The openers of the declared shape: the call's, then one per framing literal."""
    found = kind(wire, "openers")
    call, close, name = wire.call, wire.call.close, wire.name
    refused = tuple(item for item, _ in call.refused)
    skip, optional = len(call.open), wire.closer_optional
    extent = (lambda: TagExtent(skip, close, "json", close_at_end=optional)) if close else value_extent(skip)
    if found == "named json":
        pattern = tagged_json.named_opening(call.open, name.open, name.chars, name.close)
    elif found == "own values":
        # The name's literal must follow the token: the token alone in prose opens nothing.
        pattern = sequence(literal(call.open), literal(name.open)) if name.open else literal(call.open)
        quote = wire.arguments.quote
        extent = lambda: TagExtent(skip, close, quote, close_at_end=optional)  # noqa: E731 - strings: the quote
    elif call.marker and call.marker != call.open:
        # The marker reaches into the list's bracket (firefunction's functools[): a call object follows it.
        pattern = tagged_json.json_opening(call.marker, (), ("{",), refused)
    else:
        body = ("[",) if wire.arguments.listed else ("{",)
        pattern = tagged_json.json_opening(call.open, tagged_json.head_literals(call.head), body, refused)
    if call.cut_in_body and found != "named json":
        raise ShapeError("cut_in_body needs a name between literals and a JSON body")
    cut_from = tagged_json.named_body_start(call.open, name.open, name.chars, name.close) if call.cut_in_body else None
    found_openers = [Opener(call.marker or call.open, pattern, extent, cut_after=call.cut_after, cut_from=cut_from)]
    for item in wire.framing:
        found_openers.append(Opener(item, literal(item), lambda item=item: TagExtent(0, item)))
    return tuple(found_openers)


def region_reader(wire: WireShape):
    """The region reader of the declared shape (framing regions hold no call)."""
    found = kind(wire, "reader")
    call, name, shape, framing = wire.call, wire.name, wire.arguments, set(wire.framing)
    common = dict(open_literal=call.open, close=call.close, close_optional=wire.closer_optional)
    if found == "named json":
        options = dict(common, name_open=name.open, name_close=name.close, string_arguments=shape.string_ok)
        read = tagged_json.read_named_json
    elif found == "own values":
        options = dict(common, name_open=name.open, quote=shape.quote)
        read = keyed_values.read_named_values
    else:
        options = dict(common, head=tagged_json.head_literals(call.head), refused=call.refused,
                       listed=shape.listed is not None, name_key=name.key, argument_keys=shape.keys,
                       string_arguments=shape.string_ok, extras=shape.extras or None, id_key=shape.id_key)
        read = tagged_json.read_json_call

    def read_region(region: str, opener: Opener, matched):
        if opener.literal in framing:
            return []  # framing: the text around it is the content
        return read(region, matched, **options)

    return read_region
