"""MCP tool results as the one string a chat template's tool turn carries.

A Model Context Protocol server answers ``tools/call`` with a
``CallToolResult``: a list of content blocks (text, image, audio, embedded
resource, resource link), optional ``structuredContent`` and an ``isError``
flag. ``tool_result_message`` takes a str, so the result is flattened:

- blocks keep their order, one per line; text blocks as they are;
- an image or audio block becomes a marker with its MIME type and decoded
  size, ``[image: image/png, 1234 bytes]``, so the model knows something
  was there instead of never hearing of it;
- an embedded text resource becomes ``[resource: URI, MIME]`` followed by
  its text; a blob resource a marker with its size; a resource link
  ``[resource link: NAME, URI, MIME]``;
- ``structuredContent`` is added as compact JSON. Servers are asked to echo
  it as JSON in a text block too; that echo is replaced by the compact JSON
  in place rather than repeated. A text block is an echo when it decodes to
  the same JSON value (``same_json_value``: ``true`` is not ``1``, ``1.0``
  is not ``1``); text that does not decode, or decodes to another value, is
  kept as text;
- an ``isError`` result reads ``error: ...``, the form every tool error in
  this package takes, so the model can tell failure from data;
- a result with nothing in it (no blocks, or only empty or whitespace-only
  text blocks) reads ``[empty result]``, and an ``isError`` one says the
  tool failed without saying why.

Not handled: the image or audio itself (templates here take text in a tool
turn) and results that ask for more input (``resultType`` other than
``"complete"``), which the MCP client must answer before there is a result;
and NaN or an infinity in ``structuredContent`` of a result given as the
SDK's object, which its ``model_dump(mode="json")`` has already turned into
``null`` before this module sees it.
The ``mcp`` SDK is an optional extra: ``pip install 'templatestudio[mcp]'``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping

from templatestudio.tools import tool_result_message
from templatestudio.values import same_json_value

MISSING_SDK = (
    "MCP results need the MCP Python SDK (the mcp package); "
    "install it with: pip install 'templatestudio[mcp]'"
)


def _call_tool_result_type() -> type:
    try:
        from mcp.types import CallToolResult
    except ImportError as error:
        raise ImportError(MISSING_SDK) from error
    return CallToolResult


def _wire_form(result: object) -> dict:
    """The result as the spec's JSON (camelCase keys), checked by the SDK itself."""
    call_tool_result = _call_tool_result_type()
    if isinstance(result, Mapping):
        result = call_tool_result.model_validate(dict(result))
    elif not isinstance(result, call_tool_result):
        kind = type(result).__name__
        raise TypeError(f"expected an MCP CallToolResult or a dict of one, got {kind}")
    # Dumping by alias gives the spec's field names whichever SDK major
    # version built the object (1.x names fields in camelCase, 2.x in snake).
    return result.model_dump(mode="json", by_alias=True)


def _decoded_size(data: str, where: str) -> int:
    try:
        return len(base64.b64decode(data, validate=True))
    except binascii.Error as error:
        raise ValueError(f"{where} carries data that is not valid base64: {error}") from error
    except ValueError as error:
        # b64decode refuses a str with non-ASCII characters before decoding,
        # with a plain ValueError that says neither where nor which character.
        found = next(((i, c) for i, c in enumerate(data) if not c.isascii()), None)
        what = f"a non-ASCII character {found[1]!r} at offset {found[0]}" if found else str(error)
        raise ValueError(f"{where} carries data that is not valid base64: {what}") from error


def _marker(kind: str, *fields: object) -> str:
    return f"[{kind}: " + ", ".join(str(field) for field in fields if field is not None) + "]"


def _block_text(block: dict, position: int) -> str:
    kind = block.get("type")
    where = f"content block {position} ({kind})"
    if kind == "text":
        return block["text"]
    if kind in ("image", "audio"):
        size = _decoded_size(block["data"], where)
        return _marker(kind, block.get("mimeType"), f"{size} bytes")
    if kind == "resource_link":
        return _marker("resource link", block.get("name"), block["uri"], block.get("mimeType"))
    if kind == "resource":
        resource = block["resource"]
        if resource.get("text") is not None:
            header = _marker("resource", resource["uri"], resource.get("mimeType"))
            return f"{header}\n{resource['text']}"
        size = _decoded_size(resource["blob"], where)
        return _marker("resource", resource["uri"], resource.get("mimeType"), f"{size} bytes")
    raise ValueError(f"{where}: this converter does not know content blocks of that type")


def _echoes(text: str, value: object) -> bool:
    # Any text may arrive here. ValueError covers JSONDecodeError and the
    # interpreter's limit on long integer literals; RecursionError deep
    # nesting ("[" * 100000). Such text is not an echo: it stays as written.
    try:
        return same_json_value(json.loads(text), value)
    except (ValueError, RecursionError):
        return False


def mcp_result_text(result: object) -> str:
    """The text a model should read for one MCP ``CallToolResult``.

    result is the SDK's ``mcp.types.CallToolResult`` or a dict of the same
    shape as it travels on the wire (``isError``, ``structuredContent``);
    a dict is validated by the SDK, so a malformed one raises its
    ``ValidationError``. Raises ImportError naming the extra when the SDK
    is not installed, TypeError for anything else, and ValueError for a
    result that is not final, a block type the converter does not know, and
    base64 that does not decode (naming the block and what is wrong).
    """
    wire = _wire_form(result)
    result_type = wire.get("resultType") or "complete"
    if result_type != "complete":
        raise ValueError(
            f"the MCP result is not final (resultType {result_type!r}); "
            "the client must answer it before the model sees a result"
        )
    structured = wire.get("structuredContent")
    compact = None
    if structured is not None:
        compact = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    parts: list[str] = []
    for position, block in enumerate(wire["content"]):
        is_text = block.get("type") == "text"
        if compact is not None and is_text and _echoes(block["text"], structured):
            parts.append(compact)
            compact = None  # placed where the server's own echo was
            continue
        parts.append(_block_text(block, position))
    if compact is not None:
        parts.append(compact)
    body = "\n".join(parts)
    # Whitespace-only blocks carry nothing to read; they get the same text
    # as no blocks rather than a blank turn the model cannot interpret.
    if wire.get("isError"):
        return f"error: {body}" if body.strip() else "error: the tool failed without saying why"
    return body if body.strip() else "[empty result]"


def mcp_result_to_tool_message(
    name: str, result: object, *, tool_call_id: str | None = None
) -> dict:
    """A tool message carrying an MCP result, ready to append to a conversation.

    name is the tool's name; tool_call_id, when given, ties the message to
    the call it answers (templates that print ids need it). The content is
    ``mcp_result_text(result)``.
    """
    if tool_call_id is not None and not isinstance(tool_call_id, str):
        raise TypeError(f"tool_call_id must be a str, got {type(tool_call_id).__name__}")
    message = tool_result_message(name, mcp_result_text(result))
    if tool_call_id is not None:
        message["tool_call_id"] = tool_call_id
    return message
