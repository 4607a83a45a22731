"""XML-style parameters: reading ``OPEN KEY NAME_CLOSE value CLOSE`` runs and their element, and where a value ends.

The shape is declared once, as ``wire.arguments.XmlParameters`` (whose
``write`` is the writer) and, for the element named in its opening tag that
holds the parameters (Qwen3-Coder's and Seed-OSS's ``<function=NAME>`` …
``</function>``), any declaration with ``open``, ``name_close`` and
``close`` literals (``wire.shape.Invoke``). This module reads what those
declarations write, the way ``tagged_json`` reads JSON bodies.

No escaping exists on these wires, so a value may hold the wire's own
markers. Where a value ends is decided by what the template writes after
it (``ValueEnds``), the same way here and in the extent that finds the
call's end (``wire.xml_extent.ValueAwareExtent``), so a stream and a whole
reply agree:

- a CLOSE ends the value only when what follows it (after whitespace) is
  the next structure the template writes: another parameter's opening tag,
  or the element's closing tag (and, around it, the call's closer). Any
  other CLOSE, and any other marker (``</function>``, ``<tool_call>``,
  ``</tool_call>``, a tag in mid-line), is the value's text;
- a closer the model left out is recovered where the template's structure
  still stands unmistakably: an opening tag on a line of its own
  (``\\n<parameter=KEY>``) starts the next parameter, and the call's own
  closing (``</function>`` then the call's closer) ends the last value
  where only whitespace and the reply's end, the next call or a stop token
  follow it;
- a value so recovered that also holds a CLOSE that did not end it is
  refused (``CallSyntaxError``): a value holding the closer and a missing
  closer read the same, and neither reading is sure.

Functions: ``read_parameters`` (parameters one after another, whitespace
allowed before each; a value is exactly as written, or with one newline
taken off each end when the shape declares ``newline_inside``; a key given
twice makes the call unreadable), ``read_invoke`` (the named element, its
parameters and its closing tag), ``parameter_ends`` (the rule above, built
from the declarations), ``holds_boundary`` (whether a value written by the
template would end early) and ``xml_limits`` (what such a wire cannot carry).
GLM's arg_key/arg_value wire declares boundaries of its own with
``value_ends`` and reads them with the same ``find_boundary`` and
``checked_value``; the extents of both are ``wire.xml_extent``'s.

Not handled: a value holding the template's boundary itself (a CLOSE then,
after whitespace, an opening tag or the element's and call's closing; a
line that starts with an opening tag): the template writes it exactly as it
writes two parameters, so it is read as the boundary (``wire_limits`` says
so); keys or names holding a character outside ``key_chars`` /
``name_chars`` (by default ``<``, ``>`` and newline); values typed by their
tag (``XmlParameters.typed``, DeepSeek's DSML: still that format's own
reader); around a missing closer, which newlines are the value's and
which the template's layout (the template writes one after each closer,
and Qwen3-Coder one before): the layout is taken, so such a value ending
in a newline may lose it. A boundary still arriving is searched again
from its start with each chunk, so a stream that writes one tag (a key,
GLM's passed-over ``<arg_key>`` run) a character at a time over a very
long stretch does work quadratic in that stretch.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Protocol

import regex

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.arguments import XmlParameters
from templatestudio.wire.base import WS, CallSyntaxError, WireLimit, any_string
from templatestudio.wire.xml_plain import TAG_CHARS, plain_call, plain_element, strip_one_newline

_SPACE = re.compile(f"{WS}*")


class NamedElement(Protocol):
    """An element named in its opening tag: open NAME name_close … close (``wire.shape.Invoke``)."""

    open: str
    name_close: str
    close: str


@dataclass(frozen=True)
class ValueEnds:
    """Where a value on one wire ends: the boundaries the template writes after a value.

    close: the literal that closes a value. pattern: a compiled alternation
    of three named groups, each a boundary found inside a value: ``close``
    (the closer and the structure that must follow it), ``reopen`` (the next
    parameter's opening with the closer left out) and ``end`` (the call's
    closing with the closer left out); reopen_skip: how much of a reopen
    match precedes the tag it stands for (its leading newline). at_markup:
    every boundary starts with a ``<``, or with a newline just before one
    (``value_ends`` sees it in the sources), so text without a ``<`` holds
    none, and none starts before the newline ahead of the first ``<``.
    """

    close: str
    pattern: regex.Pattern
    reopen_skip: int = 0
    at_markup: bool = False


@dataclass(frozen=True)
class Boundary:
    """A value's end: kind (close, reopen, end), where the value stops, and where reading resumes."""

    kind: str
    value_end: int
    resume: int


def value_ends(close: str, follows: str, reopen: str | None = None, end: str | None = None,
               reopen_skip: int = 0) -> ValueEnds:
    """ValueEnds from regex sources: close (a literal), what must follow it, and the two recoveries."""
    parts = [f"(?P<close>{re.escape(close)}{WS}*(?:{follows}))"]
    if reopen:
        parts.append(f"(?P<reopen>{reopen})")
    if end:
        parts.append(f"(?P<end>{end})")
    at_markup = close.startswith("<") and all(_starts_at_markup(source) for source in (reopen, end) if source)
    return ValueEnds(close, regex.compile("|".join(parts)), reopen_skip, at_markup)


def _starts_at_markup(source: str) -> bool:
    """Whether every match of the regex source starts with a ``<``, or with a newline just before one."""
    return source.startswith(("<", "\n<", "\n?<", "\\n<", "\\n?<"))  # a newline, or the regex escape for one


@functools.lru_cache(maxsize=None)
def parameter_ends(shape: XmlParameters, element_close: str, call_close: str | None,
                   after_call: tuple[str, ...] = (), key_chars: str = TAG_CHARS) -> ValueEnds:
    """The boundaries of a value inside an element closed by element_close, itself inside call_close (or bare).

    What the templates write after a value: whitespace, then the next
    ``OPEN KEY NAME_CLOSE`` or the element's closing tag (followed, in a
    wrapped call, by whitespace and the call's closer). A last value
    missing its closer is ended by the element's and the call's closing
    only where nothing but whitespace and then the reply's end or one of
    after_call (the next call's opening, a stop token) follows: a value's
    text may hold that closing too. Without a wrapper the element's closing
    tag is the call's end, and a missing closer there is not recovered.
    """
    tag = f"{re.escape(shape.open)}{key_chars}+{re.escape(shape.name_close)}"
    finish = re.escape(element_close) + (f"{WS}*{re.escape(call_close)}" if call_close else "")
    then = "|".join(["\\Z", *(re.escape(literal) for literal in after_call)])
    # A last value missing its closer: the newline the template writes after
    # a closer is layout, not the value's (with newline_inside, the one
    # newline taken off each end is already that).
    layout = "" if shape.newline_inside else "\n?"
    return value_ends(shape.close, f"{tag}|{finish}", reopen=f"\n{tag}",
                      end=f"{layout}{finish}{WS}*(?:{then})" if call_close else None, reopen_skip=1)


def find_boundary(text: str, position: int, stop: int, ends: ValueEnds, final: bool) -> Boundary | int:
    """The first boundary in text[position:stop] of a value that runs from position, or where to look again.

    An int is the offset to resume from when the text so far cannot tell
    (a boundary may be arriving, or none is there yet); with final the text
    is all there is, and -1 says no boundary stands in it.
    """
    if ends.at_markup:
        # The first "<" bounds where a boundary can start: at it, or at a newline just before it.
        markup = text.find("<", position, stop)
        if markup == -1:
            if final:
                return -1
            return stop - 1 if stop > position and text[stop - 1] == "\n" else stop
        if markup - 1 > position:
            position = markup - 1
    found = ends.pattern.search(text, position, stop, partial=not final)
    if found is None:
        return -1 if final else stop
    if found.partial or (not final and found.end() == stop):
        # Still arriving, or whole but a longer text might read it otherwise
        # (an end of the reply that a stream has not reached yet).
        return found.start()
    at = found.start()
    if found.group("close") is not None:
        return Boundary("close", at, at + len(ends.close))
    if found.group("reopen") is not None:
        return Boundary("reopen", at, at + ends.reopen_skip)
    return Boundary("end", at, at)


def checked_value(region: str, start: int, boundary: Boundary, ends: ValueEnds, key: str) -> str:
    """region[start:boundary.value_end], refused when a missing closer and a held closer read the same."""
    value = region[start : boundary.value_end]
    if boundary.kind != "close" and ends.close in value:
        held = start + value.index(ends.close)
        raise CallSyntaxError(
            f"the value of {key!r} holds {ends.close} at offset {held} that does not end it, and has no "
            f"{ends.close} of its own: a value holding the closer and a missing closer read the same"
        )
    return value


@functools.lru_cache(maxsize=None)
def _tag(open_literal: str, close_literal: str, inner: str) -> re.Pattern:
    """Whitespace, then open_literal, one or more inner characters (group 1) and close_literal."""
    return re.compile(f"{WS}*{re.escape(open_literal)}({inner}+){re.escape(close_literal)}")


def read_parameters(
    region: str, position: int, end: int, shape: XmlParameters, *, key_chars: str = TAG_CHARS,
    ends: ValueEnds | None = None,
) -> tuple[dict[str, str], int]:
    """The parameters from position on (region[:end] only) and the offset after them and the whitespace that follows.

    ends: where a value ends (``parameter_ends``); by default the closer
    followed by the next opening tag or any closing tag (``</``), for a
    run read on its own. Reading stops where no further parameter opens;
    the caller checks what stands there. Values are text: the format's
    ``string_arguments`` types them against the tool's schema.
    """
    ends = ends or _loose_ends(shape, key_chars)
    opening = _tag(shape.open, shape.name_close, key_chars)
    strip = shape.newline_inside
    arguments: dict[str, str] = {}
    while (parameter := opening.match(region, position, end)) is not None:
        key = parameter.group(1)
        boundary = find_boundary(region, parameter.end(), end, ends, True)
        if not isinstance(boundary, Boundary):
            raise CallSyntaxError(f"the value of {key!r} has no {shape.close} that ends it")
        if key in arguments:
            raise CallSyntaxError(f"parameter {key!r} is given twice")
        value = checked_value(region, parameter.end(), boundary, ends, key)
        arguments[key] = strip_one_newline(value) if strip else value
        position = boundary.resume
    return arguments, _SPACE.match(region, position, end).end()


@functools.lru_cache(maxsize=None)
def _loose_ends(shape: XmlParameters, key_chars: str) -> ValueEnds:
    tag = f"{re.escape(shape.open)}{key_chars}+{re.escape(shape.name_close)}"
    return value_ends(shape.close, f"{tag}|</|\\Z", reopen=f"\n{tag}", reopen_skip=1)


def read_invoke(
    region: str, position: int, end: int, name: NamedElement, shape: XmlParameters, *,
    name_chars: str = TAG_CHARS, no_head: str | None = None, call_close: str | None = None,
    after_call: tuple[str, ...] = (),
) -> tuple[ParsedToolCall, int]:
    """The element at position (whitespace first) in region[:end], and the offset just past its closing tag.

    call_close: the call's closer that stands after the element (whitespace
    between), when region[end:] starts with it, and after_call what may
    follow a call: values end by ``parameter_ends`` of that wrapping. no_head: the refusal when no
    opening tag stands there (a format's own words); by default "no OPEN
    NAME NAME_CLOSE at offset N".
    """
    # A wrapped call's values see the call's closer, which lies past end.
    stop = end + len(call_close) if call_close else end
    whole = plain_element((name.open, name.name_close, name.close), shape, call_close, name_chars).match(
        region, position, stop)
    if whole is not None and (call_close is None or whole.group("closer") is not None):
        return plain_call(whole, shape), whole.end("element")
    return read_invoke_searched(region, position, end, name, shape, name_chars=name_chars, no_head=no_head,
                                call_close=call_close, after_call=after_call)


def read_invoke_searched(
    region: str, position: int, end: int, name: NamedElement, shape: XmlParameters, *,
    name_chars: str = TAG_CHARS, no_head: str | None = None, call_close: str | None = None,
    after_call: tuple[str, ...] = (),
) -> tuple[ParsedToolCall, int]:
    """``read_invoke`` with each value's end searched for: what its one match (``xml_plain``) stands for."""
    stop = end + len(call_close) if call_close else end
    head = _tag(name.open, name.name_close, name_chars).match(region, position, end)
    if head is None:
        at = _SPACE.match(region, position, end).end()
        raise CallSyntaxError(no_head or f"no {name.open}NAME{name.name_close} at offset {at}")
    ends = parameter_ends(shape, name.close, call_close, after_call)
    arguments, position = read_parameters(region, head.end(), stop, shape, ends=ends)
    if not region.startswith(name.close, position):
        raise CallSyntaxError(f"expected {name.close} or another parameter at offset {position}")
    return ParsedToolCall(head.group(1), arguments), position + len(name.close)


def holds_boundary(value: str, head: str, ends: ValueEnds, tail: str) -> bool:
    """Whether value, written as head + value + tail, meets a boundary before its own end.

    head: the opening tag the reader reads the value after; value: what the
    writer puts between it and the closer (layout newlines included);
    tail: the closer and what follows it, as the template writes them. A
    boundary can reach past the value into tail only as the writer's own
    closer, so one tail stands for all.
    """
    text = f"{head}{value}{tail}"
    boundary = find_boundary(text, len(head), len(text), ends, True)
    own_end = len(head) + len(value)
    return not isinstance(boundary, Boundary) or boundary.kind != "close" or boundary.value_end != own_end


def xml_limits(shape: XmlParameters, element_close: str, call_close: str | None, non_string: str,
               after_call: tuple[str, ...] = ()) -> tuple[WireLimit, ...]:
    """What the declared parameters cannot carry: a value holding a boundary, a key the tag cannot hold, a non-string.

    non_string says what the wire does with a value that is not a string
    (the writer spells it as text; the reader cannot tell it was not one).
    """
    ends = parameter_ends(shape, element_close, call_close, after_call)
    pad = "\n" if shape.newline_inside else ""
    head = f"{shape.open}k{shape.name_close}"
    tail = f"{shape.close}{shape.after}{element_close}" + (f"\n{call_close}" if call_close else "")
    finish = element_close + (f" {call_close}" if call_close else "")
    return (
        WireLimit(f"a string holding what the template writes between two parameters ({shape.close}, then "
                  f"{shape.open}KEY{shape.name_close} or {finish}; a line starting {shape.open}KEY{shape.name_close}): "
                  f"it ends the value",
                  lambda arguments: any_string(
                      arguments, lambda s: holds_boundary(f"{pad}{s}{pad}", head, ends, tail))),
        WireLimit("a key that is empty or holds <, > or a newline: the tag cannot hold it",
                  lambda arguments: any(not key or any(c in key for c in "<>\n") for key in arguments)),
        WireLimit(f"a value that is not a string: {non_string}",
                  lambda arguments: any(not isinstance(value, str) for value in arguments.values())),
    )
