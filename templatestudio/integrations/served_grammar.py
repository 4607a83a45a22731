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
formats whose shape has no structural tag in a mode (``DetectedFormat``
holds why, from ``served_detect.grammar_refusals``, and its start-up line says it;
the plugin then leaves vLLM's own behaviour in place).
"""

from __future__ import annotations

from templatestudio.integrations.served import request_tools
from templatestudio.integrations.served_detect import DetectedFormat
from templatestudio.integrations.served_log import logger
from templatestudio.wire.structural_tag import NoGrammar, structural_tag

__all__ = ["named_tool", "request_grammar"]


def named_tool(tool_choice) -> str | None:
    """The tool a named tool choice names (a dict or vLLM's pydantic model), else None."""
    if isinstance(tool_choice, str) or tool_choice is None:
        return None
    function = tool_choice.get("function") if isinstance(tool_choice, dict) else getattr(tool_choice, "function", None)
    name = function.get("name") if isinstance(function, dict) else getattr(function, "name", None)
    if name is None:  # the Responses API's {"type": "function", "name": ...}
        name = tool_choice.get("name") if isinstance(tool_choice, dict) else getattr(tool_choice, "name", None)
    return name if isinstance(name, str) else None


def request_grammar(served: DetectedFormat, request, *, every_argument: bool) -> dict | None:
    """The structural tag (xgrammar's JSON form) for request, or None where the format or request has none.

    served: the detected format, which knows the modes its format has no
    tag in (told once, in its start-up line); those give None quietly. A
    request the grammar cannot be built for (a named tool it does not send)
    gives None with a warning naming the reason. every_argument: hold every
    tool's arguments to its schema (vLLM's ``--tool-strict-level
    parameter``); otherwise each tool's ``strict``.
    """
    tools = request_tools(request)
    choice = getattr(request, "tool_choice", None)
    only = named_tool(choice)
    if not tools or (only is None and choice not in ("required", "auto", None)):
        return None  # "none", or a choice this module does not know: no grammar
    mode = "required" if choice == "required" or only is not None else "auto"
    if served.grammar_refusal(mode) is not None:
        return None
    try:
        return structural_tag(
            served.format.wire, tools,
            mode=mode,
            only=only,
            strict=True if every_argument else None,
            single_call=getattr(request, "parallel_tool_calls", None) is False,
        )
    except NoGrammar as error:
        logger.warning("templatestudio: no structural tag for this %s request: %s", served.format.name, error)
        return None
