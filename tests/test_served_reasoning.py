"""The served reply in two steps equals the reader's one step (issue 24's reasoning parser, issues 22's plugin layer).

vLLM reads a reply in two steps: the reasoning parser takes the reasoning
off the front (``served_reasoning.ReasoningSplit``), then the tool parser
reads the rest (``served.read_reply(..., reasoning_taken=True)``). The
oracle is the production reader reading the whole reply in one step
(``read_tool_calls``): the two steps must give its reasoning, its content
and its calls, for every format that has a reasoning block, whole and
streamed in any chunking. Replies are generated: reasoning blocks in each
of the format's pairs (opened by the reply or by the prompt, closed or
not), the whitespace a template writes around them, then prose, one of the
format's own sample replies, or one cut short.

Properties beside the oracle: the reasoning never holds a delimiter, the
content never holds the reasoning, and a reply with no block comes back to
the tool parser exactly as written.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle import same_json  # the tests' own comparison, not the package's
from templatestudio import read_tool_calls
from templatestudio.formats import FORMATS
from templatestudio.integrations.served import read_reply
from templatestudio.integrations.served_reasoning import (
    ReasoningSplit,
    closes_reasoning,
    split_reply,
)

REASONING_FORMATS = sorted(name for name, fmt in FORMATS.items() if fmt.reasoning_pairs)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WORDS = st.sampled_from(["plan", "the user", "wants", "Paris", "42", "café", "🌸", "x = 1;", "{", "}", "then"])
PROSE = st.sampled_from(["sunny", "20 °C", "tomorrow", "ok", "[1, 2]", "<b>", "done"])  # no reasoning word in it


def _delimiters(fmt) -> set[str]:
    return {literal for pair in fmt.reasoning_pairs for literal in pair}


@st.composite
def replies(draw):
    """(format, reply text, the pair its prompt opened or None)."""
    fmt = FORMATS[draw(st.sampled_from(REASONING_FORMATS))]
    pair = draw(st.sampled_from(fmt.reasoning_pairs))
    by_prompt = draw(st.booleans())
    reasoning = " ".join(draw(st.lists(WORDS, min_size=1, max_size=8)))
    inner = draw(st.sampled_from(["", "\n", "\n\n"]))
    after = draw(st.sampled_from(["", "\n", "\n\n", " "]))
    body_kind = draw(st.sampled_from(["prose", "sample", "cut", "nothing"]))
    samples = [sample.text for sample in fmt.samples] or ["Hello."]
    sample = draw(st.sampled_from(samples))
    body = {
        "prose": "The answer is " + " ".join(draw(st.lists(PROSE, max_size=5))) + ".",
        "sample": sample,
        "cut": sample[: draw(st.integers(0, max(0, len(sample) - 1)))],
        "nothing": "",
    }[body_kind]
    closed = draw(st.booleans()) or body_kind == "nothing"
    block = ("" if by_prompt else pair[0]) + inner + reasoning + inner + (pair[1] if closed else "")
    has_block = draw(st.booleans()) or by_prompt
    text = (block + after if has_block else "") + body
    if not closed and has_block:
        text = block  # a block never closed holds the rest of the reply
    return fmt, text, pair if by_prompt else None


def _one_step(fmt, text, opened):
    reply = read_tool_calls(text, fmt, reasoning_open=opened or False, strict=False)
    return reply.reasoning, reply.content, [(call.name, call.arguments) for call in reply.calls]


def _two_steps(fmt, reasoning, content):
    body, calls = read_reply(content or "", fmt, reasoning_taken=True)
    return reasoning or "", body, [(call.name, call.arguments) for call, _ in calls]


def _same(got, want) -> bool:
    return got[:2] == want[:2] and len(got[2]) == len(want[2]) and all(
        a[0] == b[0] and same_json(a[1], b[1]) for a, b in zip(got[2], want[2])
    )


@SETTINGS
@given(replies())
def test_reasoning_then_tool_parser_read_what_the_reader_reads(case):
    fmt, text, opened = case
    want = _one_step(fmt, text, opened)
    reasoning, content = split_reply(text, fmt, opened=opened)
    got = _two_steps(fmt, reasoning, content)
    assert _same(got, (want[0] or "", want[1] or "", want[2])), (text, got, want)
    assert not any(delimiter in (reasoning or "") for delimiter in _delimiters(fmt))
    # Taken out, not copied: the reply holds the reasoning and the content side by side
    # (text between two blocks joins the content; a short reasoning such as "{" may
    # recur in a call, and then the reply holds one more copy than the content).
    assert len(content or "") <= len(text) - len((reasoning or "").strip())
    if reasoning and reasoning.strip():
        assert reasoning not in (content or "") or text.count(reasoning) > (content or "").count(reasoning)


@SETTINGS
@given(replies(), st.lists(st.integers(1, 12), min_size=1, max_size=40))
def test_a_streamed_split_is_the_whole_split(case, sizes):
    fmt, text, opened = case
    split, sent, at = ReasoningSplit(fmt, opened=opened), [], 0
    while at < len(text) and not split.ended:
        size = sizes[len(sent) % len(sizes)]
        sent.append(split.feed(text[at : at + size]))
        at += size
    if split.ended:  # vLLM stops feeding the reasoning parser here: the rest goes to the tool parser
        rest, content = "", split.content + text[at:]
    else:
        rest, content = split.close()
    assert ("".join(sent) + rest or None, content or None) == split_reply(text, fmt, opened=opened)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(FORMATS)), st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=60))
def test_a_reply_with_no_block_reaches_the_tool_parser_exactly_as_written(name, text):
    fmt = FORMATS[name]
    if any(opener in text for opener, _ in fmt.reasoning_pairs):
        return
    reasoning, content = split_reply(text, fmt)
    assert reasoning is None and (content or "") == text


def test_the_prompt_decides_whether_a_block_is_open_or_skipped():
    for name in REASONING_FORMATS:
        fmt = FORMATS[name]
        for opener, closer in fmt.reasoning_pairs:
            found = fmt.opened_reasoning(f"user turn{opener}\n")  # a pair whose opener ends the prompt
            assert found in fmt.reasoning_pairs and opener.endswith(found[0]), (name, opener, found)
            assert fmt.opened_reasoning(f"{opener}x{closer}\n\n") is None
            assert closes_reasoning(fmt, f"turn{opener}\n\n{closer}\n\n")
            assert not closes_reasoning(fmt, f"earlier{closer} then the user asks")
            assert not closes_reasoning(fmt, f"turn{opener}\n")
    assert closes_reasoning(FORMATS["pythonic"], "anything")  # no reasoning to wait for
