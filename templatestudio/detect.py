"""Which tool-call format a chat template uses, read from its own rendering.

The probe: render a conversation through the template twice, once ending
at the generation prompt and once with an assistant turn that calls a probe
tool (a distinctive name; a string with spaces, an int, a float, a bool, a
null, a list and a nested object as arguments). What the second render adds
after the first, cut at the end of the turn, is the text the template's
model is trained to write for that call. The format whose parser reads that
text back as the probe call is the template's format. Nothing is guessed
from the template's wording, and no parser is trusted without the template
having written something it reads.

A value may come back as text rather than typed (Qwen3-Coder's XML writes
every value as text; vLLM's Llama 4 pythonic template quotes every value)
and still count as read back when the text is the value's JSON or Python
spelling: the call is intact and the tool's schema types it later.
``TemplateProbe.text_values`` lists those keys.

Not handled: templates that take tools outside the ``tools`` variable (as a
string on the system message), templates that only render a tool call after
its result, and channel-based replies (gpt-oss). Those probe as no format.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from templatestudio.formats import FORMATS, Format, StrictParser
from templatestudio.sandbox import (
    DEFAULT_MEMORY_LIMIT,
    TemplateResourceError,
    TemplateTimeout,
    run_sandboxed,
)
from templatestudio.tools import ParsedToolCall, normalize_arguments

__all__ = [
    "ChatTemplate",
    "NoToolCallFormat",
    "PROBE_ARGUMENTS",
    "PROBE_NAME",
    "PROBE_QUESTION",
    "PROBE_TOOL",
    "ResponseTemplateParser",
    "TemplateProbe",
    "TemplateProbeError",
    "detect_format",
    "load_chat_templates",
    "parser_for",
    "probe_template",
]

PROBE_NAME = "studio_probe_lookup"
PROBE_ARGUMENTS = {
    "note": "two words",
    "count": 42,
    "ratio": 2.5,
    "enabled": True,
    "missing": None,
    "tags": ["alpha", "beta"],
    "nested": {"depth": 2, "mode": "fast"},
}
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": PROBE_NAME,
        "description": "Look something up for the template probe.",
        "parameters": {
            "type": "object",
            "properties": {
                "note": {"type": "string", "description": "A short note."},
                "count": {"type": "integer", "description": "How many."},
                "ratio": {"type": "number", "description": "A ratio."},
                "enabled": {"type": "boolean", "description": "Whether it is on."},
                "missing": {"type": "string", "nullable": True, "description": "Maybe nothing."},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels."},
                "nested": {
                    "type": "object",
                    "description": "Settings.",
                    "properties": {"depth": {"type": "integer"}, "mode": {"type": "string"}},
                },
            },
            "required": ["note", "count"],
        },
    },
}
PROBE_QUESTION = {"role": "user", "content": "Please run the probe lookup."}
# A reply no template writes by itself, to find where a plain turn ends.
_REPLY_MARK = "PROBE-REPLY-7F3A"


def _call_message(*, content: bool, nine_char_id: bool) -> dict:
    call: dict = {"type": "function", "function": {"name": PROBE_NAME, "arguments": PROBE_ARGUMENTS}}
    if nine_char_id:
        call["id"] = "call00001"
    message: dict = {"role": "assistant", "tool_calls": [call]}
    if content:
        message["content"] = ""
    return message


# Tried in order until one renders. The probe conversation is one user turn
# then one assistant turn, so templates that demand strict user/assistant
# alternation accept it as it is; no retry is needed for them.
_CALL_SHAPES = (
    ("no content", _call_message(content=False, nine_char_id=False)),
    ("string content", _call_message(content=True, nine_char_id=False)),
    ("string content, 9-char id", _call_message(content=True, nine_char_id=True)),
)


_EMPTY_BOS_EOS = (("bos_token", ""), ("eos_token", ""))


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template's source and what it is rendered with.

    special_tokens are the template variables a tokenizer passes along
    (bos_token, eos_token, ...). A bare .jinja file has none, and many
    templates fail on an undefined eos_token, so files and configs that do
    not name bos and eos render them as empty strings. Two ChatTemplates are
    equal when name, source and special tokens are, which is what probe
    results are cached on.
    """

    name: str
    source: str
    special_tokens: tuple[tuple[str, str], ...] = _EMPTY_BOS_EOS
    response_template: dict | None = field(default=None, compare=False, repr=False)

    def render(self, conversation: list[dict], *, tools=None, add_generation_prompt=False) -> str:
        """Render through transformers' own Jinja machinery (what apply_chat_template runs)."""
        from transformers.utils.chat_template_utils import render_jinja_template

        rendered, _ = render_jinja_template(
            conversations=[conversation],
            tools=tools,
            chat_template=self.source,
            add_generation_prompt=add_generation_prompt,
            **dict(self.special_tokens),
        )
        return rendered[0]

    @classmethod
    def from_tokenizer(cls, tokenizer) -> ChatTemplate:
        """The template apply_chat_template(..., tools=...) would use for tokenizer."""
        if tokenizer.chat_template is None:
            raise NoToolCallFormat(f"{tokenizer.name_or_path}: the tokenizer has no chat template")
        source = tokenizer.get_chat_template(tools=[PROBE_TOOL])
        tokens = {k: v for k, v in tokenizer.special_tokens_map.items() if isinstance(v, str)}
        return cls(
            tokenizer.name_or_path,
            source,
            tuple(sorted(tokens.items())),
            getattr(tokenizer, "response_template", None),
        )

    @classmethod
    def from_file(cls, path: str | Path) -> ChatTemplate:
        """A bare Jinja file, rendered without special tokens."""
        path = Path(path)
        return cls(path.stem, path.read_text(encoding="utf-8"))

    @classmethod
    def from_config(cls, name: str, config: dict, jinja_source: str | None = None) -> ChatTemplate:
        """From a tokenizer_config.json dict, with an optional chat_template.jinja beside it.

        A config holding several named templates uses ``tool_use`` when
        present, else ``default``, as transformers does when tools are passed.
        """
        source = jinja_source if jinja_source is not None else config.get("chat_template")
        if isinstance(source, list):
            named = {item.get("name"): item.get("template") for item in source}
            source = named.get("tool_use") or named.get("default")
        if not isinstance(source, str):
            raise NoToolCallFormat(f"{name}: no chat template in its tokenizer config")
        tokens = dict(_EMPTY_BOS_EOS)
        for key in ("bos_token", "eos_token", "unk_token", "pad_token"):
            value = config.get(key)
            if isinstance(value, dict):  # an AddedToken as older configs store it
                value = value.get("content")
            if isinstance(value, str):
                tokens[key] = value
        return cls(name, source, tuple(sorted(tokens.items())), config.get("response_template"))

    @classmethod
    def from_dir(cls, path: str | Path) -> ChatTemplate:
        """A model folder: tokenizer_config.json and/or chat_template.jinja."""
        path = Path(path)
        config_file, jinja_file = path / "tokenizer_config.json", path / "chat_template.jinja"
        config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.exists() else {}
        jinja = jinja_file.read_text(encoding="utf-8") if jinja_file.exists() else None
        return cls.from_config(path.name, config, jinja)

    @classmethod
    def from_hub(cls, repo_id: str) -> ChatTemplate:
        """Download only tokenizer_config.json (and chat_template.jinja if the repo has one).

        No vocabulary and no weights: a few kilobytes, then the Hugging
        Face cache serves them.
        """
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError

        config_path = hf_hub_download(repo_id, "tokenizer_config.json")
        config = json.loads(Path(config_path).read_text(encoding="utf-8"))
        try:
            jinja = Path(hf_hub_download(repo_id, "chat_template.jinja")).read_text(encoding="utf-8")
        except EntryNotFoundError:
            jinja = None
        return cls.from_config(repo_id, config, jinja)


def load_chat_templates(target: str | Path) -> list[ChatTemplate]:
    """The templates a target names.

    A target is a .jinja file, a model folder (tokenizer_config.json and/or
    chat_template.jinja), a folder of .jinja files, or a Hub repo id.
    """
    path = Path(target)
    if path.is_file():
        if path.name == "tokenizer_config.json":
            return [ChatTemplate.from_dir(path.parent)]
        return [ChatTemplate.from_file(path)]
    if path.is_dir():
        if (path / "tokenizer_config.json").exists() or (path / "chat_template.jinja").exists():
            return [ChatTemplate.from_dir(path)]
        templates = [ChatTemplate.from_file(file) for file in sorted(path.glob("*.jinja"))]
        if not templates:
            raise FileNotFoundError(f"{target}: no tokenizer_config.json or .jinja files in this folder")
        return templates
    return [ChatTemplate.from_hub(str(target))]


@dataclass(frozen=True)
class TemplateProbe:
    """What the probe found in one template."""

    name: str
    format: Format | None
    renders_tools: bool
    call_survives: bool
    wire: str  # the call turn as the template wrote it, cut at the end of the turn
    shape: str | None  # the call-message shape that rendered
    text_values: tuple[str, ...] = ()  # probe keys read back as text, not typed
    error: str | None = None  # the template's own error when no shape rendered
    stopped: bool = False  # the sandbox killed the probe (deadline or memory); error says which

    @property
    def reason(self) -> str:
        """One line: the format found, or why there is none."""
        if self.error is not None:
            return f"template error: {self.error}"
        if not self.renders_tools:
            return "renders no tools"
        if not self.call_survives:
            return "drops the assistant's tool call"
        if self.format is None:
            return "writes the call in a grammar no registered parser reads"
        return f"{self.format.name}: {self.format.description}"


class TemplateProbeError(ValueError):
    """The template raised on every probe shape; the message carries its own error."""

    def __init__(self, name: str, error: str) -> None:
        self.template_name, self.template_error = name, error
        super().__init__(f"{name}: the template cannot render the probe conversation: {error}")


class NoToolCallFormat(ValueError):
    """No tool-call format could be found for a template or tokenizer."""


def _call_turn_start(prompt: str, with_call: str) -> int:
    """Where the assistant's call turn starts in with_call.

    Normally the generation prompt is a prefix of the render with the call.
    Templates whose prompt pre-writes an empty reasoning block that history
    turns do not have (Gemma 4's empty thought channel, Nemotron's open
    ``<think>``) share only part of it; the cut then moves back to just
    after the last ``>`` or newline they share, so it never splits a marker.
    """
    if with_call.startswith(prompt):
        return len(prompt)
    limit = min(len(prompt), len(with_call))
    index = 0
    while index < limit and prompt[index] == with_call[index]:
        index += 1
    return max(with_call.rfind(">", 0, index), with_call.rfind("\n", 0, index)) + 1


def _turn_end(template: ChatTemplate) -> str | None:
    """What the template writes after a plain assistant reply: its end-of-turn text."""
    reply = {"role": "assistant", "content": _REPLY_MARK}
    try:
        rendered = template.render([PROBE_QUESTION, reply], tools=[PROBE_TOOL])
    except MemoryError:
        raise  # not the template refusing a shape: see probe_template
    except Exception:  # noqa: BLE001 - any template failure means "unknown", not a crash
        return None
    at = rendered.rfind(_REPLY_MARK)
    if at == -1:
        return None
    return rendered[at + len(_REPLY_MARK) :].strip() or None


def _cut_turn(text: str, turn_end: str | None) -> str:
    if turn_end:
        at = text.find(turn_end)
        if at != -1:
            text = text[:at]
    return text.rstrip()


def same_json_value(value: object, expected: object) -> bool:
    """Equal and of the same JSON type all the way down (True is not 1)."""
    if isinstance(expected, dict):
        return (
            isinstance(value, dict)
            and value.keys() == expected.keys()
            and all(same_json_value(value[key], expected[key]) for key in expected)
        )
    if isinstance(expected, list):
        return (
            isinstance(value, list)
            and len(value) == len(expected)
            and all(same_json_value(v, e) for v, e in zip(value, expected))
        )
    return type(value) is type(expected) and value == expected


def _spellings(expected: object) -> set[str]:
    """The text a template may write for a non-string value: JSON's or Python's."""
    return {json.dumps(expected), json.dumps(expected, separators=(",", ":")), str(expected)}


def _read_back(calls: list[ParsedToolCall]) -> tuple[str, ...] | None:
    """None unless calls is exactly the probe call; else the keys that came back as text."""
    if len(calls) != 1 or calls[0].name != PROBE_NAME:
        return None
    arguments = calls[0].arguments
    if arguments.keys() != PROBE_ARGUMENTS.keys():
        return None
    as_text = []
    for key, expected in PROBE_ARGUMENTS.items():
        value = arguments[key]
        if same_json_value(value, expected):
            continue
        if isinstance(value, str) and value in _spellings(expected):
            as_text.append(key)
            continue
        return None
    return tuple(as_text)


def _render_probe(template: ChatTemplate) -> tuple[str, str, str] | str:
    """(prompt, render with the call, shape), or the template's errors as one string."""
    errors: list[str] = []
    for shape, message in _CALL_SHAPES:
        try:
            prompt = template.render([PROBE_QUESTION], tools=[PROBE_TOOL], add_generation_prompt=True)
            with_call = template.render([PROBE_QUESTION, message], tools=[PROBE_TOOL])
        except MemoryError:
            raise  # not the template refusing a shape: see probe_template
        except Exception as error:  # noqa: BLE001 - a template may raise anything
            text = f"{type(error).__name__}: {error}"
            if text not in errors:
                errors.append(text)
            continue
        return prompt, with_call, shape
    return " / ".join(errors)


@functools.lru_cache(maxsize=256)
def _probe(template: ChatTemplate) -> TemplateProbe:
    rendered = _render_probe(template)
    if isinstance(rendered, str):
        return TemplateProbe(template.name, None, False, False, "", None, error=rendered)
    prompt, with_call, shape = rendered
    added = with_call[_call_turn_start(prompt, with_call) :]
    wire = _cut_turn(added, _turn_end(template))
    renders_tools = PROBE_NAME in prompt
    # Judged before the cut: a template may render the call as a turn of its own.
    call_survives = PROBE_NAME in added
    readers = []
    for fmt in FORMATS.values():
        as_text = _read_back(fmt.parser.parse(wire))
        if as_text is not None:
            readers.append((fmt, as_text))
    # Two strict parsers reading the same text would be a registry bug; never pick one.
    found = readers[0] if len(readers) == 1 and renders_tools and call_survives else (None, ())
    return TemplateProbe(
        template.name, found[0], renders_tools, call_survives, wire, shape, found[1]
    )


def _as_template(source) -> ChatTemplate:
    if isinstance(source, ChatTemplate):
        return source
    if isinstance(source, str):
        return ChatTemplate("template", source)
    if hasattr(source, "chat_template") and hasattr(source, "special_tokens_map"):
        return ChatTemplate.from_tokenizer(source)
    raise TypeError(
        f"expected a template source str, a ChatTemplate or a tokenizer, got {type(source).__name__}"
    )


def _probe_for_parent(template: ChatTemplate) -> tuple[TemplateProbe, str | None]:
    """Runs in the sandbox's child: the probe, with its format sent back by name.

    The parent looks the name up in FORMATS, so it gets the registry's own
    Format object rather than an unpickled copy.
    """
    probe = _probe(template)
    return dataclasses.replace(probe, format=None), probe.format.name if probe.format else None


@functools.lru_cache(maxsize=256)
def _probe_sandboxed(template: ChatTemplate, deadline: float, memory_limit: int | None) -> TemplateProbe:
    # A stopped probe raises, and lru_cache does not cache raises: only
    # finished probes are remembered.
    probe, format_name = run_sandboxed(
        functools.partial(_probe_for_parent, template),
        name=template.name,
        deadline=deadline,
        memory_limit=memory_limit,
    )
    return dataclasses.replace(probe, format=FORMATS[format_name] if format_name else None)


def probe_template(
    source, *, deadline: float | None = None, memory_limit: int | None = DEFAULT_MEMORY_LIMIT
) -> TemplateProbe:
    """Probe a template source string, a ChatTemplate or a tokenizer; never raises on a template's error.

    Templates are code from strangers, and Jinja's sandbox bounds neither
    time nor memory. With ``deadline`` (seconds) the probe runs in a forked
    child process (``templatestudio.sandbox``) killed at the deadline and
    allowed ``memory_limit`` bytes beyond what it inherited; a probe stopped
    that way comes back with ``stopped=True`` and an error naming
    TemplateTimeout or TemplateResourceError and the limit. Without a
    deadline (the default, for notebooks and tests of trusted templates)
    the probe runs in-process, and a template that exhausts memory raises
    MemoryError instead of being reported as an error of the template.
    """
    template = _as_template(source)
    if deadline is None:
        return _probe(template)
    try:
        return _probe_sandboxed(template, deadline, memory_limit)
    except (TemplateTimeout, TemplateResourceError) as stop:
        error = f"{type(stop).__name__}: {stop}"
        return TemplateProbe(template.name, None, False, False, "", None, error=error, stopped=True)


def detect_format(source) -> Format | None:
    """The registered format the template writes calls in, or None.

    None when the template renders no tools, drops the assistant's call, or
    writes it in a grammar no parser reads back exactly. A template that
    raises on every probe shape raises TemplateProbeError carrying its error.
    """
    probe = probe_template(source)
    if probe.error is not None:
        raise TemplateProbeError(probe.name, probe.error)
    return probe.format


class ResponseTemplateParser:
    """A tokenizer's shipped response template, behind the ToolCallParser interface.

    parse() passes an empty prefix, so it suits replies that start where the
    generation prompt ended; templates that pre-write part of the reply
    (an opening ``<think>``) need ``prefix=`` set to the prompt.
    """

    def __init__(self, tokenizer, prefix: str = "") -> None:
        self.tokenizer, self.prefix = tokenizer, prefix

    def parse(self, text: str) -> list[ParsedToolCall]:
        message = self.tokenizer.parse_response(text, prefix=self.prefix)
        return [
            ParsedToolCall(call["function"]["name"], normalize_arguments(call["function"]["arguments"]))
            for call in message.get("tool_calls", [])
        ]

    def __repr__(self) -> str:
        return f"ResponseTemplateParser({self.tokenizer.name_or_path!r})"


def parser_for(tokenizer) -> ResponseTemplateParser | StrictParser:
    """What reads this tokenizer's tool calls: its response template, else the detected format's parser.

    Raises NoToolCallFormat, naming the model, when neither exists, and
    TemplateProbeError when the template cannot render a tool call at all.
    """
    if getattr(tokenizer, "response_template", None) is not None:
        return ResponseTemplateParser(tokenizer)
    probe = probe_template(tokenizer)
    if probe.error is not None:
        raise TemplateProbeError(probe.name, probe.error)
    if probe.format is None:
        raise NoToolCallFormat(
            f"{probe.name}: no tool-call format found in its chat template ({probe.reason}) "
            "and it ships no response template"
        )
    return probe.format.parser
