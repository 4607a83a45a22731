"""Malformed variants of a format's calls, generated from its declared wire shape (issue 23, item 3).

A call the format writes (``write_call``) and its samples are cut into
pieces at the literals its ``WireShape`` declares (the section's, the
call's, the name's and the arguments' literals, and the JSON keys it
names); every piece is then dropped, duplicated, swapped with the next,
re-cased, re-quoted (``"`` to ``'``) and spaced (a space before, after and
inside it), and the text is cut at every point. ``variants(fmt)`` yields
``Variant``s: the text, what was done, and the offset of the first marker
when the change left it whole where it stood (None when the change touched
the marker itself).

The rule the property test holds every variant to is ``settled``: a
variant whose marker stands whole must be read (calls, or a reply cut
inside a call) or raise ``UnparsedToolCall``; coming back as plain text is
what it may not do. Formats whose calls open on plain text (``{``, ``[``,
a bare word: ``guards.opens_on_plain_text``) are not held to it, since
their marker alone commits to nothing; their near misses stand for them.
Formats without a declared wire have no pieces and get only the cuts.

The reasoning block's own literals are not pieces of a call: a call
literal that also stands in them (Apriel's list bracket in its
``[BEGIN FINAL RESPONSE]``, Inkling's ``<|end_message|>`` that closes the
block and the call's message alike) is changed only where the call writes
it. A damaged reasoning closer is another malformation with its own rule
(everything after it is reasoning, a call included; never content), held by
``test_a_damaged_reasoning_closer_leaves_the_call_in_the_reasoning``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from templatestudio import ParsedToolCall, UnparsedToolCall, read_tool_calls
from templatestudio.guards import opens_on_plain_text
from templatestudio.wire.base import Format

CALL = ParsedToolCall("get_weather", {"city": "Paris", "days": 3})


@dataclass(frozen=True)
class Variant:
    """A malformed (or cut) form of one call text."""

    text: str
    change: str
    marker_at: int | None  # where the base's first marker still stands whole, else None


def _strings(part: object) -> list[str]:
    """Every literal a declared part holds (its string fields, and the strings of its tuples)."""
    if not dataclasses.is_dataclass(part):
        return []
    found = []
    for item in dataclasses.fields(part):
        value = getattr(part, item.name)
        if item.name in ("chars", "values", "why", "head", "tail", "after", "between", "index"):
            continue  # patterns, kinds, reasons and layout, not literals
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, tuple):
            found += [entry for entry in value if isinstance(entry, str)]
        elif dataclasses.is_dataclass(value):
            found += _strings(value)
    return found


def pieces(fmt: Format) -> list[str]:
    """The literals a call of fmt is cut at: its declared ones, longest first, JSON keys quoted."""
    wire = fmt.wire
    if wire is None:
        return []
    found: list[str] = []
    for part in (wire.section, wire.call, wire.name, wire.arguments, wire.call_id):
        found += _strings(part)
    keys = [f'"{key}"' for key in found if key.isidentifier()]  # NameKey/JsonArguments keys
    found = [item for item in found if item.strip() and not item.isidentifier()] + keys
    return sorted(dict.fromkeys(found), key=len, reverse=True)


def reasoning_spans(text: str, fmt: Format) -> list[tuple[int, int]]:
    """Where the reasoning blocks' own opener and closer stand in text (each pair's first block)."""
    found = []
    for opener, closer in fmt.reasoning_pairs:
        start = text.find(opener)
        end = text.find(closer, start + len(opener)) if start != -1 else -1
        if end != -1:
            found += [(start, start + len(opener)), (end, end + len(closer))]
    return found


def _spans(text: str, literals: list[str], protected: list[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Non-overlapping occurrences of the literals in text, longest literal first, in text order,
    none inside a protected span (the reasoning block's literals)."""
    taken: list[tuple[int, int]] = list(protected)
    for literal in literals:
        start = text.find(literal)
        while start != -1:
            end = start + len(literal)
            if all(end <= a or start >= b for a, b in taken):
                taken.append((start, end))
            start = text.find(literal, start + 1)
    return sorted(span for span in taken if span not in protected)


def bases(fmt: Format) -> list[str]:
    """The call texts variants are made of: what write_call writes, and the samples holding calls."""
    texts = []
    try:
        texts.append(fmt.write_call(CALL))
    except Exception:  # noqa: BLE001 - a format that writes no such call still has its samples
        pass
    texts += [sample.text for sample in fmt.samples if sample.calls]
    return list(dict.fromkeys(texts))


def call_markers(fmt: Format) -> tuple[str, ...]:
    """The markers that open a call or a section of calls: the declared ones less the framing."""
    framing = set(fmt.wire.framing) if fmt.wire is not None else set()
    return tuple(marker for marker in fmt.markers if marker not in framing)


def _first_marker(text: str, fmt: Format) -> tuple[int, str] | None:
    """The first call marker in text that opens a call: not one its framing follows (Inkling's
    ``<|message_model|>`` starts a text message when ``<|content_text|>`` follows it)."""
    framing = tuple(fmt.wire.framing) if fmt.wire is not None else ()
    found = []
    for marker in call_markers(fmt):
        at = text.find(marker)
        while at != -1 and framing and text.startswith(framing, at + len(marker)):
            at = text.find(marker, at + 1)
        if at != -1:
            found.append((at, marker))
    return min(found) if found else None


def variants(fmt: Format) -> Iterator[Variant]:
    """Every malformed and cut variant of every base text of fmt (see the module docstring)."""
    literals = pieces(fmt)
    for base in bases(fmt):
        first = _first_marker(base, fmt)
        spans = _spans(base, literals, reasoning_spans(base, fmt))

        def made(text: str, change: str, touched: tuple[int, int] | None) -> Variant:
            if first is None:
                return Variant(text, change, None)
            at, marker = first
            whole = text[at : at + len(marker)] == marker
            hit = touched is not None and touched[0] < at + len(marker) and touched[1] > at
            return Variant(text, change, at if whole and not hit else None)

        for index, (start, end) in enumerate(spans):
            piece = base[start:end]
            before, after = base[:start], base[end:]
            yield made(before + after, f"drop {piece!r}", (start, end))
            yield made(before + piece + piece + after, f"duplicate {piece!r}", (start, end + 1))
            yield made(before + " " + piece + after, f"space before {piece!r}", (start, start + 1))
            yield made(before + piece + " " + after, f"space after {piece!r}", (end, end))
            if len(piece) > 2:
                middle = len(piece) // 2
                yield made(before + piece[:middle] + " " + piece[middle:] + after, f"space inside {piece!r}",
                           (start, end))
            if piece.swapcase() != piece:
                yield made(before + piece.swapcase() + after, f"re-case {piece!r}", (start, end))
            if '"' in piece:
                yield made(before + piece.replace('"', "'") + after, f"re-quote {piece!r}", (start, end))
            if index + 1 < len(spans):
                start2, end2 = spans[index + 1]
                swapped = base[:start] + base[start2:end2] + base[end:start2] + piece + base[end2:]
                yield made(swapped, f"swap {piece!r} with {base[start2:end2]!r}", (start, end2))
        if '"' in base:
            yield made(base.replace('"', "'"), "re-quote everything", None)
        for cut in range(1, len(base)):
            yield made(base[:cut], f"cut at {cut}", None)


def _may_be_framed(fmt: Format, variant: Variant) -> bool:
    """Whether the text after a cut variant's marker may still grow into one of the format's framing literals."""
    framing = fmt.wire.framing if fmt.wire is not None else ()
    at, marker = variant.marker_at, _first_marker(variant.text, fmt)
    if marker is None or marker[0] != at:
        return False
    rest = variant.text[at + len(marker[1]) :]
    return any(tag.startswith(rest) for tag in framing)


def settled(fmt: Format, variant: Variant) -> str | None:
    """Why the variant breaks the rule (see the module docstring); None when it does not."""
    if variant.marker_at is None or opens_on_plain_text(fmt):
        return None
    stops = fmt.wire.stop_tokens if fmt.wire is not None else ()
    if variant.change.startswith("cut at") and stops and variant.text.endswith(stops):
        return None  # a reply cut right after its stop token ended there (GigaChat's <|message_sep|> ends a message)
    if variant.change.startswith("cut at") and _may_be_framed(fmt, variant):
        return None  # cut where the marker's message may still be one the framing opens (an answer, thinking)
    try:
        reply = read_tool_calls(variant.text, fmt)
    except UnparsedToolCall:
        return None
    if reply.calls or reply.cut is not None:
        return None
    return f"{variant.change}: came back as text {variant.text!r}"
