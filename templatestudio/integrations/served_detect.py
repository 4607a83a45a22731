"""The served format: what the vLLM plugin finds a tokenizer's chat template writes, once per server.

- ``detect_served_format(tokenizer)``: the format the tokenizer's chat
  template writes, probed once per template and logged; ``NoToolCallFormat``
  with one message for the server log when there is none. The probe runs
  in-process, not sandboxed: the server renders the same template
  in-process for every request anyway.
- ``TemplateView`` and ``request_served_format``: a request rendered with
  its own ``chat_template`` (or the server's override) gets that
  template's format, probed and cached the same way.
- ``named_served_format``: the format an operator named, no template probed.
- ``grammar_refusals``: the tool_choice modes in which a format has no
  structural tag, found once per detection and said in the start-up line
  (``DetectedFormat.describe``).

Engine-neutral, as ``served`` is: no vLLM import. Not handled: reading a
reply in the format found (``served``), and the structural tags themselves
(``served_grammar``).
"""

from __future__ import annotations

from dataclasses import dataclass

from templatestudio.calls import NoToolCallFormat
from templatestudio.detect import detect_format
from templatestudio.formats import Format, get_format
from templatestudio.integrations.served_log import logger
from templatestudio.probe import TemplateProbeError, probe_template
from templatestudio.probe_call import CallShape
from templatestudio.wire.structural_tag import refusal

__all__ = [
    "DetectedFormat",
    "TemplateView",
    "detect_served_format",
    "grammar_refusals",
    "named_served_format",
    "request_served_format",
]



GRAMMAR_MODES = ("required", "auto")


def grammar_refusals(fmt: Format) -> tuple[tuple[str, str], ...]:
    """(mode, why) for each tool_choice mode in which fmt has no structural tag; empty when it has both."""
    if fmt.wire is None:
        return tuple((mode, f"{fmt.name} declares no wire shape") for mode in GRAMMAR_MODES)
    found = ((mode, refusal(fmt.wire, mode)) for mode in GRAMMAR_MODES)
    return tuple((mode, why) for mode, why in found if why is not None)


@dataclass(frozen=True)
class DetectedFormat:
    """What the probe of the served template found."""

    model: str
    format: Format
    text_values: tuple[str, ...]  # probe arguments the template writes as text, not typed
    call_shape: CallShape | None  # the form of assistant call message the template accepted (None: named)
    ships_response_template: bool
    # (mode, why) where the format has no structural tag (grammar_refusals), found once per detection.
    no_grammar: tuple[tuple[str, str], ...]

    def grammar_refusal(self, mode: str) -> str | None:
        """Why there is no structural tag in mode ("required" or "auto"), None when there is one."""
        return dict(self.no_grammar).get(mode)

    @property
    def id_length(self) -> int | None:
        """The length of id the template's calls need (Mistral's nine), None for none."""
        return self.call_shape.id_length if self.call_shape is not None else None

    def describe(self) -> str:
        """The line the plugin logs at start-up, ending with what strict tool calling gets."""
        return self._found() + self._grammar()

    def _found(self) -> str:
        if self.call_shape is None:
            return (f"templatestudio: {self.model} is served in the {self.format.name} format "
                    f"({self.format.description}), as its parser's name says (no template probed)")
        if self.text_values:
            arguments = f"values of {', '.join(self.text_values)} written as text"
        else:
            arguments = "typed as written"
        shipped = "; it also ships a response template" if self.ships_response_template else ""
        if self.format.derived_from:
            values = "written as text, typed by the tool's schema" if self.format.values_are_text else "typed as written"
            return (
                f"templatestudio: {self.model}'s chat template matches no registered format, so its wire shape "
                f"was derived from the template and checked by round trip ({self.format.description}); "
                f"arguments {values}; call turns rendered with {self.call_shape}{shipped}"
            )
        return (
            f"templatestudio: {self.model} writes tool calls in the {self.format.name} format "
            f"({self.format.description}); arguments {arguments}; "
            f"call turns rendered with {self.call_shape}{shipped}"
        )

    def _grammar(self) -> str:
        required, auto = self.grammar_refusal("required"), self.grammar_refusal("auto")
        if required is not None:
            return (f"; no structural tag ({required}): tool_choice 'required' and named tools keep "
                    "vLLM's JSON")
        if auto is not None:
            return f"; structural tags for 'required' and named tools, none for 'auto' ({auto})"
        return "; structural tags for every tool_choice"


_detected: dict[tuple[str, str], DetectedFormat] = {}


def detect_served_format(tokenizer) -> DetectedFormat:
    """The format the tokenizer's chat template writes; the one place the plugin calls the detector."""
    name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    if isinstance(tokenizer, TemplateView):
        name = f"{name} (rendered with {tokenizer.where})"
    template = getattr(tokenizer, "chat_template", None)
    key = (name, template if isinstance(template, str) else repr(template))
    if key in _detected:
        return _detected[key]
    ships = getattr(tokenizer, "response_template", None) is not None
    by_hand = "choose vLLM's --tool-call-parser for this model by hand"
    if ships:
        by_hand += ", or --tool-call-parser hf to read the response template it ships"
    if template is None:
        raise NoToolCallFormat(f"templatestudio: {name} has no chat template to read a format from; {by_hand}")
    try:
        fmt = detect_format(tokenizer, deadline=None)
    except TemplateProbeError as error:
        raise NoToolCallFormat(
            f"templatestudio: the chat template of {name} cannot render a tool call "
            f"({error.template_error}); {by_hand}"
        ) from None
    except NoToolCallFormat as error:  # AmbiguousFormat: two formats read the probe back
        raise NoToolCallFormat(f"templatestudio: {error}; {by_hand}") from None
    probe = probe_template(tokenizer)  # cached: the probe detect_format just ran
    if fmt is None:
        raise NoToolCallFormat(
            f"templatestudio: the chat template of {name} writes no tool-call format "
            f"templatestudio reads ({probe.reason}); {by_hand}"
        )
    found = DetectedFormat(name, fmt, tuple(probe.text_values), probe.shape, ships, grammar_refusals(fmt))
    _detected[key] = found
    logger.info("%s", found.describe())
    return found


class TemplateView:
    """A tokenizer seen with another chat template: a request's own, or the server's override.

    Everything but the template (name, special tokens, response template) is
    the tokenizer's; ``detect_served_format`` then probes this template, and
    caches the answer by (name, template) as it does for the tokenizer's own.
    where says which template it is, for the start-up line.
    """

    def __init__(self, tokenizer, template: str, *, where: str = "the request's chat_template") -> None:
        self._tokenizer, self.chat_template, self.where = tokenizer, template, where

    def get_chat_template(self, tools=None) -> str:
        return self.chat_template

    def __getattr__(self, name: str):
        return getattr(self._tokenizer, name)


def request_served_format(tokenizer, template: str | None, served: DetectedFormat) -> DetectedFormat:
    """The format of the template a request is rendered with: its own ``chat_template``, else served.

    Raises ``NoToolCallFormat`` (with the detector's reason) when the
    request's template writes no format templatestudio reads.
    """
    if not template or template == getattr(tokenizer, "chat_template", None):
        return served
    return detect_served_format(TemplateView(tokenizer, template))


def named_served_format(tokenizer, name: str) -> DetectedFormat:
    """The format an operator named (``--tool-call-parser templatestudio-NAME``): no template is probed.

    For a model with no chat template, or one whose template writes no call
    (DeepSeek V4.1 and Kimi K3 publish none). Raises ``UnknownFormat`` for a
    name no format has. Calls get the server's own ids.
    """
    model = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    key = (model, f"named:{name}")
    if key not in _detected:
        fmt = get_format(name)
        ships = getattr(tokenizer, "response_template", None) is not None
        found = DetectedFormat(model, fmt, (), None, ships, grammar_refusals(fmt))
        _detected[key] = found
        logger.info("%s", found.describe())
    return _detected[key]
