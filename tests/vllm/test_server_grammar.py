"""Strict tool calling on a real vLLM server, with an untrained stand-in: every forced call is native and valid.

See ``strict_calls`` for what the stand-in shows and cannot; its figures go
to the terminal (and the README quotes a run of ``tests/vllm/strict_calls.py``).
"""

from __future__ import annotations

import json

import pytest

import strict_calls
from server import report


@pytest.fixture(scope="module")
def served(tmp_path_factory, pytestconfig):
    """The answers of every request, and the server's log."""
    folder = tmp_path_factory.mktemp("untrained")
    model_dir = strict_calls.save_untrained(folder / "model")
    server = strict_calls.server_for(model_dir, folder / "server.log").start()
    try:
        report(pytestconfig, f"untrained stand-in: vLLM ready in {server.ready_seconds:.1f} s")
        answered = strict_calls.run(server)
    finally:
        server.stop()
    for line in strict_calls.figures(answered):
        report(pytestconfig, line)
    return answered, server.log()


@pytest.fixture(scope="module")
def answers(served):
    return served[0]


def test_enough_requests_across_enough_formats_streaming_and_not(answers):
    tagged = [answer for answer in answers if answer.tagged]
    assert len(tagged) >= 50 and len({answer.format for answer in tagged}) >= 4
    assert {answer.way for answer in tagged} == {"plain", "stream", "stream n=2"}


def test_every_request_under_the_tag_gets_valid_calls_in_its_own_format(answers):
    failed = [(a.format, a.way, a.number, a.error, a.choices, a.content)
              for a in answers if a.tagged and not a.valid(strict_calls.tools_for(a.number))]
    assert not failed, failed


def test_each_choice_of_n_2_is_answered_on_its_own(answers):
    for answer in answers:
        if answer.way == "stream n=2" and answer.tagged:
            assert len(answer.choices) == 2 and all(answer.choices), answer


def test_no_answer_holds_a_call_of_another_requests_tools(answers):
    # Every request's tools end in its own number; with 16 requests in flight at once, a call,
    # id or fragment that lands in the wrong stream would name a tool its request never had.
    for answer in answers:
        for calls in answer.choices:
            for call in calls:
                assert call["name"].endswith(f"_{answer.number}"), (answer.number, call)


def test_every_call_has_an_id_of_its_own_across_all_streams(answers):
    ids = [call["id"] for answer in answers for calls in answer.choices for call in calls]
    assert ids and all(ids) and len(set(ids)) == len(ids)


def test_without_the_tag_the_untrained_model_writes_no_valid_call_as_a_rule(answers):
    bare = [answer for answer in answers if not answer.tagged]
    assert bare and all(answer.error is None for answer in bare)
    valid = sum(answer.valid(strict_calls.tools_for(answer.number)) for answer in bare)
    assert valid < len(bare)  # the tag, not the model, wrote the calls above


def test_the_answers_notebook_22_shows_hold_what_it_says():
    # Recorded by `python tests/vllm/strict_calls.py --record` (random weights: never re-recorded
    # by a test); each is held here to the tools of its own request.
    recorded = json.loads(strict_calls.RECORD.read_text(encoding="utf-8"))
    assert set(recorded) == set(strict_calls.FORMATS_TRIED)
    for entry in recorded.values():
        tagged, bare = entry["with_tag"], entry["without_tag"]
        answer = strict_calls.Answer("", "plain", True, tagged["request"], choices=[tagged["tool_calls"]])
        assert answer.valid(strict_calls.tools_for(tagged["request"])) and tagged["valid"]
        assert not bare["valid"] and not bare["tool_calls"]


def test_the_servers_chat_template_override_is_the_template_probed_and_tagged(served):
    # The tokenizer's own template writes hermes; the server renders with --chat-template (a template
    # writing glm-xml). Requests that send no template must be tagged and read in glm-xml: the
    # start-up line says which template was probed, and the calls it let through are valid.
    answers, log = served
    lines = [line for line in log.splitlines() if "(rendered with the server's --chat-template" in line]
    assert lines and all(f"writes tool calls in the {strict_calls.OVERRIDE} format" in line for line in lines), lines
    mine = [answer for answer in answers if answer.format == strict_calls.SERVED_LABEL]
    assert mine and {answer.way for answer in mine} == {"plain", "stream"}
    failed = [(a.way, a.number, a.error, a.choices, a.content)
              for a in mine if not a.valid(strict_calls.tools_for(a.number))]
    assert not failed, failed
