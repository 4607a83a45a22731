"""Step 12: one row per model family, from probes rather than from trust.

``tool_support`` asks the three questions of one tokenizer; ``format_table``
lays the answers out as the course prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

from transformers import PreTrainedTokenizerBase

from templatestudio.messages import Conversation
from templatestudio.tools import call_survives, renders_tools


@dataclass(frozen=True)
class ToolSupport:
    family: str
    tools: bool
    call: bool
    parse_with: str


def tool_support(
    family: str,
    tokenizer: PreTrainedTokenizerBase,
    conversation: Conversation,
    tools: list[dict],
) -> ToolSupport:
    """Does the template render tools, keep a past call, and who parses replies?

    A shipped response template decides "parse with" whenever it exists: it is
    the authors' own statement of the output format.
    """
    tools_ok = renders_tools(tokenizer, conversation, tools)
    call_ok = call_survives(tokenizer, tools[0]["function"]["name"])
    if tokenizer.response_template is not None:
        parser = "response template"
    elif tools_ok and call_ok:
        parser = "your own parser"
    else:
        parser = "none: no tool calling"
    return ToolSupport(family, tools_ok, call_ok, parser)


def format_table(rows: list[ToolSupport]) -> str:
    lines = [f"{'family':<7} {'tools':<6} {'call':<6} parse with"]
    for row in rows:
        lines.append(f"{row.family:<7} {row.tools!s:<6} {row.call!s:<6} {row.parse_with}")
    return "\n".join(lines)
