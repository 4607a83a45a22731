"""Reading DeepSeek's DSML blocks: one reader for every declared DSML shape.

DeepSeek V3.2, V4 and V4.1 write the same grammar with different tag
spellings (the block's name, a space after the ``｜DSML｜`` token)::

    BLOCK head (INVOKE NAME NAME_END head (PARAMETER KEY TYPED VALUE PARAMETER_END after)* INVOKE_END sep)* BLOCK_END

Every literal comes from the format's ``WireShape``: the section is the
block, the ``Invoke`` the invoke element, the ``XmlParameters`` (with
``typed``) the parameters, so this module names no marker of its own. A
``typed[0]`` value is the text between the tags exactly as written, a
``typed[1]`` value is one JSON value (whitespace around it allowed); a key
ends at the first of the two typed closers, a name at the invoke's
``name_close`` on the same line. Refused, each with its own message: a type
attribute other than the two, JSON that does not decode, a parameter given
twice, an empty name, text between the tags, a block with no invoke, a
block that never closes.

``self_closed``: a further literal that ends an invoke with no parameters
right after its name (``<…invoke name="NAME"/>``), read and never written,
for a format whose models are seen writing it.

Not handled: escaping (the wire has none), so a key holding a typed
closer, a name holding its closer, and values holding the parameter's or
the block's closer are wire limits (``wire_limits``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import literal
from templatestudio.wire.base import SPACES, CallSyntaxError, Opener, WireLimit, any_string, opener_pattern
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import decode_whole, skip_space
from templatestudio.wire.arguments import Invoke, XmlParameters
from templatestudio.wire.envelope import ShapeError

# ``wire`` below is a ``wire.shape.WireShape``; the name is not imported, as
# shape.py reaches this module through ``wire.shape_reader`` (a derived DSML shape).


@dataclass(frozen=True)
class Tags:
    """The literals of one DSML shape, taken from its declaration."""

    block: str
    block_end: str
    invoke: str
    name_end: str
    invoke_end: str
    parameter: str
    parameter_end: str
    string_close: str  # ends a key whose value is text
    json_close: str  # ends a key whose value is JSON
    self_closed: str | None = None

    @classmethod
    def of(cls, wire: WireShape, self_closed: str | None = None) -> Tags:  # noqa: F821 - see the import note
        name, arguments = wire.name, wire.arguments
        if wire.section is None or not isinstance(name, Invoke) or not (
            isinstance(arguments, XmlParameters) and arguments.typed
        ):
            raise ShapeError("a DSML shape is a section of Invoke elements with typed XmlParameters")
        return cls(wire.section.open, wire.section.close, name.open, name.name_close, name.close,
                   arguments.open, arguments.close, *arguments.typed, self_closed)

    @property
    def attribute(self) -> str:
        """What both typed closers start with (`` string="``): a tag holding it but neither closer has another type."""
        return os.path.commonprefix([self.string_close, self.json_close])

    @property
    def typed(self) -> re.Pattern:
        return re.compile(f"{re.escape(self.string_close)}|{re.escape(self.json_close)}")


def _name(region: str, index: int, tags: Tags) -> tuple[str, int, bool]:
    """The invoke's name starting at index, the offset past its closer, and whether that closer ended the invoke."""
    line_end = region.find("\n", index)
    line_end = len(region) if line_end == -1 else line_end
    ends = [(region.find(tags.name_end, index, line_end), tags.name_end, False)]
    if tags.self_closed:
        ends.append((region.find(tags.self_closed, index, line_end), tags.self_closed, True))
    found = sorted(end for end in ends if end[0] != -1)
    if not found:
        raise CallSyntaxError(f"the invoke at offset {index} has no closing {tags.name_end!r} on its line")
    at, closer, closed = found[0]
    if at == index:
        raise CallSyntaxError(f"the invoke at offset {index} has an empty name")
    return region[index:at], at + len(closer), closed


def _parameters(region: str, position: int, tags: Tags) -> tuple[dict, int]:
    """The parameters from position on, and the offset where the next non-parameter text starts."""
    arguments: dict = {}
    typed = tags.typed
    while region.startswith(tags.parameter, position):
        key_start = position + len(tags.parameter)
        match = typed.search(region, key_start)
        cut = region.find(tags.parameter_end, key_start)
        if match is None or (cut != -1 and cut < match.start()):
            attribute = region.find(tags.attribute, key_start)
            if attribute != -1 and (cut == -1 or attribute < cut):
                raise CallSyntaxError(f"the parameter at offset {position} has a type other than "
                                      f"{tags.string_close!r} or {tags.json_close!r}")
            raise CallSyntaxError(f"the parameter at offset {position} has no {tags.string_close!r} "
                                  f"or {tags.json_close!r}")
        key = region[key_start : match.start()]
        if tags.parameter in key:
            raise CallSyntaxError(f"the parameter at offset {position} is not closed before the next one opens")
        value_end = region.find(tags.parameter_end, match.end())
        if value_end == -1:
            raise CallSyntaxError(f"the value of {key!r} has no {tags.parameter_end}")
        if key in arguments:
            raise CallSyntaxError(f"parameter {key!r} is given twice")
        raw = region[match.end() : value_end]
        arguments[key] = raw if match.group() == tags.string_close else decode_whole(raw, 0, len(raw))
        position = skip_space(region, value_end + len(tags.parameter_end))
    return arguments, position


def _invoke(region: str, index: int, tags: Tags) -> tuple[ParsedToolCall, int]:
    """The invoke whose name starts at index (just past the invoke literal) and the offset past its end."""
    name, position, closed = _name(region, index, tags)
    if closed:
        return ParsedToolCall(name, {}), position
    arguments, position = _parameters(region, skip_space(region, position), tags)
    if not region.startswith(tags.invoke_end, position):
        raise CallSyntaxError(f"expected {tags.parameter} or {tags.invoke_end} at offset {position}")
    return ParsedToolCall(name, arguments), position + len(tags.invoke_end)


def reader(tags: Tags):
    """The region reader: a whole block (the extent ends it just past its closer), every invoke in it."""

    def read_region(region: str, opener: Opener, found) -> list[CallSpan]:
        end = len(region) - len(tags.block_end)
        body = region[:end]
        position = skip_space(region, len(tags.block))
        spans = []
        while position < end and region.startswith(tags.invoke, position):
            call, position = _invoke(body, position + len(tags.invoke), tags)
            spans.append(CallSpan(call, 0, len(region)))
            position = skip_space(region, position)
        if position != end:
            raise CallSyntaxError(f"expected {tags.invoke} or {tags.block_end} at offset {position}")
        if not spans:
            raise CallSyntaxError(f"the block at offset 0 holds no {tags.invoke}")
        return spans

    return read_region


def opener(tags: Tags) -> Opener:
    """The block's literal followed by whitespace and a tag: the block named in prose opens nothing.

    Any tag, not only the invoke: a block holding a misspelt tag (another
    DSML version's) is a call the reader refuses, not text shown to the user.
    """
    return Opener(tags.block, opener_pattern(tags.block, SPACES, literal("<")),
                  lambda: TagExtent(len(tags.block), tags.block_end))


def response_template(tags: Tags, start_anchor: str, thinking: tuple[str, str], end: str) -> dict:
    """The response template transformers can read the block with (values as text; see wire_limits)."""
    e = re.escape
    return {
        "defaults": {"role": "assistant"},
        "start_anchor": start_anchor,
        "fields": {
            "thinking": {"open": thinking[0], "close": thinking[1], "content": "text"},
            "tool_calls": {
                "open_pattern": f'(?:{e(tags.block)}\\s*)?{e(tags.invoke)}(?P<name>[^"]+){e(tags.name_end)}',
                "close_pattern": f"{e(tags.invoke_end)}(?:\\s*{e(tags.block_end)})?",
                "repeats": True,
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": f"{e(tags.parameter)}(?P<key>.*?)(?:{e(tags.string_close)}|{e(tags.json_close)})"
                                   f"(?P<value>.*?){e(tags.parameter_end)}",
                },
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {"close": end, "content": "text"},
        },
    }


def wire_limits(tags: Tags) -> tuple[WireLimit, ...]:
    """What no DSML wire carries (no escaping), and what its response template cannot read."""
    return (
        WireLimit(f"a string holding {tags.parameter_end}, which ends the value",
                  lambda arguments: any_string(arguments, lambda s: tags.parameter_end in s)),
        WireLimit(f"a string holding {tags.block_end}, which ends the block",
                  lambda arguments: any_string(arguments, lambda s: tags.block_end in s)),
        # Only a whole typed closer ends a key: one holding just their common prefix
        # (``" string="``) is read up to the closer the writer puts after it.
        WireLimit(f"a key holding {tags.string_close!r} or {tags.json_close!r}, which ends the key",
                  lambda arguments: any(tags.string_close in key or tags.json_close in key for key in arguments)),
        WireLimit(f"a string holding {tags.invoke_end}: the response template closes the call at the first one",
                  lambda arguments: any_string(arguments, lambda s: tags.invoke_end in s), where="response template"),
        WireLimit("a value that is not a string: the response template reads every value as text "
                  "(typed only when tools= gives the schema)",
                  lambda arguments: any(not isinstance(value, str) for value in arguments.values()),
                  where="response template"),
    )
