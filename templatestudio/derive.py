"""A wire shape no module declares, derived from the chat template alone, and used only if it round-trips.

``derive_format(source)`` renders the template's call turn for calls that
differ in one thing at a time (``derive_renders``: another name, a second
argument, a second call, a typed value) and reads the declaration off the
differences (``derive_text``): where the name sits, how the arguments are
written (a JSON call object, a JSON object after the name, the keyed-values
grammar, key/value element pairs, XML-style parameters inside a named
element), where the call's id or number stands, the literals around one
call, what stands between two, a section around them, and the reasoning
block. The result is
a ``wire.shape.WireShape`` in the same language a format module declares,
so reader, writer, markers, holdback and reasoning split come from it the
same way (``Format.declared``).

Nothing is guessed: a derived shape is used only when its reader reads back
exactly every call the template rendered for it, leaving nothing but
whitespace beside them, and its writer writes each single call back to the
very text the template wrote (``derive_trust``). Otherwise, and whenever the
renders do not pin one shape down, ``NoToolCallFormat`` says what failed.

Not handled (each refused with its reason): Python-call syntax and
Python-literal arguments, ids a template makes itself (Command R7B's
index), calls separated by text other than whitespace with no list around
them, a call turn written otherwise alone than beside another call, layout
that differs with the number of arguments, and hand-written framing
(harmony's channels). Values that hold the shape's own boundary in an
XML-style format are not tried (nothing escapes them; the registered
formats list that as a wire limit).
"""

from __future__ import annotations

from dataclasses import dataclass

from templatestudio.calls import NoToolCallFormat
from templatestudio.derive_renders import renders_of
from templatestudio.derive_text import derive_shape
from templatestudio.derive_trust import refusal_of_round_trip
from templatestudio.formats import Format
from templatestudio.probe import as_template
from templatestudio.wire.shape import ShapeError, WireShape

__all__ = ["DerivedShape", "derive_format", "derive_shape", "derived_format"]


@dataclass(frozen=True)
class DerivedShape:
    """What derivation found in one template: the shape, why there is none, or the sandbox's stop (one is set).

    stopped is set only where the derivation ran sandboxed
    (``detect.derived_shape``) and was stopped at its deadline or memory cap,
    as ``KIND: message``: it did not end, so it says neither.
    """

    template: str
    wire: WireShape | None
    refused: str | None = None
    stopped: str | None = None


def derive(source) -> DerivedShape:
    """The shape the template writes its calls in, checked by round trip; never raises on a template's refusal."""
    template = as_template(source)
    try:
        renders = renders_of(template)
        wire = derive_shape(renders)
    except NoToolCallFormat as error:
        return DerivedShape(template.name, None, str(error))
    try:
        fmt = derived_format(wire, template.name)
    except ShapeError as error:  # the language says it; no reader is derived for it yet
        return DerivedShape(template.name, None, f"the renders show {wire.describe().splitlines()[-1]}"
                            f"{' in a section' if wire.section else ''}, but {error}")
    refused = refusal_of_round_trip(wire, renders, fmt)
    if refused is not None:
        return DerivedShape(template.name, None, f"the derived shape does not round-trip: {refused}")
    return DerivedShape(template.name, wire)


def derived_format(wire: WireShape, template_name: str) -> Format:
    """The Format of a derived shape: every part from the declaration, marked as derived from template_name."""
    return Format.declared(
        wire,
        name=f"derived:{template_name}",
        description=f"derived from {template_name}'s chat template: {wire.describe().splitlines()[-1]}",
        response_template=None,
        no_response_template="a derived format has no response template",
        samples=(),
        near_misses=(),
        wire_limits=(),
        corpus_labels=(),
        string_arguments=wire.values_are_text,
        derived_from=template_name,
    )


def derive_format(source) -> Format:
    """The derived Format of a template source, a ChatTemplate or a tokenizer; NoToolCallFormat saying why not.

    In-process: use ``detect_format(..., derive=True)`` for templates from
    strangers, which derives in the probe's sandbox.
    """
    found = derive(source)
    if found.wire is None:
        raise NoToolCallFormat(f"{found.template}: no wire shape derived: {found.refused}")
    return derived_format(found.wire, found.template)
