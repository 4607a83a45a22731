"""vLLM's own tool-parser test replies as a peer suite: every disagreement recorded with its reason (issue 23).

The replies come from the vLLM source release named by
TEMPLATESTUDIO_VLLM_SDIST (``make vllm-test`` unpacks it; read in place,
nothing of vLLM's tests is committed). ``peer_cases`` reads each with vLLM's
installed parser and with the format answering for that name. The verdicts
that are not "same calls and content" are recorded in
``fixtures/vllm_case_verdicts.json`` with the reason, from the model's
published format, why the two differ and which side is right; the README's
table is printed from it (``python tests/vllm/peer_cases.py --table``).
After a change: ``python tests/vllm/peer_cases.py --record`` rewrites the
fixture, marking what changed UNREVIEWED, which fails here until a reason
is written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import peer_cases
from peer_cases import RAW, SAME, UNREVIEWED

SDIST = os.environ.get("TEMPLATESTUDIO_VLLM_SDIST", "")
README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def found():
    root = Path(SDIST)
    if not (root / "tests" / "tool_parsers").is_dir():
        # make vllm-test always sets it; a run by hand without it cannot compare anything.
        if os.environ.get("CI"):
            pytest.fail(f"TEMPLATESTUDIO_VLLM_SDIST={SDIST!r} holds no tests/tool_parsers (make vllm-sdist)")
        pytest.skip("set TEMPLATESTUDIO_VLLM_SDIST to an unpacked vLLM source release with its tests")
    return peer_cases.compare(root)


def test_the_harvest_finds_vllms_cases(found):
    verdicts, _ = found
    # vLLM 0.33's tests give several hundred replies holding a declared format's marker.
    assert len(verdicts) > 400


def test_no_reply_is_returned_as_markup_vllm_reads_as_a_call(found):
    verdicts, _ = found
    assert [key for key, seen in verdicts.items() if seen == RAW] == []


def test_every_disagreement_is_recorded_with_its_reason(found):
    verdicts, _ = found
    recorded = peer_cases.load()
    now = {key: seen for key, seen in verdicts.items() if seen != SAME}
    was = {key: entry["verdict"] for key, entry in recorded["cases"].items()}
    changed = {key: (was.get(key), now.get(key)) for key in set(now) | set(was) if now.get(key) != was.get(key)}
    assert changed == {}, "verdicts changed: run tests/vllm/peer_cases.py --record and review"
    unreviewed = [key for key, entry in recorded["cases"].items() if entry["reason"] == UNREVIEWED]
    assert unreviewed == []
    unknown = {entry["reason"] for entry in recorded["cases"].values()} - set(recorded["reasons"])
    assert unknown == set()


def test_every_reason_is_used_and_says_who_is_right():
    recorded = peer_cases.load()
    used = {entry["reason"] for entry in recorded["cases"].values()}
    assert set(recorded["reasons"]) == used
    for reason, text in recorded["reasons"].items():
        assert len(text.split()) >= 8, reason


def test_the_readme_shows_the_table():
    assert peer_cases.table(peer_cases.load()) in README.read_text()


def test_the_verdict_rules_on_made_up_answers():
    from templatestudio import get_format

    hermes = get_format("hermes")
    call = (("f", "{}"),)
    assert peer_cases.verdict(peer_cases.Answer(call, "a"), peer_cases.Answer(call, " a\n"), hermes) == SAME
    assert peer_cases.verdict(peer_cases.Answer(error="x"), peer_cases.Answer(call), hermes) == peer_cases.WE_REFUSE
    assert peer_cases.verdict(peer_cases.Answer(error="x"), peer_cases.Answer(), hermes) == peer_cases.WE_REFUSE_TEXT
    assert peer_cases.verdict(peer_cases.Answer((), "<tool_call>"), peer_cases.Answer(call), hermes) == RAW
    assert peer_cases.verdict(peer_cases.Answer((), "See <tool_call>"), peer_cases.Answer(call), hermes,
                              docstring=True) == peer_cases.DOC_PROSE
    assert peer_cases.verdict(peer_cases.Answer((), "", cut=True), peer_cases.Answer(call), hermes) == peer_cases.WE_CUT
    assert peer_cases.verdict(peer_cases.Answer(call), peer_cases.Answer(), hermes) == peer_cases.WE_READ
    assert peer_cases.verdict(peer_cases.Answer(call), peer_cases.Answer(error="boom"), hermes) == peer_cases.VLLM_ERROR
