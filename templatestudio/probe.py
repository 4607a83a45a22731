"""Probing a chat template: render a probe call through it and see which format reads it back.

The probe renders a conversation through the template twice, once ending
at the generation prompt and once with an assistant turn that calls a
probe tool (``templatestudio.probe_call``: a distinctive name, an argument
of every JSON type). What the second render adds after the first, cut at
the end of the turn, is the text the template's model is trained to write
for that call; this module does the rendering, ``templatestudio.probe_turn``
the cutting. The format whose reader reads that text back as the probe
call, alone among the registered formats (``templatestudio.probe_read_back``),
is the template's format. Nothing is guessed from the template's wording.

A value may come back as text rather than typed (Qwen3-Coder's XML writes
every value as text) and still count as read back when the text is the
value's JSON or Python spelling. ``TemplateProbe.text_values`` lists those
keys; ``TemplateProbe.shape`` is the ``CallShape`` of the message that
rendered.

A template that lists no tools (DeepSeek V3 and V3.1 expect them in a
system message of your own) still gets the format its call turn is written
in; ``renders_tools`` says it lists none. A template that raises on every
call shape when given tools is probed again without them
(``TemplateProbe.with_tools``): llama.cpp's DeepSeek R1 template pipes a
generator into ``tojson`` whenever tools are passed.

Every render also passes ``template_variables``: the tools as a
``functions`` JSON string and fixed dates (firefunction v2 takes its tools
that way). Not handled: templates that take tools under any other name, and
templates that only render a tool call after its result.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from templatestudio.engine import read_events
from templatestudio.formats import FORMATS, Format
from templatestudio.probe_call import (
    CALL_SHAPES,
    PROBE_ARGUMENTS,  # noqa: F401 - see the note above __all__
    PROBE_NAME,
    PROBE_QUESTION,
    PROBE_TOOL,
    CallShape,
    template_variables,
)
from templatestudio.probe_read_back import readers_of
from templatestudio.probe_turn import call_turn_start, cut_turn, turn_before_conversation_tail, turn_end
from templatestudio.sandbox import (
    DEFAULT_MEMORY_LIMIT,
    TemplateResourceError,
    TemplateTimeout,
    run_sandboxed,
)
from templatestudio.template_errors import advice_for
from templatestudio.templates import ChatTemplate

# The probe call (PROBE_*, CALL_SHAPES) lives in probe_call; PROBE_ARGUMENTS is
# imported only because notebook 14 imports the whole probe call from here.
__all__ = [
    "TemplateProbe",
    "TemplateProbeError",
    "as_template",
    "probe_template",
    "render_call_turn",
]

@dataclass(frozen=True)
class TemplateProbe:
    """What the probe found in one template."""

    name: str
    format: Format | None
    renders_tools: bool
    call_survives: bool
    wire: str  # the call turn as the template wrote it, cut at the end of the turn
    shape: CallShape | None  # the form of the call message that rendered
    text_values: tuple[str, ...] = ()  # probe keys read back as text, not typed
    error: str | None = None  # the template's own errors when no shape rendered, joined by " / " to be shown
    stopped: bool = False  # the sandbox killed the probe (deadline or memory); error says which
    ambiguous: tuple[str, ...] = ()  # every format that read the probe back, when more than one did
    with_tools: bool = True  # False: it raised on every shape with tools, and rendered only without them
    errors: tuple[str, ...] = ()  # each distinct error of error, "TypeName: message", as raised

    @property
    def reason(self) -> str:
        """One line: the format found, or why there is none."""
        if self.error is not None:  # the error as raised, then what it means and what to do
            return f"template error: {self.error} — {advice_for(self.errors or (self.error,))}"
        if self.format is not None and not self.renders_tools:
            return (f"{self.format.name}: {self.format.description}; the template lists no tools "
                    "(describe them in a system message)")
        if not self.renders_tools:
            return "renders no tools"
        if not self.call_survives:
            return "drops the assistant's tool call"
        if self.ambiguous:
            return f"ambiguous: the probe call is read back by {', '.join(self.ambiguous)}"
        if self.format is None:
            return "writes the call in a grammar no registered parser reads"
        return f"{self.format.name}: {self.format.description}"


class TemplateProbeError(ValueError):
    """The template raised on every probe shape; the message carries its own error."""

    def __init__(self, name: str, error: str) -> None:
        self.template_name, self.template_error = name, error
        super().__init__(f"{name}: the template cannot render the probe conversation: {error}")


def _prompt(template: ChatTemplate, tools: list | None) -> str:
    """The probe question rendered with the generation prompt: the same for every call shape."""
    return template.render([PROBE_QUESTION], tools=tools, add_generation_prompt=True, **template_variables(tools))


def render_call_turn(template: ChatTemplate, message: dict, tools: list | None) -> tuple[str, str, str]:
    """(prompt, added, wire) for the probe question then message, an assistant turn that calls tools.

    prompt: the render ending at the generation prompt; added: what the
    render with message adds after it; wire: that, cut at the end of the
    turn (``probe_turn``; the turn is the one holding message's first call).
    The template's own exceptions pass through.
    """
    return _call_turn(template, message, tools, _prompt(template, tools), turn_end(template, tools))


def _call_turn(template: ChatTemplate, message: dict, tools: list | None, prompt: str,
               end: str | None) -> tuple[str, str, str]:
    """``render_call_turn`` given the renders that do not depend on message (prompt, ``turn_end``)."""
    with_call = template.render([PROBE_QUESTION, message], tools=tools, **template_variables(tools))
    added = turn_before_conversation_tail(template, prompt, with_call, tools)
    if added is None:
        added = with_call[call_turn_start(prompt, with_call) :]
    first = message["tool_calls"][0]["function"]["name"]
    return prompt, added, cut_turn(added, end, first)


@functools.lru_cache(maxsize=256)
def _probe(template: ChatTemplate) -> TemplateProbe:
    errors: list[str] = []
    # Without tools only when every shape raised with them; the errors
    # reported are the ones with tools, the way the template is meant to run.
    found = _probe_shapes(template, [PROBE_TOOL], errors) or _probe_shapes(template, None, [])
    if found is not None:
        return found
    return TemplateProbe(template.name, None, False, False, "", None, error=" / ".join(errors), errors=tuple(errors))


def _probe_shapes(template: ChatTemplate, tools: list | None, errors: list[str]) -> TemplateProbe | None:
    """The probe over every call shape, rendered with tools (or None); None when every shape raised."""
    first: TemplateProbe | None = None
    fixed: tuple[str, str | None] | None = None  # (prompt, turn end): rendered once, for every shape
    seen: set[tuple[bool, str]] = set()
    for shape in CALL_SHAPES:
        try:
            if fixed is None:
                fixed = _prompt(template, tools), turn_end(template, tools)
            prompt, added, wire = _call_turn(template, shape.message(), tools, *fixed)
        except MemoryError:
            raise  # not the template refusing a shape: see probe_template
        except Exception as error:  # noqa: BLE001 - a template may raise anything
            text = f"{type(error).__name__}: {error}"
            if text not in errors:
                errors.append(text)
            continue
        renders_tools = PROBE_NAME in prompt
        # Judged before the cut: a template may render the call as a turn of its own.
        call_survives = PROBE_NAME in added
        if (call_survives, wire) in seen:
            continue  # a shape an earlier one rendered alike (an id or content the template ignores): read alike
        seen.add((call_survives, wire))
        # A template that lists no tools may still write calls (DeepSeek V3.1):
        # its format is what the call turn is written in.
        readers = readers_of(wire, prompt) if call_survives else []
        if len(readers) == 1:
            return TemplateProbe(template.name, readers[0][0], renders_tools, True, wire, shape, readers[0][1],
                                 with_tools=tools is not None)
        probe = TemplateProbe(
            template.name, None, renders_tools, call_survives, wire, shape,
            ambiguous=tuple(fmt.name for fmt, _ in readers) if len(readers) > 1 else (),
            with_tools=tools is not None,
        )
        if probe.ambiguous:
            return probe  # two readers read the same text: never pick one
        first = first or probe
    return first


def as_template(source) -> ChatTemplate:
    """A ChatTemplate from a ChatTemplate, template source text, or a tokenizer."""
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


@functools.cache
def _warm_up() -> None:
    """Load in the parent what every probe needs, once, so that forked children inherit it.

    Otherwise each child imports transformers' Jinja machinery and builds
    every format's reading tables anew, and is lost with them: about a
    second per template instead of milliseconds.
    """
    ChatTemplate("warm-up", "{{ messages[0]['content'] }}").render([{"role": "user", "content": "hi"}])
    for fmt in FORMATS.values():
        read_events("", fmt)


@functools.lru_cache(maxsize=256)
def _probe_sandboxed(template: ChatTemplate, deadline: float, memory_limit: int | None) -> TemplateProbe:
    # A stopped probe raises, and lru_cache does not cache raises: only
    # finished probes are remembered.
    _warm_up()
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
    template = as_template(source)
    if deadline is None:
        return _probe(template)
    try:
        return _probe_sandboxed(template, deadline, memory_limit)
    except (TemplateTimeout, TemplateResourceError) as stop:
        error = f"{type(stop).__name__}: {stop}"
        return TemplateProbe(template.name, None, False, False, "", None, error=error, stopped=True, errors=(error,))


