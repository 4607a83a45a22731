"""Checkers for notebook 26 (your own model): the format a template writes, a tool block, a leak's cause.

- ``check_format_of(answer)``: ``answer(template_source) -> str | None``
  names the format that reads the template's calls: the registered
  format's name, ``"derived"`` for a format derived from the template, or
  None when no format reads them.
- ``check_tool_block(answer)``: ``answer(tools) -> str`` is the text of a
  system-prompt block listing the tools; put into the system message of
  templates that drop ``tools=``, every tool's name, description and
  parameter names must reach the prompt.
- ``check_runbook_step(answer)``: ``answer(incident) -> str`` names the
  runbook step (one of ``RUNBOOK_STEPS``) that finds the cause of a
  recorded leak.

The first two load tokenizers through the Hugging Face cache (the course's
families), so they need the Hub or the offline mirror.
"""

from __future__ import annotations

import functools

from exercises.checking import Case, check

__all__ = ["RUNBOOK_STEPS", "check_format_of", "check_runbook_step", "check_tool_block"]

# The runbook's steps, in the order notebook 26 checks them.
RUNBOOK_STEPS = (
    "raw reply",
    "template revision",
    "skip_special_tokens",
    "reasoning parser",
    "--chat-template override",
    "dropped keys",
    "strict mode",
)

# A made-up family: calls as <|call|>NAME<|args|>{...}<|end_call|>, which no registered format reads.
QUOKKA = (
    "{% if tools %}<|system|>Tools: {% for t in tools %}{{ t.function.name }} {% endfor %}<|eot|>{% endif %}"
    "{% for m in messages %}<|{{ m.role }}|>"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}"
    "<|call|>{{ c.function.name }}<|args|>{{ c.function.arguments | tojson }}<|end_call|>{% endfor %}"
    "{% else %}{{ m.content }}{% endif %}<|eot|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
# Lists the tools but renders an assistant's call as its (empty) content: the call never reaches the prompt.
DROPS_CALLS = (
    "{% if tools %}Tools: {{ tools | tojson }}\n{% endif %}"
    "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


class Source(str):
    """A template's text that prints as its label, so a failing case does not print the whole template."""

    label = "a template"

    def __repr__(self) -> str:
        return f"<{self.label}: {len(self):,} characters of Jinja>"


def _source(label: str, text: str) -> Source:
    source = Source(text)
    source.label = label
    return source


class Needed(list):
    """The tools a case lists, printed as what the check looks for in the prompt."""

    def __repr__(self) -> str:
        names = ", ".join(tool["function"]["name"] for tool in self)
        return f"the name, description and parameter names of {names} in the prompt"


@functools.cache
def _template(name: str) -> str:
    from templatestudio.families import family
    from templatestudio.render import load_tokenizer

    return load_tokenizer(family(name).repo_id).chat_template


def check_format_of(answer) -> bool:
    """Exercise 26.1: the format that reads a template's calls, "derived", or None."""
    qwen3 = _template("qwen3")
    renamed = qwen3.replace("<tool_call>", "<call>").replace("</tool_call>", "</call>")
    templates = [
        ("Qwen3's template", qwen3, "hermes"),
        ("Llama 3.1's template", _template("llama3.1"), "llama3-json"),
        ("Gemma 4's template", _template("gemma4"), "gemma4"),
        ("Llama 3 8B Instruct's template (no tools branch)", _template("llama3"), None),
        ("Gemma 3's template (no tools branch)", _template("gemma3"), None),
        ("a template that lists tools but drops the assistant's call", DROPS_CALLS, None),
        ("Qwen3's template with <tool_call> renamed <call>", renamed, "derived"),
        ("a made-up family's template (<|call|>NAME<|args|>{...})", QUOKKA, "derived"),
    ]
    cases = [Case(label, (_source(label, text),), expected) for label, text, expected in templates]
    return check("Exercise 26.1 (which format reads the calls)", answer, cases)


def set_alarm(hour: int, label: str = "alarm") -> str:
    """Set an alarm on the phone.

    Args:
        hour: The hour it rings, 0 to 23.
        label: The text shown when it rings.
    """
    return f"{label} at {hour}"


def convert_units(value: float, unit: str, into: str) -> float:
    """Convert a length between metric and imperial units.

    Args:
        value: The length to convert.
        unit: The unit value is in, such as "cm".
        into: The unit wanted, such as "inch".
    """
    return value


def _tool_lists() -> list[tuple[str, list[dict]]]:
    from rates import get_exchange_rate
    from templatestudio.tools import tool_schema

    rate, alarm, units = (tool_schema(fn) for fn in (get_exchange_rate, set_alarm, convert_units))
    return [("one tool", [rate]), ("two tools", [rate, alarm]), ("three tools", [units, alarm, rate])]


def _block_reaches(tokenizer):
    """A Case.same for tool blocks: rendered into the system message, every tool reaches the prompt."""
    from templatestudio.render import render

    def same(block, tools) -> bool:
        if not isinstance(block, str) or not block.strip():
            return False
        question = [{"role": "user", "content": "How many yen is one euro?"}]
        prompt = render(tokenizer, [{"role": "system", "content": block}, *question])
        if prompt == render(tokenizer, question, tools=tools):  # what tools= alone gives
            return False
        for tool in tools:
            function = tool["function"]
            needed = [function["name"], function["description"], *function["parameters"]["properties"]]
            if not all(text in prompt for text in needed):
                return False
        return True

    return same


def check_tool_block(answer) -> bool:
    """Exercise 26.2: a system-prompt tool block that brings every tool into the prompt."""
    from templatestudio.families import family
    from templatestudio.render import load_tokenizer

    cases = []
    for name in ("llama3", "gemma3"):
        tokenizer = load_tokenizer(family(name).repo_id)
        same = _block_reaches(tokenizer)
        for label, tools in _tool_lists():
            # expected is the tools: same() renders the block and looks for each of them.
            cases.append(Case(f"{label}, {name}'s template", (tools,), Needed(tools), same=same))
    return check("Exercise 26.2 (tools in the system prompt)", answer, cases)


def _incident(template_format, parser_format, raw, content) -> dict:
    return {"template_format": template_format, "parser_format": parser_format, "raw": raw, "content": content}


def _incidents() -> list[Case]:
    from templatestudio import ParsedToolCall, get_format

    rate = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
    alarm = ParsedToolCall("set_alarm", {"hour": 7})
    gemma4, hermes, mistral = (get_format(name) for name in ("gemma4", "hermes", "mistral"))
    gemma4_raw = gemma4.write_call(rate) + gemma4.write_call(alarm)
    mistral_raw = mistral.write_call(rate)
    hermes_raw = hermes.write_call(rate)
    thinking = "<think>\nThe user wants a rate; get_exchange_rate answers it.\n</think>\n\n"
    broken = hermes_raw.replace("}}", "}")
    return [
        Case(
            "Gemma 4's special tokens decoded away",
            (_incident("gemma4", "gemma4", gemma4_raw, "call:get_exchange_rate{base:EUR,quote:JPY}call:set_alarm{hour:7}"),),
            "skip_special_tokens",
        ),
        Case(
            "Mistral's [TOOL_CALLS] and [ARGS] decoded away",
            (_incident("mistral", "mistral", mistral_raw, 'get_exchange_rate{"base": "EUR", "quote": "JPY"}'),),
            "skip_special_tokens",
        ),
        Case(
            "Qwen3's thinking block in the content",
            (_incident("hermes", "hermes", thinking + "One euro is 162.4 yen.", thinking + "One euro is 162.4 yen."),),
            "reasoning parser",
        ),
        Case(
            "Gemma 4's thought channel in the content",
            (_incident("gemma4", "gemma4", "<|channel>thought\nA rate question.<channel|>162.4 yen.",
                       "<|channel>thought\nA rate question.<channel|>162.4 yen."),),
            "reasoning parser",
        ),
        Case(
            "a Hermes template served with --chat-template, the parser still reading Mistral",
            (_incident("hermes", "mistral", hermes_raw, hermes_raw),),
            "--chat-template override",
        ),
        Case(
            "a Mistral template override on a Qwen3 server",
            (_incident("mistral", "hermes", mistral_raw, mistral_raw),),
            "--chat-template override",
        ),
        Case(
            "a Hermes call one brace short",
            (_incident("hermes", "hermes", broken, broken),),
            "strict mode",
        ),
        Case(
            "a Hermes call one brace short, after thinking",
            (_incident("hermes", "hermes", thinking + broken, thinking + broken),),
            "strict mode",
        ),
    ]


def check_runbook_step(answer) -> bool:
    """Exercise 26.3: the runbook step that finds the cause of each recorded leak."""

    def named(incident):
        step = answer(incident)
        if step not in RUNBOOK_STEPS:
            raise ValueError(f"{step!r} is not a runbook step; the steps are {', '.join(RUNBOOK_STEPS)}")
        return step

    return check("Exercise 26.3 (which runbook step finds the leak)", named, _incidents())

