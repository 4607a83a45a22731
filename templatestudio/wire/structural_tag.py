"""A format's decoding grammar, derived from its declared wire shape: an xgrammar structural tag.

``structural_tag(shape, tools, ...)`` returns the JSON form of an xgrammar
structural tag (a plain dict: the package does not import xgrammar; vLLM's
glue validates it into ``xgrammar.StructuralTag``) that lets a model write
exactly what ``WireShape.write_calls`` writes for the request's tools: the
envelope's literals and layout as the writer writes them, a name only from
the tools, and the arguments held to each tool's JSON schema (or to any
JSON object, for a tool that is not strict). Three modes:

- ``"required"``: the reply is one or more calls and nothing else;
- ``only=NAME`` (a named tool choice): exactly one call of that tool;
- ``"auto"``: free text, with every call the format opens held to the
  grammar (the calls are triggered by the format's opening literal).

Per shape (outermost first): a section becomes a tag around the calls; the
calls are tags with the shape's separator between them; one call is a tag
whose begin is every literal up to the arguments (the call's opening and
head, and for a name written outside JSON the name itself, so the name is
a choice between the tools' names) and whose end is every literal after
them. Arguments: a JSON call object (``NameKey`` with ``JsonArguments``)
is one JSON schema with the name a constant and the writer's key order; a
list of them (``listed``) one JSON array schema; a JSON object after the
name its tool's schema; XML parameters and key/value pairs a sequence of
one tag per property in the schema's order (required ones always, others
optional), a string value as text up to the closing literal, any other
value as JSON for its schema.

Not expressed (``NoGrammar`` says why; vLLM's glue then keeps vLLM's own
behaviour): hand-written names or arguments, the ``{key:value}`` grammar
(``OwnValues``), ids written inside a call, a JSON list
whose brackets are not the JSON's own, and in ``"auto"`` a call that opens
with no literal at all (a grammar cannot tell it from text). The arguments
of parameter-per-tag formats always follow the schema: the tags have no
way to name a key that is not declared, so "not strict" loosens nothing
there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from templatestudio.wire.arguments import (
    Invoke, JsonArguments, JsonObject, KeyValuePairs, NameBetween, NameKey, XmlParameters,
)
from templatestudio.wire.base import MARKUP
from templatestudio.wire.finite_schema import finite
from templatestudio.wire.shape import HandWritten, WireShape

ANY_OBJECT = {"type": "object"}


class NoGrammar(ValueError):
    """The declared shape (or the request) cannot be written as a structural tag; the message says why."""


@dataclass(frozen=True)
class Tool:
    """What the grammar needs of one requested tool: its name, its arguments' schema, whether it is strict."""

    name: str
    parameters: Mapping
    strict: bool | None = None

    @classmethod
    def of(cls, tool: Mapping) -> Tool:
        """An OpenAI-style tool (``{"type": "function", "function": {...}}``) or its function part."""
        function = tool.get("function", tool)
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise NoGrammar(f"a tool without a function name: {tool!r}")
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        return cls(function["name"], parameters, function.get("strict"))


def refusal(shape: WireShape, mode: str = "required") -> str | None:
    """Why the shape has no structural tag in mode (for any tools), or None when it has one.

    "required" is refused only by the shape; "auto" also where nothing marks
    where a call starts (a bare JSON value).
    """
    try:
        structural_tag(shape, [{"name": "f", "parameters": {"type": "object", "properties": {}}}],
                       mode=mode, strict=True)
    except NoGrammar as error:
        return str(error)
    return None


def structural_tag(
    shape: WireShape,
    tools: Sequence[Mapping],
    *,
    mode: str = "required",
    only: str | None = None,
    strict: bool | None = None,
    single_call: bool = False,
) -> dict:
    """The structural tag (xgrammar's JSON form) for these tools in this shape; see the module docstring.

    mode: "required" or "auto"; only: a tool name (a named tool choice, one
    call of it). strict: True holds every tool's arguments to its schema,
    None each tool's own ``strict`` (a tool without one gets any JSON object
    as arguments), False none. single_call: at most one call (vLLM's
    ``parallel_tool_calls=false``). Raises ``NoGrammar`` with the reason.
    """
    if mode not in ("required", "auto"):
        raise NoGrammar(f"mode must be 'required' or 'auto', not {mode!r}")
    chosen = [Tool.of(tool) for tool in tools]
    if only is not None:
        chosen = [tool for tool in chosen if tool.name == only]
        if not chosen:
            raise NoGrammar(f"the named tool {only!r} is not among the request's tools")
        mode, single_call = "required", True
    if not chosen:
        raise NoGrammar("the request has no tools to call")
    tags = _call_tags(shape, chosen, strict)
    return {"type": "structural_tag", "format": _envelope(shape, tags, mode, single_call)}


# --- the envelope: section, calls, separator --------------------------------------------------

def _envelope(shape: WireShape, tags: list[dict], mode: str, single_call: bool) -> dict:
    required = mode == "required"
    if shape.section is not None:
        section = shape.section
        calls = _calls(tags, shape.separator, at_least_one=True, single=single_call)
        wrapped = {"type": "tag", "begin": section.open + section.head, "content": calls,
                   "end": section.tail + section.close}
        if required:
            return wrapped
        return _triggered(shape, [section.open], [wrapped], single=True)
    if required:
        return _calls(tags, shape.separator, at_least_one=True, single=single_call)
    return _triggered(shape, _triggers(shape), tags, single=single_call)


def _triggered(shape: WireShape, triggers: list[str], tags: list[dict], *, single: bool) -> dict:
    """Free text in which every call opens at a trigger; the text between holds none of the markup.

    Markup in the free text would open a call the grammar never checked
    (DeepSeek's reader takes a call opener without its section), so it is
    excluded there; a literal a trigger starts with cannot be, or the
    trigger could not be written, nor one the writer puts between calls
    (Inkling's separator ``<|message_model|>``).
    """
    excludes = [item for item in markup(shape)
                if not any(trigger.startswith(item) for trigger in triggers) and item not in shape.separator]
    return {"type": "triggered_tags", "triggers": triggers, "tags": tags, "at_least_one": False,
            "stop_after_first": single, "excludes": excludes}


def _calls(tags: list[dict], separator: str, *, at_least_one: bool, single: bool) -> dict:
    return {"type": "tags_with_separator", "tags": tags, "separator": separator,
            "at_least_one": at_least_one, "stop_after_first": single}


def _triggers(shape: WireShape) -> list[str]:
    """The literal every call opens with: the call's opening, else the text before its name.

    Every tag's begin is written from that opening (``_call_parts``,
    ``_list_parts``), so each starts with the trigger; the tests check it.
    """
    trigger = shape.call.open or shape.name_open
    if not trigger:
        raise NoGrammar("a call here opens with no literal (a bare JSON value): "
                        "in tool_choice 'auto' a grammar cannot tell it from text")
    return [trigger]


def _listed(shape: WireShape) -> bool:
    """Whether the calls stand in a JSON list (a tag holds a list of one or more calls)."""
    arguments = shape.arguments
    return isinstance(arguments, (JsonArguments, JsonObject)) and arguments.listed is not None


# --- one call -----------------------------------------------------------------------------------

def _call_tags(shape: WireShape, tools: list[Tool], strict: bool | None) -> list[dict]:
    """One tag per distinct opening: tools whose calls open alike share a tag whose content chooses."""
    if _listed(shape):
        begin, content, end = _list_parts(shape, tools, strict)
        return [{"type": "tag", "begin": begin, "content": content, "end": end}]
    grouped: dict[tuple[str, str], list[dict]] = {}
    for tool in tools:
        begin, content, end = _call_parts(shape, tool, _strict(tool, strict))
        grouped.setdefault((begin, end), []).append(content)
    return [
        {"type": "tag", "begin": begin, "end": end,
         "content": contents[0] if len(contents) == 1 else {"type": "or", "elements": contents}}
        for (begin, end), contents in grouped.items()
    ]


def _strict(tool: Tool, strict: bool | None) -> bool:
    return bool(tool.strict) if strict is None else strict


def _call_parts(shape: WireShape, tool: Tool, strict: bool) -> tuple[str, dict, str]:
    """(begin, content, end) of one call of tool, exactly as ``WireShape.write_call`` lays it out.

    Calls in a JSON list never come here: ``_call_tags`` sends them to ``_list_parts``.
    """
    name, arguments, call = shape.name, shape.arguments, shape.call
    for part in (name, arguments):
        if isinstance(part, HandWritten):
            raise NoGrammar(f"hand-written in the declaration: {part.why}")
    if shape.call_id is not None:
        raise NoGrammar("a call id is written inside the call, and its text is the writer's own")
    opening = call.open + call.head
    closing = call.tail + call.close
    schema = tool.parameters if strict else ANY_OBJECT
    if isinstance(name, NameKey):
        return opening, _json(_call_object(shape, tool, schema), markup(shape)), closing
    if isinstance(name, Invoke):
        opening += f"{name.open}{tool.name}{name.name_close}{name.head}"
        closing = f"{name.tail}{name.close}{closing}"
    elif isinstance(name, NameBetween):
        opening += f"{name.open}{tool.name}{name.index}{name.close}{name.head}"
    if isinstance(arguments, JsonObject):
        return opening, _json(schema, markup(shape)), closing
    if isinstance(arguments, (XmlParameters, KeyValuePairs)):
        return opening, _parameters(arguments, tool.parameters, markup(shape)), closing
    raise NoGrammar(f"{type(arguments).__name__} arguments have no JSON style in xgrammar "
                    "(the {key:value} grammar is the format's own)")


def _call_object(shape: WireShape, tool: Tool, arguments_schema: Mapping) -> dict:
    """The JSON schema of one call object: the writer's extras, the name as a constant, the arguments."""
    arguments = shape.arguments
    assert isinstance(arguments, JsonArguments) and isinstance(shape.name, NameKey)
    properties = {key: {"const": value} for key, value in arguments.written_extras}
    properties[shape.name.key] = {"const": tool.name}
    properties[arguments.key] = dict(arguments_schema)
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _list_parts(shape: WireShape, tools: list[Tool], strict: bool | None) -> tuple[str, dict, str]:
    """A JSON list of calls (the writer writes one per call; a reply may hold several in one)."""
    arguments = shape.arguments
    if not isinstance(shape.name, NameKey) or not isinstance(arguments, JsonArguments):
        raise NoGrammar("each call is its own object in a JSON list after the name")
    listed = arguments.listed
    assert listed is not None
    if listed.indent is None and (listed.open.strip(), listed.close.strip()) != ("[", "]"):
        raise NoGrammar(f"the list is written between {listed.open!r} and {listed.close!r}, "
                        "not the JSON's own brackets")
    items = [_call_object(shape, tool, tool.parameters if _strict(tool, strict) else ANY_OBJECT) for tool in tools]
    schema = {"type": "array", "items": items[0] if len(items) == 1 else {"anyOf": items}, "minItems": 1}
    return shape.call.open + shape.call.head, _json(schema, markup(shape)), shape.call.tail + shape.call.close


# The longest run of whitespace inside JSON: a model with no taste for layout could otherwise
# write spaces until max_tokens. Indented writers (Command R+, indent 4) need a newline and 4
# spaces a level: 64 holds 15 levels.
WHITESPACE_RUN = 64


def _json(schema: Mapping, excludes: tuple[str, ...]) -> dict:
    return {"type": "json_schema", "json_schema": finite(schema), "excludes": list(excludes),
            "max_whitespace_cnt": WHITESPACE_RUN}


def markup(shape: WireShape) -> tuple[str, ...]:
    """The literals no written value may hold: every marker, closer and inner literal with markup.

    The reader takes them for structure wherever they stand (a string
    holding ``</tool_call>`` is a declared wire limit of Hermes), so the
    grammar keeps them out of every string and text value. One-character
    literals (``>``) are left to the tags around the value.
    """
    found = (*shape.markers, *shape.closers, *shape.inner_literals)
    return tuple(dict.fromkeys(item for item in found if len(item) > 1 and MARKUP.search(item)))


# --- arguments written one tag per parameter ------------------------------------------------------

def _parameters(arguments: XmlParameters | KeyValuePairs, schema: Mapping, excludes: tuple[str, ...]) -> dict:
    """One tag per property of the schema, in its order; optional ones may be left out."""
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        raise NoGrammar("the tool's parameters have no properties object")
    required = set(schema.get("required") or ())
    elements = []
    for key, value_schema in properties.items():
        parameter = _parameter(arguments, key, value_schema if isinstance(value_schema, Mapping) else {}, excludes)
        elements.append(parameter if key in required else {"type": "optional", "content": parameter})
    if not elements:
        return {"type": "const_string", "value": ""}
    return elements[0] if len(elements) == 1 else {"type": "sequence", "elements": elements}


def _parameter(arguments: XmlParameters | KeyValuePairs, key: str, schema: Mapping, excludes: tuple[str, ...]) -> dict:
    if isinstance(arguments, XmlParameters):
        inside = "\n" if arguments.newline_inside else ""
        name_close = arguments.name_close
        if arguments.typed is not None:  # the tag says string or JSON: the schema's type decides which
            name_close = arguments.typed[0] if schema.get("type") == "string" else arguments.typed[1]
        begin = f"{arguments.open}{key}{name_close}{inside}"
        end = f"{inside}{arguments.close}{arguments.after}"
    else:
        begin = f"{arguments.key_open}{key}{arguments.key_close}{arguments.between}{arguments.value_open}"
        end = f"{arguments.value_close}{arguments.after}"
    return {"type": "tag", "begin": begin, "content": _value(schema, end, excludes), "end": end}


def _value(schema: Mapping, end: str, excludes: tuple[str, ...]) -> dict:
    """A string as its bare text up to the closing literal; anything else as JSON for its schema.

    A string is written bare, so an ``enum`` or ``const`` is a choice of
    literal texts and a ``pattern`` a regex. A value the writer spells with
    Python's ``str()`` (``values="str"``: ``True``) is still constrained to
    JSON (``true``): the reader types a text value by the tool's schema,
    and JSON is what that typing reads for every type.
    """
    if schema.get("type") != "string":
        return _json(schema, excludes)
    if "const" in schema:
        return {"type": "const_string", "value": str(schema["const"])}
    if "enum" in schema:
        return {"type": "or", "elements": [{"type": "const_string", "value": str(item)} for item in schema["enum"]]}
    if "pattern" in schema:
        return {"type": "regex", "pattern": schema["pattern"]}
    return {"type": "any_text", "excludes": list(dict.fromkeys((*excludes, end.strip() or end)))}
