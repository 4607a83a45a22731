"""The probe's work, counted: renders and readings per template, not time.

Choosing a format costs a template's Jinja compile and the probe's renders
(issue 23). The renders that do not depend on the call's shape (the prompt
and the end of a plain turn) are made once per probe, not once per shape,
and a shape the template renders exactly as an earlier one (an id or a
content it ignores) is not read again. Counted here on generated templates
that write the call in a grammar no reader knows, so every shape is tried.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio import probe
from templatestudio.calls import ParsedToolCall
from templatestudio.formats import FORMATS
from templatestudio.probe import probe_template
from templatestudio.probe_call import CALL_SHAPES, PROBE_ARGUMENTS, PROBE_NAME
from templatestudio.templates import ChatTemplate

TURNS = (
    "{% for m in messages %}<{{ m.role }}>{{ m.content or '' }}"
    "{% for call in m.tool_calls or [] %}{CALL}{% endfor %}</{{ m.role }}>\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)
# Ways to write a call that no format reads, each written the same for every shape (id and content ignored).
UNREAD_CALLS = ["@@{{ call.function.name }}@@", "CALL {{ call.function.name }}",
                "{{ call.function.name }} :: {{ call.function.name | length }}"]


class Counted:
    def __init__(self, monkeypatch):
        self.renders = self.readings = 0
        render, readers_of = ChatTemplate.render, probe.readers_of

        def counting_render(template, *args, **kwargs):
            self.renders += 1
            return render(template, *args, **kwargs)

        def counting_readers(*args):
            self.readings += 1
            return readers_of(*args)

        monkeypatch.setattr(ChatTemplate, "render", counting_render)
        monkeypatch.setattr(probe, "readers_of", counting_readers)


@pytest.mark.parametrize("call", UNREAD_CALLS)
@settings(max_examples=10, deadline=None)
@given(salt=st.text(alphabet="abcxyz ", max_size=6))
def test_every_shape_is_tried_and_the_shared_renders_are_made_once(call, salt):
    with pytest.MonkeyPatch.context() as monkeypatch:
        counted = Counted(monkeypatch)
        source = "{# " + salt + " #}" + TURNS.replace("{CALL}", call)
        found = probe_template(ChatTemplate("unread " + salt, source))
    assert found.format is None and found.call_survives
    assert counted.renders == 2 + len(CALL_SHAPES)  # the prompt and a plain turn's end, then each shape
    assert counted.readings == 1  # every shape wrote the same turn


@pytest.mark.parametrize("name", ["hermes", "mistral", "llama3-json"])
def test_a_template_read_at_the_first_shape_costs_three_renders(name, monkeypatch):
    # A format's own writing of the call, in a minimal template: read at the first shape.
    fmt = FORMATS[name]
    source = (
        "{% for m in messages %}{% if m.tool_calls %}{{ written }}{% else %}{{ m.content }}{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}{% endif %}"
    )
    counted = Counted(monkeypatch)
    found = probe_template(ChatTemplate(f"minimal {name}", source, (("written", _written(fmt)),)))
    assert found.format is fmt and found.shape == CALL_SHAPES[0], found
    assert counted.renders == 3  # the prompt, a plain turn's end, the first shape


def _written(fmt) -> str:
    return fmt.write_call(ParsedToolCall(PROBE_NAME, PROBE_ARGUMENTS))
