"""Strict tool calling in the served model's own format: the structural tag for one request, without vLLM.

vLLM (0.32, 0.33) asks a tool parser for an xgrammar structural tag when a
request's ``tool_choice`` is "required" or names a tool, and for "auto"
under ``--tool-strict-level function|parameter`` or when a tool says
``strict``; without a tag it forces "required" and named choices into its
own JSON list, a shape the model never learned. ``request_grammar`` builds
the tag from the served format's declared wire shape
(``wire.structural_tag``) and the request's tools:

- tool_choice "required": one or more calls and nothing else; a named tool:
  one call of it; "auto": free text, every call held to the grammar.
- arguments: every tool's schema at ``--tool-strict-level parameter``;
  otherwise a tool's own ``strict: true`` holds its arguments to its schema
  and other tools' arguments are any JSON object (vLLM's rule).
- ``parallel_tool_calls: false``: at most one call.

Not handled: a reasoning block before the calls (vLLM asks for the tag
without reasoning; a "required" reply opens with its first call), and
formats whose shape has no structural tag (``wire.structural_tag.refusal``
says why; the plugin then leaves vLLM's own behaviour in place).
"""

from __future__ import annotations

from templatestudio.formats import Format
from templatestudio.integrations.served import logger, request_tools
from templatestudio.wire.structural_tag import NoGrammar, refusal, structural_tag

__all__ = ["grammar_refusal", "named_tool", "request_grammar"]


def grammar_refusal(fmt: Format) -> str | None:
    """Why the format has no structural tag (None when it has one); logged once by the plugin."""
    if fmt.wire is None:
        return f"{fmt.name} declares no wire shape"
    return refusal(fmt.wire)


def named_tool(tool_choice) -> str | None:
    """The tool a named tool choice names (a dict or vLLM's pydantic model), else None."""
    if isinstance(tool_choice, str) or tool_choice is None:
        return None
    function = tool_choice.get("function") if isinstance(tool_choice, dict) else getattr(tool_choice, "function", None)
    name = function.get("name") if isinstance(function, dict) else getattr(function, "name", None)
    if name is None:  # the Responses API's {"type": "function", "name": ...}
        name = tool_choice.get("name") if isinstance(tool_choice, dict) else getattr(tool_choice, "name", None)
    return name if isinstance(name, str) else None


def request_grammar(fmt: Format, request, *, every_argument: bool) -> dict | None:
    """The structural tag (xgrammar's JSON form) for request, or None where the format or request has none.

    every_argument: hold every tool's arguments to its schema (vLLM's
    ``--tool-strict-level parameter``); otherwise each tool's ``strict``.
    """
    tools = request_tools(request)
    if not tools or fmt.wire is None:
        return None
    choice = getattr(request, "tool_choice", None)
    only = named_tool(choice)
    if only is None and choice not in ("required", "auto", None):
        return None  # "none", or a choice this module does not know: no grammar
    try:
        return structural_tag(
            fmt.wire, tools,
            mode="required" if choice == "required" else "auto",
            only=only,
            strict=True if every_argument else None,
            single_call=getattr(request, "parallel_tool_calls", None) is False,
        )
    except NoGrammar as error:
        logger.warning("templatestudio: no structural tag for this %s request: %s", fmt.name, error)
        return None
