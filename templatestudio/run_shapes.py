"""A format's run shape, derived once from its writer by declared rules.

``run_shape`` gives the ``canonical_runs.RunShape`` of a format for a
machine that watches a given set of literals, or None. The rules, each
shown on a format made to break it by ``tests/test_canonical_runs.py``:

- the writer is deterministic and writes ``json.dumps`` of the arguments
  once, after the name (``derive``; a call with a sentinel name and
  arguments, cut where they stand, gives the patterns);
- the format's own reader reads the written call back whole, as the one
  call it is, with an id that holds the name at most once; that is also
  how the id a run gives each call is known (``_writer_facts``);
- the call opens at a literal the format owns (its opener is tried first
  there), the longest watched literal that starts the call, and no longer
  watched literal starts with the text before the name;
- calls of a run are separated by the ``SEPARATOR_CHOICES`` that no
  watched literal starts with.

That the general machine then reads runs as the shape predicts is not
checked here, nor anywhere at run time: the tests check it at build time
for every registered format. Not handled: a format built outside the
registry whose reader refuses some calls its own writer writes (a name
``canonical_runs.NAME`` allows, a JSON object) gets a shape all the same;
read it with ``Machine(fmt, runs=False)``.
"""

from __future__ import annotations

import functools
import json
import re

from templatestudio.calls import ParsedToolCall
from templatestudio.canonical_runs import ARGUMENTS_LIMIT, NAME, SEPARATOR_LIMIT, RunShape
from templatestudio.wire.base import CallSyntaxError, Format

SENTINEL_NAME = "zqNAMEqz"
SENTINEL_ARGUMENTS = {"zqKEYqz": "zqVALUEqz"}
# Between two calls of a run: whitespace, and the "; " Llama 3.1's template
# puts between calls it writes on one line. Only those that no watched
# literal starts with (see run_shape), so the general machine keeps them as text.
SEPARATOR_CHOICES = " \t\r\n;"
_JSON_PUNCTUATION = "{}[],: \t\r\n"
# Arguments with no brace inside them (flat objects, strings without braces):
# one class run, the fastest thing the regex engine does. Whether they are
# valid JSON, and one value each, is for the decoder to say (RunShape._decoded).
# At most ARGUMENTS_LIMIT characters, so one failed try reads a bounded stretch.
_FLAT_OBJECT = r"\{[^{}\n]{0,%d}+\}" % (ARGUMENTS_LIMIT - 2)


def written(fmt: Format, name: str = SENTINEL_NAME, arguments: dict | None = None) -> str:
    return fmt.write_call(ParsedToolCall(name, dict(SENTINEL_ARGUMENTS if arguments is None else arguments)))


def run_shape(fmt: Format, owners: dict[str, Format]) -> RunShape | None:
    """fmt's run shape for a machine that watches the literals of owners, or None when the rules give none.

    owners maps each literal the machine searches for to the format whose
    opener it tries first there. The written call must open at a literal
    that fmt owns, the longest that starts it, and no longer literal may
    start with the text before the name (the machine would wait for it);
    a separator character may not start any literal. The rest depends on
    fmt alone (``_writer_facts``).
    """
    facts = _writer_facts(fmt)
    if facts is None:
        return None
    head, id_parts = facts
    opening = max((literal for literal in owners if head.startswith(literal)), key=len, default=None)
    if opening is None or owners[opening] is not fmt:
        return None
    if any(len(literal) > len(head) and literal.startswith(head) for literal in owners):
        return None
    separators = "".join(char for char in SEPARATOR_CHOICES
                         if not any(literal.startswith(char) for literal in owners))
    return derive(fmt, separators, id_parts)


@functools.cache
def _writer_facts(fmt: Format) -> tuple[str, tuple[str, str] | tuple[str] | None] | None:
    """(the text before the name, the id parts) of fmt's written sentinel call, or None.

    The format's own reader reads the call its writer writes, once, as
    the machine would hand it over (the whole call as the region, from the
    opener whose literal starts it, nothing found by an extent): it must
    give exactly that call, spanning the region, with an id that holds the
    name at most once. That is also how the id a call gets is known.
    """
    text = written(fmt)
    if derive(fmt, "", None) is None:
        return None
    starting = [item for item in fmt.openers if text.startswith(item.literal)]
    if not starting:
        return None
    longest = max(len(item.literal) for item in starting)
    # Of the openers at that literal, the first whose reader takes the call: the one whose
    # pattern opens there in the machine (harmony's stray-header opener, tried first, does not).
    spans = None
    for opener in (item for item in starting if len(item.literal) == longest):
        try:
            spans = fmt.read_region(text, opener, None)
        except CallSyntaxError:
            continue
        if spans:
            break
    if (not spans or len(spans) != 1 or (spans[0].start, spans[0].end) != (0, len(text))
            or spans[0].call != ParsedToolCall(SENTINEL_NAME, SENTINEL_ARGUMENTS)):
        return None
    ident = spans[0].id
    if ident is not None and ident.count(SENTINEL_NAME) > 1:
        return None
    id_parts = None if ident is None else tuple(ident.split(SENTINEL_NAME))  # one piece: a fixed id
    return text.split(SENTINEL_NAME)[0], id_parts


@functools.cache
def derive(fmt: Format, separators: str, id_parts: tuple[str, str] | tuple[str] | None) -> RunShape | None:
    """The run shape of fmt's writer with these separator characters, or None when it has none.

    None when the writer is not deterministic, does not write the
    arguments as ``json.dumps`` does, or writes the name after them.
    """
    text = written(fmt)
    if written(fmt) != text:
        return None
    arguments = json.dumps(SENTINEL_ARGUMENTS, ensure_ascii=False)
    if text.count(arguments) != 1:
        return None
    before, after = text.split(arguments)
    if SENTINEL_NAME not in before or SENTINEL_NAME in after:
        return None
    pieces = before.split(SENTINEL_NAME)
    head = re.escape(pieces[0]) + f"(?P<name>{NAME})" + "(?P=name)".join(map(re.escape, pieces[1:]))
    space = f"[{re.escape(separators)}]{{0,{SEPARATOR_LIMIT}}}" if separators else ""
    # A closing tag inside the arguments may end the general reader's region
    # early (some extents look for it as text): such calls are left to it.
    # Closers that are JSON punctuation ("}", "]") are where the JSON ends.
    markers = sorted({closer for closer in fmt.closers if closer.strip(_JSON_PUNCTUATION)}, key=len, reverse=True)
    return RunShape(
        head=re.compile(head + r"(?=\{)"),
        tail=re.compile(re.escape(after) + f"(?P<separator>{space})"),
        batch=re.compile(f"{head}(?P<arguments>{_FLAT_OBJECT}){re.escape(after)}(?P<separator>{space})|(?s:.+)"),
        fixed_length=len(text) - len(arguments) - len(SENTINEL_NAME) * (len(pieces) - 1),
        name_count=len(pieces) - 1,
        id_parts=id_parts,
        separators=separators,
        forbidden=tuple(markers),
        reach=len(text) + ARGUMENTS_LIMIT + SEPARATOR_LIMIT + 64 * (len(pieces) - 1),
    )


__all__ = ["SENTINEL_ARGUMENTS", "SENTINEL_NAME", "SEPARATOR_CHOICES", "derive", "run_shape", "written"]
