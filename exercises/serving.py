"""Checkers for the exercises of notebooks 21, 22, 23 and 25 (serving and new formats).

Each ``check_…`` takes the learner's function, builds its cases and calls
``exercises.checking.check``; it prints one verdict and returns whether every
case passed. The expected answers are computed here with the package, so a
case stays right when a format's details change.
"""

from __future__ import annotations

import json

from exercises.checking import Case, check

__all__ = [
    "ALARM_TOOL",
    "STRICT_TOOLS",
    "check_diagnose_wrong_parser",
    "check_glm_stream",
    "check_has_tag",
    "check_join_stream",
    "check_read_with_derived",
    "check_toy_template",
    "check_vllm_command",
    "check_write_in_tag",
]

# ---------------------------------------------------------------- notebook 21

VLLM_PROGRAM = ["python", "-m", "vllm.entrypoints.openai.api_server"]


class TemplateOnly:
    """A tokenizer as the plugin sees it: a name and a chat template (no vocabulary needed)."""

    def __init__(self, name: str, template: str) -> None:
        self.name_or_path, self.chat_template = name, template
        self.special_tokens_map = {"bos_token": "", "eos_token": ""}
        self.response_template = None

    def get_chat_template(self, tools=None) -> str:
        return self.chat_template

    def __repr__(self) -> str:
        return f"<tokenizer of {self.name_or_path}>"


def _toy(call_open: str, between: str, call_close: str, separator: str = "\n") -> str:
    """A small chat template writing each call as call_open NAME between {json} call_close."""
    return (
        "{% if tools %}<|system|>Tools: {% for t in tools %}{{ t.function.name }} {% endfor %}<|eot|>{% endif %}"
        "{% for m in messages %}<|{{ m.role }}|>"
        "{% if m.tool_calls %}{% for c in m.tool_calls %}{% if not loop.first %}"
        + "{{ " + json.dumps(separator) + " }}"
        + "{% endif %}"
        + call_open + "{{ c.function.name }}" + between + "{{ c.function.arguments | tojson }}" + call_close
        + "{% endfor %}{% else %}{{ m.content }}{% endif %}<|eot|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )


HERMES_LIKE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>\n"
    '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}\n</tool_call>'
    "{% endfor %}{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
NO_TOOLS = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|eot|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _command(tokenizer) -> list[str] | None:
    from templatestudio.calls import NoToolCallFormat
    from templatestudio.integrations import plugin_path
    from templatestudio.integrations.served_detect import detect_served_format

    try:
        detect_served_format(tokenizer)
    except NoToolCallFormat:
        return None
    plugin = str(plugin_path())
    return [*VLLM_PROGRAM, "--model", tokenizer.name_or_path, "--enable-auto-tool-choice",
            "--tool-call-parser", "templatestudio", "--reasoning-parser", "templatestudio",
            "--tool-parser-plugin", plugin, "--reasoning-parser-plugin", plugin]


def _flags(argv: list[str]) -> tuple[list[str], dict[str, str | None]] | None:
    """(program, {flag: value}) of a command line, the flags in any order."""
    if not isinstance(argv, list) or argv[:3] != VLLM_PROGRAM:
        return None
    flags: dict[str, str | None] = {}
    rest = argv[3:]
    while rest:
        flag, rest = rest[0], rest[1:]
        if not isinstance(flag, str) or not flag.startswith("--") or flag in flags:
            return None
        if rest and isinstance(rest[0], str) and not rest[0].startswith("--"):
            flags[flag], rest = rest[0], rest[1:]
        else:
            flags[flag] = None
    return argv[:3], flags


def _same_command(got, expected) -> bool:
    if expected is None or got is None:
        return got is expected
    return _flags(got) is not None and _flags(got) == _flags(expected)


def check_vllm_command(vllm_command) -> bool:
    """21.1: the command line for a model whose template the plugin reads; None for one it refuses."""
    cases = []
    for name, template in (
        ("acme/no-tools", NO_TOOLS),
        ("acme/hermes-style", HERMES_LIKE),
        ("acme/quokka", _toy("<|call|>", "<|args|>", "<|end_call|>")),
        ("acme/brackets", _toy("[[call:", "]]", "[[/call]]")),
        ("acme/plain-chat", NO_TOOLS.replace("<|eot|>", "</s>")),
    ):
        tokenizer = TemplateOnly(name, template)
        cases.append(Case(name, (tokenizer,), _command(tokenizer), same=_same_command))
    return check("Exercise 21.1 (vllm_command)", vllm_command, cases)


def _join(deltas: list[tuple[str, str]]):
    reasoning, content, calls = "", "", []
    for kind, text in deltas:
        if kind == "reasoning":
            reasoning += text
        elif kind == "content":
            content += text
        elif kind == "call name":
            calls.append([text, ""])
        elif kind == "arguments":
            calls[-1][1] += text
    return reasoning or None, content or None, [(name, json.loads(arguments)) for name, arguments in calls]


_JOIN_CASES = {
    "reasoning, then one call whole": [
        ("reasoning", "The"), ("reasoning", " get_ex"), ("reasoning", "change_rate tool."),
        ("call name", "get_exchange_rate"), ("arguments", '{"base": "EUR", "quote": "JPY"}')],
    "a call only": [("call name", "get_exchange_rate"), ("arguments", '{"base": "EUR", "quote": "JPY"}')],
    "arguments in pieces": [
        ("call name", "get_exchange_rate"), ("arguments", "{"), ("arguments", '"base": "EU'),
        ("arguments", 'R", '), ("arguments", '"quote": '), ("arguments", '"JPY"'), ("arguments", "}")],
    "content around two calls": [
        ("content", "Checking "), ("content", "both."), ("call name", "set_alarm"), ("arguments", '{"hour": 6}'),
        ("call name", "get_exchange_rate"), ("arguments", '{"base": "GBP", '), ("arguments", '"quote": "EUR"}')],
    "no call at all": [("reasoning", "Nothing to look up."), ("content", "One euro is "), ("content", "162.4 yen.")],
    "a call with no arguments": [("call name", "list_currencies"), ("arguments", "{}")],
    "nested arguments": [("call name", "convert"), ("arguments", '{"pair": {"base": "EUR", '),
                         ("arguments", '"quote": "JPY"}, "amounts": [1, 2.5]}')],
}


def check_join_stream(join_stream) -> bool:
    """21.2: the whole-reply answer (reasoning, content, calls) from the deltas a client received."""
    cases = [Case(label, (deltas,), _join(deltas)) for label, deltas in _JOIN_CASES.items()]
    return check("Exercise 21.2 (join_stream)", join_stream, cases)


# ---------------------------------------------------------------- notebook 22

ALARM_TOOL = {
    "type": "function",
    "function": {
        "name": "set_alarm",
        "description": "Set an alarm at a whole hour.",
        "parameters": {"type": "object", "properties": {"hour": {"type": "integer"}, "enabled": {"type": "boolean"}},
                       "required": ["hour"]},
    },
}


def _strict_tools() -> list[dict]:
    from templatestudio.rates import get_exchange_rate
    from templatestudio.tools import tool_schema

    return [tool_schema(get_exchange_rate), ALARM_TOOL]


STRICT_TOOLS = _strict_tools()


def _has_tag(format_name: str, mode: str) -> bool:
    from templatestudio.formats import FORMATS
    from templatestudio.integrations.served_detect import grammar_refusals

    return mode not in dict(grammar_refusals(FORMATS[format_name]))


def check_has_tag(has_tag) -> bool:
    """22.1: whether vLLM gets a structural tag for a format in a tool_choice mode."""
    pairs = [("hermes", "required"), ("hermes", "auto"), ("gemma4", "required"), ("llama3-json", "required"),
             ("llama3-json", "auto"), ("pythonic", "auto"), ("qwen-xml", "auto"), ("harmony", "required"),
             ("deepseek-v3.1", "required"), ("xlam", "auto"), ("minimax-xml", "auto")]
    cases = [Case(f"{name}, tool_choice {mode!r}", (name, mode), _has_tag(name, mode)) for name, mode in pairs]
    return check("Exercise 22.1 (has_tag)", has_tag, cases)


def _reads_as(format_name: str):
    """same(): the text starts with one of the format's tag openings and reads back as exactly the call."""
    from templatestudio.calls import UnparsedToolCall
    from templatestudio.formats import FORMATS
    from templatestudio.reader import read_tool_calls
    from templatestudio.wire.structural_tag import structural_tag

    tags = structural_tag(FORMATS[format_name].wire, STRICT_TOOLS, mode="required", strict=True)["format"]["tags"]

    def same(text, expected) -> bool:
        if not isinstance(text, str) or not any(text.startswith(tag["begin"]) for tag in tags):
            return False
        try:
            read = read_tool_calls(text, format_name)
        except UnparsedToolCall:
            return False
        return [(call.name, call.arguments) for call in read.calls] == expected and not read.content.strip()

    return same


def check_write_in_tag(write_in_tag) -> bool:
    """22.2: a call written with nothing but the format's structural tag reads back as that call."""
    calls = [("hermes", "get_exchange_rate", {"base": "EUR", "quote": "JPY"}),
             ("hermes", "set_alarm", {"hour": 6, "enabled": False}),
             ("mistral", "set_alarm", {"hour": 7}),
             ("llama3-json", "get_exchange_rate", {"base": "GBP", "quote": "USD"}),
             ("functionary-v3.1", "set_alarm", {"hour": 23, "enabled": True}),
             ("gigachat", "get_exchange_rate", {"base": "JPY", "quote": "EUR"}),
             ("inkling", "set_alarm", {"hour": 1})]
    cases = [Case(f"{fmt}: {name}", (fmt, name, arguments), [(name, arguments)], same=_reads_as(fmt))
             for fmt, name, arguments in calls]
    return check("Exercise 22.2 (write_in_tag)", write_in_tag, cases)


# ---------------------------------------------------------------- notebook 23

_GLM_REPLIES = {
    "reasoning, a sentence, one call": (
        "The user wants the EUR to JPY rate.</think>Let me check."
        "<tool_call>get_exchange_rate<arg_key>base</arg_key><arg_value>EUR</arg_value>"
        "<arg_key>quote</arg_key><arg_value>JPY</arg_value></tool_call>"),
    "two calls": (
        "Two things.</think><tool_call>set_alarm<arg_key>hour</arg_key><arg_value>6</arg_value></tool_call>"
        "<tool_call>get_exchange_rate<arg_key>base</arg_key><arg_value>GBP</arg_value>"
        "<arg_key>quote</arg_key><arg_value>EUR</arg_value></tool_call>"),
    "no call": "Nothing to look up.</think>One euro is about 162.4 yen.",
    "a value holding < and a newline": (
        "</think><tool_call>write_note<arg_key>text</arg_key><arg_value>a < b\nand b > c</arg_value></tool_call>"),
}


def _glm_events(reply: str):
    from templatestudio.engine import read_events
    from templatestudio.formats import FORMATS
    from templatestudio.stream import merge_deltas

    return merge_deltas(read_events(reply, FORMATS["glm-xml"], reasoning_open=True))


def check_glm_stream(glm_stream) -> bool:
    """23.1: a GLM-4.7 reply streamed in chunks of size characters gives the events of the whole read."""
    cases = [Case(f"{label}, chunks of {size}", (reply, size), _glm_events(reply))
             for label, reply in _GLM_REPLIES.items() for size in (1, 3, 8)]
    return check("Exercise 23.1 (glm_stream)", glm_stream, cases)


_WRONG = {
    "DeepSeek V3.1 read as hermes": (
        "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_exchange_rate<｜tool▁sep｜>"
        '{"base": "EUR", "quote": "JPY"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>', "hermes", "deepseek-v3.1"),
    "GLM-4.7 read as hermes": (
        "<tool_call>get_exchange_rate<arg_key>base</arg_key><arg_value>EUR</arg_value></tool_call>",
        "hermes", "glm-xml"),
    "GLM-4.7 read as qwen-xml": (
        "<tool_call>get_exchange_rate<arg_key>base</arg_key><arg_value>EUR</arg_value></tool_call>",
        "qwen-xml", "glm-xml"),
    "Hermes read as hermes": (
        '<tool_call>\n{"name": "get_exchange_rate", "arguments": {"base": "EUR"}}\n</tool_call>', "hermes", None),
    "Mistral read as hermes": ('[TOOL_CALLS]get_exchange_rate[ARGS]{"base": "EUR"}', "hermes", "mistral"),
    "plain text read as glm-xml": ("One euro is about 162.4 yen.", "glm-xml", None),
}


def check_diagnose_wrong_parser(diagnose) -> bool:
    """23.2: the format whose call a wrong parser left unread (None when the parser reads the reply)."""
    cases = [Case(label, (reply, parser), expected) for label, (reply, parser, expected) in _WRONG.items()]
    return check("Exercise 23.2 (diagnose)", diagnose, cases)


# ---------------------------------------------------------------- notebook 25

_DERIVE = {
    "Quokka, one call": (_toy("<|call|>", "<|args|>", "<|end_call|>"),
                         '<|call|>get_weather<|args|>{"city": "Paris"}<|end_call|>'),
    "Quokka, two calls and text": (_toy("<|call|>", "<|args|>", "<|end_call|>"),
                                   'Checking both.<|call|>get_weather<|args|>{"city": "Paris"}<|end_call|>\n'
                                   '<|call|>get_weather<|args|>{"city": "Lyon", "days": 2}<|end_call|>'),
    "brackets, nested arguments": (_toy("[[call:", "]]", "[[/call]]"),
                                   '[[call:convert]]{"pair": {"base": "EUR"}, "amounts": [1, 2.5]}[[/call]]'),
    "angle tags, no call": (_toy("<fn>", "<sep>", "</fn>"), "One euro is about 162.4 yen."),
}


def _derived_calls(template_source: str, reply: str):
    from templatestudio import detect_format, read_tool_calls
    from templatestudio.templates import ChatTemplate

    return read_tool_calls(reply, detect_format(ChatTemplate("toy", template_source))).calls


def check_read_with_derived(read_with_derived) -> bool:
    """25.1: the calls a reply holds, read with the format derived from a toy template."""
    cases = [Case(label, (source, reply), _derived_calls(source, reply)) for label, (source, reply) in _DERIVE.items()]
    return check("Exercise 25.1 (read_with_derived)", read_with_derived, cases)


def _derives_to(source, expected) -> bool:
    """same(): the template's derived format writes a call between the two literals and reads it back."""
    from templatestudio import ParsedToolCall, detect_format, read_tool_calls
    from templatestudio.templates import ChatTemplate

    if not isinstance(source, str):
        return False
    fmt = detect_format(ChatTemplate("toy", source))
    if fmt is None or not fmt.derived_from:
        return False
    call = ParsedToolCall("get_weather", {"city": "Paris", "days": 2})
    text = fmt.write_call(call)
    opening, closing = expected
    return text.startswith(opening) and text.endswith(closing) and read_tool_calls(text, fmt).calls == [call]


def check_toy_template(toy_template) -> bool:
    """25.2: a template, written by the learner, whose derived format writes each call between two given literals."""
    pairs = [("<|call|>", "<|end_call|>"), ("[[fn]]", "[[/fn]]"), ("<invoke>", "</invoke>"), ("@@", "@@end")]
    cases = [Case(f"calls between {opening!r} and {closing!r}", (opening, closing), (opening, closing),
                  same=_derives_to) for opening, closing in pairs]
    return check("Exercise 25.2 (toy_template)", toy_template, cases)
