"""The openers and the region reader of a declared wire shape, for the shapes they can be derived for.

``WireShape.derived_openers`` and ``WireShape.derived_reader`` come here. These
shapes are derived: a JSON call object (or list of them) after an opening
literal ("json call", read by ``wire.tagged_json.read_json_call``), a name
between literals then a JSON object ("named json",
``tagged_json.read_named_json``; without a call closer the object's own
bracket ends the call), a name between literals then an object
of the keyed-values grammar ("own values", ``keyed_values.read_named_values``),
a name right after the opening literal then key/value element pairs
("named pairs", GLM's, read by ``wire.named_pairs``), and an element
named in its opening tag holding XML-style parameters inside
an opening and a closing literal ("invoke parameters", ``wire.xml_params.read_invoke``:
Seed-OSS's shape; a value ends where the declared literals say, as
``wire.xml_params`` rules).

Two shapes in a section: a name between literals then a JSON object in a
call ("sectioned named json", DeepSeek V3.1's and Kimi K2's, the whole
section read as one region by ``wire.sections.read_section``; a call id
before the name, Solar Open's, and a call number after it, Kimi's, are
read too), and elements of
parameters with no call literals of their own ("sectioned invoke
parameters", MiniMax's, read in one region; with typed tags, DeepSeek's
DSML, read by ``wire.dsml``).

A bare JSON call object (or list of them) with no opening literal is
derived too ("bare json call", Llama 3.1's and xLAM's): only an object that
opens with the name's key opens a call, and such an object must then be a
whole call (a module may be laxer with data that looks like one).

Not handled (``ShapeError`` says which applies): hand-written parts, call
ids, second openers, wrappers, other shapes in a section and other bare
calls: their modules pass their own openers and reader.
"""

from __future__ import annotations

import functools

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import literal, sequence
from templatestudio.wire import dsml, keyed_values, named_pairs, tagged_json
from templatestudio.wire.arguments import (
    Invoke, JsonArguments, JsonObject, KeyValuePairs, NameBetween, OwnValues, XmlParameters,
)
from templatestudio.wire.base import SPACES, CallSyntaxError, Opener
from templatestudio.wire.envelope import ShapeError
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.past_head_extent import PastHeadTagExtent
from templatestudio.wire.sections import element_spans, expect, json_object_at, read_section
from templatestudio.wire.value_extent import value_extent
from templatestudio.wire.xml_extent import parameter_extents
from templatestudio.wire.xml_params import read_invoke

# ``wire`` below is a ``wire.shape.WireShape``; the name is not imported, as
# shape.py imports this module (its methods are the way in).


def kind(wire: WireShape, what: str) -> str:
    """Which derived reading applies ("json call", "named json", "named pairs", …); ShapeError when none does."""
    name, arguments, call, section = wire.name, wire.arguments, wire.call, wire.section
    if wire.hand_written:
        why = "it declares hand-written parts: " + "; ".join(wire.hand_written)
    elif call.also_opens or wire.wrappers:
        why = "second openers and wrappers are read by the module's own code"
    elif isinstance(name, NameBetween) and name.index and section is None:
        why = "a call's number after the name is read only in a section"
    elif section is not None and (isinstance(name, NameBetween) and isinstance(arguments, JsonObject)
                                  and arguments.listed is None and call.open and call.close and name.close
                                  and not section.alone):
        return "sectioned named json"  # a call id before the name is read too
    elif (wire.call_id is not None and wire.call_id.after_name and isinstance(name, NameBetween) and name.close
          and isinstance(arguments, JsonObject) and arguments.listed is None and section is None):
        return "named json"  # with the id after the name (Mistral's [CALL_ID])
    elif wire.call_id is not None:
        why = ("a call id is read only before the name of a sectioned named JSON call, or after the name "
               "of a named JSON call")
    elif section is not None:
        if isinstance(name, Invoke) and isinstance(arguments, XmlParameters) and not call.open and not call.close:
            return "sectioned typed parameters" if arguments.typed else "sectioned invoke parameters"
        why = ("in a section, only a name between literals then a JSON object in a call never written alone, "
               "or elements of parameters with no literals of their own, are derived")
    elif not call.open and isinstance(arguments, JsonArguments) and call.marker == ("[" if arguments.listed else "{"):
        return "bare json call"
    elif not call.open:
        why = "a bare call (no opening literal) is told from prose by the module's own opening"
    elif isinstance(arguments, JsonArguments):
        return "json call"
    elif isinstance(name, NameBetween) and isinstance(arguments, OwnValues) and call.close:
        return "own values"
    elif (isinstance(name, NameBetween) and isinstance(arguments, KeyValuePairs) and not name.open
          and not name.close and call.open and call.close):
        return "named pairs"
    elif isinstance(name, NameBetween) and name.close:
        if isinstance(arguments, JsonObject) and arguments.listed is None:
            return "named json"
        why = "only a JSON object is read after a closed name"
    elif isinstance(name, Invoke) and isinstance(arguments, XmlParameters) and call.close:
        return "invoke parameters"
    else:
        why = "only JSON bodies and the keyed-values grammar after an opening literal are derived"
    raise ShapeError(f"no {what} can be derived: {why}")


def openers(wire: WireShape) -> tuple[Opener, ...]:
    """The openers of the declared shape: the call's, then one per framing literal."""
    found = kind(wire, "openers")
    call, close, name = wire.call, wire.call.close, wire.name
    if found == "sectioned named json":  # the whole section is one region (its closer outside JSON strings)
        section = wire.section
        return (Opener(section.open, sequence(literal(section.open), SPACES, literal(call.open)),
                       lambda: TagExtent(len(section.open), section.close, "json")), *_framing_openers(wire))
    if found == "bare json call":
        # Only an object that opens with the name's key, as the writer writes it, opens a call: other braces are prose.
        steps = [literal("["), SPACES] if wire.arguments.listed else []
        pattern = sequence(*steps, literal("{"), SPACES, literal(f'"{name.key}"'), SPACES, literal(":"))
        return (Opener(call.marker, pattern, value_extent(0)), *_framing_openers(wire))
    if found == "sectioned typed parameters":
        return (dsml.opener(dsml.Tags.of(wire)), *_framing_openers(wire))
    if found == "named pairs":
        return (named_pairs.opener(wire), *_framing_openers(wire))
    if found == "sectioned invoke parameters":
        section = wire.section
        after_call = (section.open, *wire.stop_tokens)
        return (Opener(section.open, sequence(literal(section.open), SPACES, literal(name.open)),
                       parameter_extents(wire.arguments, name, (section.open, section.close), after_call)),
                *_framing_openers(wire))
    refused = tuple(item for item, _ in call.refused)
    skip, optional = len(call.open), wire.closer_optional
    extent = (lambda: TagExtent(skip, close, "json", close_at_end=optional)) if close else value_extent(skip)
    held = [item for item in tagged_json.head_literals(call.head) if close and close in item]
    if held:  # the head holds the closer (Command R+'s ```json fence, closed by ```): search past it
        extent = functools.partial(PastHeadTagExtent, skip, held[-1], close)
    if found == "invoke parameters":
        after_call = (call.open, *wire.stop_tokens)  # what may follow a whole call (a missing closer's rule)
        return (Opener(call.open, sequence(literal(call.open), SPACES, literal(name.open)),
                       parameter_extents(wire.arguments, name, (call.open, close), after_call)),
                *_framing_openers(wire))
    if found == "named json":
        id_close = wire.call_id.close if wire.call_id is not None else None
        pattern = tagged_json.named_opening(call.open, name.open, name.chars, name.close, id_close)
        if not close:  # the object's own bracket ends the call; the name (and id) are passed over before it opens
            units = (name.close,) if id_close is None else (name.close, id_close)
            extent = value_extent(skip, head_units=units, stop_at=(call.open,))
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
    opener = Opener(call.marker or call.open, pattern, extent, cut_after=call.cut_after, cut_from=cut_from,
                    cut_at_line=call.cut_at_line)
    return (opener, *_framing_openers(wire))


def _framing_openers(wire: WireShape) -> tuple[Opener, ...]:
    """One opener per framing literal: a region that holds no call."""
    return tuple(Opener(item, literal(item), lambda item=item: TagExtent(0, item)) for item in wire.framing)


def region_reader(wire: WireShape):
    """The region reader of the declared shape (framing regions hold no call)."""
    found = kind(wire, "reader")
    framing = set(wire.framing)
    whole = _whole_region_reader(wire, found)
    if whole is not None:

        def read_whole_region(region: str, opener: Opener, matched):
            if opener.literal in framing:
                return []  # framing: the text around it is the content
            return whole(region, opener, matched)

        return read_whole_region
    read, options = _call_reader(wire, found)

    def read_region(region: str, opener: Opener, matched):
        if opener.literal in framing:
            return []  # framing: the text around it is the content
        return read(region, matched, **options)

    return read_region


def _whole_region_reader(wire: WireShape, found: str):
    """The region reader of a reading another wire module builds whole from the declaration; None for the rest."""
    if found == "sectioned named json":
        section, call, read_call = wire.section, wire.call, _named_call_reader(wire)
        return lambda region, opener, matched: read_section(region, section.open, section.close, call.open,
                                                            read_call, found=matched)
    if found == "sectioned typed parameters":
        return dsml.reader(dsml.Tags.of(wire))
    if found == "named pairs":
        return named_pairs.reader(wire)
    return None


def _call_reader(wire: WireShape, found: str) -> tuple:
    """(read, options): ``read(region, matched, **options)`` reads the calls of one region of the reading found."""
    call, name, shape = wire.call, wire.name, wire.arguments
    common = dict(open_literal=call.open, close=call.close, close_optional=wire.closer_optional)
    if found == "invoke parameters":
        return _read_invoke_call, dict(open_literal=call.open, name=name, shape=shape, close=call.close,
                                       after_call=(call.open, *wire.stop_tokens))
    if found == "sectioned invoke parameters":
        return _read_invoke_section, dict(open_literal=wire.section.open, name=name, shape=shape,
                                          close=wire.section.close)
    if found == "named json":
        return tagged_json.read_named_json, dict(
            common, name_open=name.open, name_close=name.close, string_arguments=shape.string_ok,
            id_close=wire.call_id.close if wire.call_id is not None else None)
    if found == "own values":
        return keyed_values.read_named_values, dict(common, name_open=name.open, quote=shape.quote)
    # a json call, bare or after its opening literal
    return tagged_json.read_json_call, dict(
        common, head=tagged_json.head_literals(call.head), refused=call.refused, listed=shape.listed is not None,
        name_key=name.key, argument_keys=shape.keys, string_arguments=shape.string_ok, extras=_extras(shape),
        id_key=shape.id_key)


def _read_invoke_call(region: str, found, *, open_literal: str, name: Invoke, shape: XmlParameters, close: str,
                      after_call: tuple[str, ...]) -> list[CallSpan]:
    """The one named element of parameters between open_literal and close (the extent ends the region past close)."""
    end = len(region) - len(close)
    call, position = read_invoke(region, len(open_literal), end, name, shape, call_close=close, after_call=after_call)
    if skip_space(region, position) != end:
        raise CallSyntaxError(f"expected {close} at offset {skip_space(region, position)}: one function per block")
    return [CallSpan(call, 0, len(region))]


def _read_invoke_section(region: str, found, *, open_literal: str, name: Invoke, shape: XmlParameters,
                         close: str) -> list[CallSpan]:
    """The named elements of parameters between a section's open_literal and close, one span each."""
    # Each element is read as a bare one: another element, not the section's closer, may follow it.
    return element_spans(region, len(open_literal), len(region) - len(close), name.open,
                         lambda text, at, end: read_invoke(text, at, end, name, shape),
                         none=f"no {name.open}NAME{name.name_close} in the section",
                         expected=f"expected {name.open} or {close}")


def _named_call_reader(wire: WireShape):
    """The reader of one call's body in a section: the name up to its closing literal, a JSON object, the closer."""
    name, close = wire.name, wire.call.close
    # A call's number after the name (Kimi's ":0"): any number is read there; an id where declared.
    pattern = name.pattern()

    def read_call(region: str, index: int, found) -> tuple[ParsedToolCall, str | None, int]:
        call_id = None
        if wire.call_id is not None:  # the id runs up to its closing literal, on the same line
            end = region.find(wire.call_id.close, index)
            if end == -1 or not region[index:end] or any(char in " \t\r\n<>" for char in region[index:end]):
                raise CallSyntaxError(f"expected a call id and {wire.call_id.close} at offset {index}")
            call_id, index = region[index:end], end + len(wire.call_id.close)
        named = pattern.match(region, index)
        if named is None:
            raise CallSyntaxError(f"expected {name.open}NAME{name.close} at offset {index}")
        call_id = named.group(2) or call_id
        arguments, position = json_object_at(region, named.end(), named.group(1), found)
        if not isinstance(arguments, dict):
            raise CallSyntaxError(f"the arguments of {named.group(1)!r} must be a JSON object")
        after = expect(region, position, close, "after the arguments")
        return ParsedToolCall(named.group(1), arguments), call_id, after

    return read_call


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _extras(shape: JsonArguments) -> dict | None:
    """The extra keys a call object may hold: the declared ones, and the id key (any string) when not among them."""
    extras = dict(shape.extras)
    if shape.id_key is not None:
        extras.setdefault(shape.id_key, _is_text)
    return extras or None
