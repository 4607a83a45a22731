"""A JSON call object between an opening and a closing literal: the shape several formats share.

``read_tagged_json`` reads one region ``OPEN ws JSON ws CLOSE``; formats
differ only in their literals, the key that carries the arguments, and the
extras they allow, so each format module passes its own.
"""

from __future__ import annotations

import json

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import CallSyntaxError, Found
from templatestudio.wire.jsonbody import call_from, decode_at, skip_space


def read_tagged_json(
    region: str,
    open_literal: str,
    close_literal: str,
    *,
    close_optional: bool = False,
    string_arguments: bool = True,
    argument_keys: tuple[str, ...] = ("arguments",),
    found: Found | None = None,
) -> list[CallSpan]:
    """The one call in region, which starts with open_literal.

    found: what the region's extent already read (see ``jsonbody.decode_at``).
    close_optional accepts a region that ends, after the JSON value and
    whitespace, without its closer (the reply ended there).
    """
    start = skip_space(region, len(open_literal))
    if not region.startswith("{", start):
        if region.startswith("[", start):
            raise CallSyntaxError(f"a JSON list inside {open_literal} is not this format's call")
        raise CallSyntaxError(f"no JSON object after {open_literal}")
    payload, after = decode_at(region, start, found)
    call, _ = call_from(payload, argument_keys=argument_keys, string_arguments=string_arguments)
    after = skip_space(region, after)
    if region.startswith(close_literal, after) and after + len(close_literal) == len(region):
        return [CallSpan(call, 0, len(region))]
    if close_optional and after == len(region):
        return [CallSpan(call, 0, len(region))]
    raise CallSyntaxError(f"expected {close_literal} after the call's JSON, at offset {after}")


def write_tagged_json(call: ParsedToolCall, open_literal: str, close_literal: str, key: str = "arguments") -> str:
    body = json.dumps({"name": call.name, key: call.arguments}, ensure_ascii=False)
    return f"{open_literal}\n{body}\n{close_literal}"
