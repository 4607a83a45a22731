"""DeepSeek V4 and V4.1 DSML: the conformance fixtures, generated calls, near misses, the corpus.

- Every CanIToolCall fixture of the two sub-formats (``deepseek/v4.jsonl``,
  ``v41.jsonl`` and the engines' cases tagged with them) read by
  ``read_tool_calls``, whole and streamed, gives the fixture's calls,
  reasoning and content exactly (the whitespace the template writes around
  the block is layout, returned by neither). A fixture with no expected parse is a reply cut inside its only
  call: no call, the cut one in ``Reply.cut``, and strict reading raises.
- Generated calls (typed values, several invokes, several blocks, values
  holding other DSML versions' tags) read back exactly, whole and in any
  chunking.
- Malformed blocks raise with their own message, one per class.
- The V3.2, V4 and V4.1 tags never open each other's calls, and each names
  the format that wrote the call.
- The corpus's V4 templates probe as ``deepseek-v4`` and their own
  rendering of generated calls reads back.
"""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio import corpus, probe, read_tool_calls
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS, deepseek_dsml, deepseek_v4, deepseek_v41
from templatestudio.leaks import find_call_markers
from templatestudio.stream import ToolCallStream
from templatestudio.templates import ChatTemplate
from layout_oracle import laid_out
from oracle import same_json  # the tests' own comparison, not the package's
from test_deepseek_kimi import render_reply

MINE = (deepseek_v4, deepseek_v41)
DSML = (deepseek_dsml, *MINE)  # every DSML version
NAMES = [module.FORMAT.name for module in MINE]
MODULE = {module.FORMAT.name: module for module in DSML}.__getitem__  # a format's module, by its name
SUB_FORMATS = {"x-deepseek-v4": "deepseek-v4", "x-deepseek-v41": "deepseek-v4.1"}  # fixture tag -> format
FIXTURE_FILES = ("v4.jsonl", "v41.jsonl", "engine-tests.jsonl")
needs_corpus = pytest.mark.usefixtures("needs_corpus")


def load_fixtures() -> list[dict]:
    folder = resources.files("canitoolcall") / "_data" / "fixtures" / "deepseek"
    found = []
    for name in FIXTURE_FILES:
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            fixture = json.loads(line)
            if any(tag in SUB_FORMATS for tag in fixture["tags"]):
                found.append(fixture)
    return found


FIXTURES = load_fixtures()


def fixture_format(fixture: dict):
    (name,) = {SUB_FORMATS[tag] for tag in fixture["tags"] if tag in SUB_FORMATS}
    return FORMATS[name]


def stream_events(fmt, pieces: list[str], *, reasoning_open: bool = False, strict: bool = False) -> list:
    stream = ToolCallStream(fmt, reasoning_open=reasoning_open, strict=strict)
    events = [event for piece in pieces for event in stream.feed(piece)]
    return merge_deltas(events + stream.close())


def calls_of(events: list) -> list[ParsedToolCall]:
    return [event.call for event in events if isinstance(event, ToolCallEvent)]


def same_calls(got: list[ParsedToolCall], expected: list[dict]) -> bool:
    return len(got) == len(expected) and all(
        call.name == want["name"] and same_json(call.arguments, want["arguments"]) for call, want in zip(got, expected)
    )


# --- the conformance fixtures --------------------------------------------------------------------


def test_the_fixtures_cover_both_sub_formats():
    tags = [tag for fixture in FIXTURES for tag in fixture["tags"] if tag in SUB_FORMATS]
    assert tags.count("x-deepseek-v4") >= 17 and tags.count("x-deepseek-v41") >= 19


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["id"] for f in FIXTURES])
def test_each_fixture_reads_as_expected_whole_and_streamed(fixture):
    fmt, text, expected = fixture_format(fixture), fixture["raw_output"], fixture.get("expected")
    prefix = fixture["generation_prompt"]
    opened = fmt.reasoning_opened_by(prefix)
    assert opened == fixture["thinking"]
    reply = read_tool_calls(text, fmt, prefix=prefix)
    if expected is None:  # no whole call: the cut call is Reply.cut, never text; strict raises
        assert reply.calls == [] and reply.cut is not None and reply.cut.name == "get_weather"
    else:
        assert same_calls(reply.calls, expected["tool_calls"]), reply.calls
        assert (reply.content or None) == expected["content"]
        assert (reply.reasoning or None) == expected["reasoning_content"]
        assert find_call_markers(reply.content) == []
        block_left_open = fmt.wire.section.open in text and not text.endswith(fmt.wire.section.close)
        assert (reply.cut is not None) == block_left_open
    if reply.cut is not None:
        with pytest.raises(UnparsedToolCall, match="^the reply ended inside a tool call: "):
            read_tool_calls(text, fmt, prefix=prefix, strict=True)
    whole = read_events(text, fmt, reasoning_open=opened, strict=False)
    assert stream_events(fmt, list(text), reasoning_open=opened) == whole
    assert stream_events(fmt, [text[:7], text[7:40], text[40:]], reasoning_open=opened) == whole


def test_a_block_cut_inside_its_second_invoke_keeps_the_first_and_the_cut_one():
    for fixture in FIXTURES:
        if fixture["id"].endswith("-truncated-second-parallel-call"):
            fmt, text = fixture_format(fixture), fixture["raw_output"]
            reply = read_tool_calls(text, fmt)
            assert [call.name for call in reply.calls] == ["get_weather"]
            first_end = text.index(fmt.wire.name.close) + len(fmt.wire.name.close)
            assert reply.cut.name == "search" and reply.cut.raw == text[first_end:]
            assert reply.content == ""  # the invented section closer is never shown


# --- generated calls ------------------------------------------------------------------------------

KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**15, 10**15),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=15))


def marker_text(module) -> st.SearchStrategy[str]:
    """Text holding every DSML version's opening tags (never this module's closers: those are wire limits)."""
    others = [m for m in DSML if m is not module]
    pieces = [module.BLOCK, module.INVOKE + 'x">', module.PARAMETER + 'k" string="true">', "<think>", "</think>",
              *(m.BLOCK for m in others), *(m.BLOCK_END for m in others), *(m.INVOKE_END for m in others)]
    return st.lists(st.one_of(st.sampled_from(pieces), st.text(max_size=5)), max_size=5).map("".join)


def values(module):
    leaves = st.one_of(SCALARS, marker_text(module))
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
                        max_leaves=6)


def calls(module):
    return st.lists(st.builds(ParsedToolCall, KEYS, st.dictionaries(KEYS, values(module), max_size=4)),
                    min_size=1, max_size=3)


def chunked(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(cut, len(text)) for cut in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:])]


@pytest.mark.parametrize("name", NAMES)
def test_generated_blocks_read_back_whole_and_in_any_chunking(name):
    module, fmt = MODULE(name), FORMATS[name]

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(blocks=st.lists(calls(module), min_size=1, max_size=3), prose=st.sampled_from(["", "Sure.\n\n", "x ", "\tTwo  calls,\nnow.\n"]),
           reasoning=st.sampled_from(["", "Plan: two calls.</think>"]), cuts=st.lists(st.integers(0, 2000), max_size=8))
    def round_trip(blocks, prose, reasoning, cuts):
        if any(fmt.limits_for(call.arguments) for block in blocks for call in block):
            return
        text = reasoning + "".join(prose + module.WIRE.write_calls(block) for block in blocks)
        opened = bool(reasoning)
        events = read_events(text, fmt, reasoning_open=opened)
        got = calls_of(events)
        wanted = [call for block in blocks for call in block]
        assert [c.name for c in got] == [c.name for c in wanted], text
        assert all(same_json(a.arguments, b.arguments) for a, b in zip(got, wanted)), (text, got)
        # Every character as text or reasoning, less the whitespace touching the block and the calls.
        raw = [ReasoningDelta(reasoning.removesuffix("</think>"))] if reasoning else []
        for block in blocks:
            raw += ([TextDelta(prose)] if prose else []) + [ToolCallEvent(call) for call in block]
        laid = laid_out(raw, fmt.spacing)
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == \
            "".join(e.text for e in laid if isinstance(e, TextDelta))
        assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == reasoning.removesuffix("</think>")
        if prose == "\tTwo  calls,\nnow.\n" and not reasoning:  # prose whitespace not next to a block stays
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == \
                "\tTwo  calls,\nnow." + "Two  calls,\nnow." * (len(blocks) - 1)
        assert stream_events(fmt, chunked(text, cuts), reasoning_open=opened) == events

    round_trip()


@pytest.mark.parametrize("name", NAMES)
def test_string_values_come_back_exactly_as_written(name):
    module, fmt = MODULE(name), FORMATS[name]

    @settings(max_examples=150, deadline=None)
    @given(value=st.one_of(st.text(), marker_text(module)))
    def exact(value):
        call = ParsedToolCall("f", {"v": value})
        if fmt.limits_for(call.arguments):
            return
        (read,) = calls_of(read_events(module.WIRE.write_call(call), fmt))
        assert read.arguments["v"] == value and type(read.arguments["v"]) is str

    exact()


@pytest.mark.parametrize("name", NAMES)
def test_values_are_typed_by_the_string_attribute_not_guessed(name):
    m = MODULE(name)
    p, end = m.PARAMETER, m.PARAMETER_END
    text = (f'{m.BLOCK}\n{m.INVOKE}f">\n{p}a" string="true">42{end}\n{p}b" string="false">42{end}\n'
            f'{p}c" string="false">"42"{end}\n{p}d" string="true"> null {end}\n{p}e"f" string="false"> [1.0] {end}\n'
            f'{m.INVOKE_END}\n{m.BLOCK_END}')
    (call,) = calls_of(read_events(text, FORMATS[name]))
    assert same_json(call.arguments, {"a": "42", "b": 42, "c": "42", "d": " null ", 'e"f': [1.0]})


@pytest.mark.parametrize("name", NAMES)
def test_a_think_closer_inside_a_value_does_not_cut_the_reply(name):
    m, fmt = MODULE(name), FORMATS[name]
    text = (f'Why.</think>\n\n{m.BLOCK}\n{m.INVOKE}f">\n{m.PARAMETER}a" string="true">x</think>y{m.PARAMETER_END}\n'
            f'{m.INVOKE_END}\n{m.BLOCK_END}')
    reply = read_tool_calls(text, fmt, prefix="<｜Assistant｜><think>")
    assert reply.reasoning == "Why." and reply.calls == [ParsedToolCall("f", {"a": "x</think>y"})]


# --- malformed blocks: one message per class ------------------------------------------------------


def malformed(m) -> list[tuple[str, str, str]]:
    b, be, i, ie, p, pe = m.BLOCK, m.BLOCK_END, m.INVOKE, m.INVOKE_END, m.PARAMETER, m.PARAMETER_END
    return [
        ("type", f'{b}\n{i}a">\n{p}x" string="maybe">1{pe}\n{ie}\n{be}', "has a type other than"),
        ("no type", f'{b}\n{i}a">\n{p}x">1{pe}\n{ie}\n{be}', r"has no '\" string=\"true\">'"),
        ("json", f'{b}\n{i}a">\n{p}x" string="false">[1,{pe}\n{ie}\n{be}', "invalid JSON"),
        ("json and text", f'{b}\n{i}a">\n{p}x" string="false">1 2{pe}\n{ie}\n{be}', "unexpected text after the JSON"),
        ("twice", f'{b}\n{i}a">\n{p}x" string="true">1{pe}\n{p}x" string="true">2{pe}\n{ie}\n{be}', "given twice"),
        ("empty name", f'{b}\n{i}">\n{ie}\n{be}', "has an empty name"),
        ("name line", f'{b}\n{i}a\n">\n{ie}\n{be}', "has no closing '\">' on its line"),
        ("text", f'{b}\n{i}a">\nhello\n{ie}\n{be}', "expected .* or .* at offset"),
        ("text after", f'{b}\n{i}a">\n{ie}\nhello\n{be}', "expected .* or .* at offset"),
        ("no invoke end", f'{b}\n{i}a">\n{p}x" string="true">1{pe}\n{be}', "expected .* or .* at offset"),
        ("empty block", f"{b}\n</x>\n{be}", "expected .* or .* at offset"),
        ("nothing", f"{b}\n{be}", "holds no"),
        ("value open", f'{b}\n{i}a">\n{p}x" string="true">1\n{ie}\n{be}', "has no " + re.escape(pe)),
        ("next opens", f'{b}\n{i}a">\n{p}x{p}y" string="true">1{pe}\n{ie}\n{be}', "not closed before the next one"),
        ("cut", f'{b}\n{i}a">\n{p}x" string="true">1{pe}\n{ie}\n', "^the reply ended inside a tool call"),
        ("cut name", f"{b}\n{i}get_w", "^the reply ended inside a tool call"),
    ]


CASES = [(m.FORMAT.name, why, text, message) for m in MINE for why, text, message in malformed(m)]


@pytest.mark.parametrize(("name", "why", "text", "message"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_malformed_block_raises_its_own_message(name, why, text, message):
    fmt = FORMATS[name]
    with pytest.raises(UnparsedToolCall, match=message) as whole:
        read_events(text, fmt)
    if not message.startswith("^the reply ended"):
        assert str(whole.value).startswith(f"the {name} format cannot read the tool call at offset 0 ")
    with pytest.raises(UnparsedToolCall) as streamed:
        stream_events(fmt, list(text), strict=True)
    assert str(streamed.value) == str(whole.value)


def test_v4_reads_a_self_closed_invoke_and_v41_refuses_it():
    for m in MINE:
        name = m.FORMAT.name
        text = (f'Go.\n\n{m.BLOCK}\n{m.INVOKE}submit"/>\n{m.INVOKE}echo">\n{m.PARAMETER}t" string="true">/>'
                f'{m.PARAMETER_END}\n{m.INVOKE_END}\n{m.BLOCK_END}')
        if name == "deepseek-v4":
            expected = [ParsedToolCall("submit", {}), ParsedToolCall("echo", {"t": "/>"})]
            assert calls_of(read_events(text, FORMATS[name])) == expected
        else:
            with pytest.raises(UnparsedToolCall, match="has no closing"):
                read_events(text, FORMATS[name])
    # Parameters after a self-closed invoke are text between the tags.
    m = deepseek_v4
    with pytest.raises(UnparsedToolCall, match="expected .* at offset"):
        read_events(f'{m.BLOCK}\n{m.INVOKE}a"/>\n{m.PARAMETER}x" string="true">1{m.PARAMETER_END}\n{m.BLOCK_END}',
                    FORMATS["deepseek-v4"])


@pytest.mark.parametrize("name", NAMES)
def test_the_block_named_in_prose_is_text(name):
    m = MODULE(name)
    for text in (f"Calls go in {m.BLOCK} blocks.", f"{m.BLOCK}", f"Type {m.INVOKE}x\"> to call."):
        if text == m.BLOCK:
            with pytest.raises(UnparsedToolCall, match="^the reply ended inside a tool call"):
                read_events(text, FORMATS[name])  # the token alone, at the end: a call cut short
            continue
        assert read_events(text, FORMATS[name]) == [TextDelta(text)]


# --- the DSML versions never open each other's calls ---------------------------------------------

PAIRS = [(r.FORMAT.name, w.FORMAT.name) for r in DSML for w in DSML if r is not w]


@pytest.mark.parametrize(("reader", "writer"), PAIRS, ids=[f"{r}<-{w}" for r, w in PAIRS])
def test_another_dsml_version_raises_naming_its_format(reader, writer):
    for sample in FORMATS[writer].samples:
        if sample.calls:
            with pytest.raises(UnparsedToolCall, match=f"opens a call in the {writer} format$"):
                read_events(sample.text, FORMATS[reader])


LEAKS = [(reader, writer, index) for reader in FORMATS for writer in FORMATS if reader != writer
         and (reader in NAMES or writer in NAMES) for index, sample in enumerate(FORMATS[writer].samples)
         if sample.calls]


@pytest.mark.parametrize(("reader", "writer", "index"), LEAKS, ids=[f"{r}<-{w}-{i}" for r, w, i in LEAKS])
def test_a_call_of_one_format_raises_under_the_other(reader, writer, index):
    with pytest.raises(UnparsedToolCall):
        read_events(FORMATS[writer].samples[index].text, FORMATS[reader])


# --- the corpus ------------------------------------------------------------------------------------

V4_TEMPLATES = ("deepseek-ai-DeepSeek-V4", "deepseek-ai-DeepSeek-V4-rev-2026-07", "llamafactory-deepseek_v4_dsml")


@needs_corpus
@pytest.mark.parametrize("name", V4_TEMPLATES)
def test_each_v4_template_probes_as_v4_and_its_calls_read_back(name):
    template = ChatTemplate.from_file(corpus.corpus_dir() / "templates" / f"{name}.jinja")
    found = probe.probe_template(template)
    assert found.format is FORMATS["deepseek-v4"], found.reason
    assert corpus.LABEL_FORMATS[corpus.label_key(corpus.load_labels()[name])] == "deepseek-v4"
    fmt = found.format

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(turn=st.lists(st.dictionaries(KEYS, values(deepseek_v4), max_size=3), min_size=1, max_size=2))
    def round_trip(turn):
        if any(fmt.limits_for(arguments) for arguments in turn):
            return
        prompt, wire = render_reply(template, found, turn)
        opened = fmt.reasoning_opened_by(prompt) and fmt.reasoning[1] in wire
        got = calls_of(read_events(wire, fmt, reasoning_open=opened))
        assert [c.name for c in got] == [f"tool_{i}" for i in range(len(turn))], wire
        assert all(same_json(c.arguments, a) for c, a in zip(got, turn)), (wire, got)

    round_trip()
