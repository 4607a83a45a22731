"""Pairing: every tool result answers an open call, and truncation keeps it so."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from message_strategies import conversations
from templatestudio.messages import InvalidConversation, assert_valid, validate_conversation
from templatestudio.pairing import (
    PairingProblem,
    assert_paired,
    truncate_history,
    validate_tool_pairing,
)
from templatestudio.parallel import parallel_tool_call_message, result_for_call
from templatestudio.render import render
from templatestudio.tools import tool_call_message, tool_result_message

USER = {"role": "user", "content": "How many yen is one euro, and pounds per dollar?"}
SYSTEM = {"role": "system", "content": "You convert currencies."}
ANSWER = {"role": "assistant", "content": "About 162.4 yen and 0.79 pounds."}


def calls_without_ids(*names: str) -> dict:
    """One assistant turn calling names in order, with no ids (Qwen3's situation)."""
    return {
        "role": "assistant",
        "tool_calls": [tool_call_message(name, {})["tool_calls"][0] for name in names],
    }


def kinds(conversation, **options) -> list[tuple[int, str]]:
    return [(p.index, p.kind) for p in validate_tool_pairing(conversation, **options)]


# --- the cases the issue names -------------------------------------------------


def test_paired_conversation_has_no_problems():
    turn = parallel_tool_call_message(
        [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}},
         {"name": "get_exchange_rate", "arguments": {"base": "USD", "quote": "GBP"}}]
    )
    results = [
        result_for_call(call, text) for call, text in zip(turn["tool_calls"], ["162.4", "0.79"])
    ]
    assert validate_tool_pairing([SYSTEM, USER, turn, *results, ANSWER]) == []


def test_result_with_no_call_before_it_is_an_orphan():
    problems = validate_tool_pairing([USER, tool_result_message("get_exchange_rate", "162.4")])
    assert problems == [
        PairingProblem(
            1,
            "orphan_result",
            "message 1: tool result 'get_exchange_rate' has no open call before it",
        )
    ]
    assert str(problems[0]) == problems[0].message


def test_result_after_a_plain_assistant_turn_is_an_orphan():
    conversation = [USER, ANSWER, tool_result_message("get_exchange_rate", "162.4")]
    assert kinds(conversation) == [(2, "orphan_result")]


def test_extra_result_after_every_call_is_answered_is_an_orphan():
    conversation = [
        USER, calls_without_ids("a"), tool_result_message("a", "1"), tool_result_message("b", "2")
    ]
    (problem,) = validate_tool_pairing(conversation)
    assert (problem.index, problem.kind) == (3, "orphan_result")
    assert "every call of message 1 is already answered" in problem.message


def test_call_unanswered_when_the_next_user_turn_starts():
    conversation = [USER, calls_without_ids("a", "b"), tool_result_message("a", "1"), USER]
    (problem,) = validate_tool_pairing(conversation)
    assert problem == PairingProblem(
        1,
        "unanswered_call",
        "message 1: tool call 1 ('b') has no result before message 3 (user) starts",
    )


def test_call_unanswered_when_the_next_assistant_turn_starts():
    conversation = [USER, calls_without_ids("a"), ANSWER]
    assert kinds(conversation) == [(1, "unanswered_call")]
    assert "message 2 (assistant) starts" in validate_tool_pairing(conversation)[0].message


def test_pending_call_at_the_end_is_allowed_unless_asked_not_to():
    conversation = [USER, calls_without_ids("a", "b"), tool_result_message("a", "1")]
    assert validate_tool_pairing(conversation) == []
    (problem,) = validate_tool_pairing(conversation, allow_pending=False)
    assert problem.kind == "unanswered_call"
    assert problem.message.endswith("has no result before the conversation ends")


def test_result_whose_name_matches_no_open_call():
    conversation = [USER, calls_without_ids("a"), tool_result_message("get_weather", "rain")]
    (problem,) = validate_tool_pairing(conversation)
    assert problem == PairingProblem(
        2,
        "unmatched_result",
        "message 2: tool result 'get_weather' matches no open call of message 1 (open: 'a')",
    )


def test_result_whose_id_matches_no_open_call():
    turn = parallel_tool_call_message([{"name": "a", "arguments": {}}])
    stray = {**tool_result_message("a", "1"), "tool_call_id": "call00009"}
    (problem,) = validate_tool_pairing([USER, turn, stray])
    assert problem.kind == "unmatched_result"
    assert problem.message == (
        "message 2: tool result 'a', tool_call_id 'call00009' matches no open call "
        "of message 1 (open: 'a' (call00001))"
    )


def test_id_that_matches_but_name_that_does_not_is_unmatched():
    turn = parallel_tool_call_message([{"name": "a", "arguments": {}}])
    wrong = {**tool_result_message("b", "1"), "tool_call_id": "call00001"}
    assert kinds([USER, turn, wrong]) == [(2, "unmatched_result")]


def test_id_on_a_result_when_the_calls_carry_none_is_unmatched():
    result = {**tool_result_message("a", "1"), "tool_call_id": "call00001"}
    assert kinds([USER, calls_without_ids("a"), result]) == [(2, "unmatched_result")]


def test_two_results_for_one_call_by_name():
    conversation = [
        USER, calls_without_ids("a", "b"),
        tool_result_message("a", "1"),
        tool_result_message("a", "1 again"),
        tool_result_message("b", "2"),
    ]
    (problem,) = validate_tool_pairing(conversation)
    assert problem == PairingProblem(
        3,
        "duplicate_result",
        "message 3: tool result 'a' is a second result for tool call 0 ('a') of message 1",
    )


def test_two_results_for_one_call_by_id():
    turn = parallel_tool_call_message([{"name": "a", "arguments": {}}])
    answer = result_for_call(turn["tool_calls"][0], "1")
    assert kinds([USER, turn, answer, dict(answer)]) == [(3, "duplicate_result")]


def test_results_out_of_call_order_without_ids():
    conversation = [
        USER,
        calls_without_ids("a", "b"),
        tool_result_message("b", "2"),
        tool_result_message("a", "1"),
    ]
    (problem,) = validate_tool_pairing(conversation)
    assert problem == PairingProblem(
        2,
        "out_of_order",
        "message 2: tool result 'b' answers tool call 1 ('b') of message 1 before tool call 0 "
        "('a') is answered; without ids, results must follow call order",
    )


def test_results_with_ids_may_come_in_any_order_unless_strict():
    turn = parallel_tool_call_message(
        [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]
    )
    first, second = (result_for_call(call, "x") for call in turn["tool_calls"])
    conversation = [USER, turn, second, first]
    assert validate_tool_pairing(conversation) == []
    (problem,) = validate_tool_pairing(conversation, strict_order=True)
    assert problem.kind == "out_of_order"
    assert problem.message.endswith("strict_order is on, results must follow call order")


def test_results_with_neither_id_nor_name_answer_calls_by_position():
    nameless = {"role": "tool", "content": "1"}
    two = [USER, calls_without_ids("a", "b"), nameless, dict(nameless)]
    assert validate_tool_pairing(two) == []
    extra = [USER, calls_without_ids("a"), nameless, dict(nameless)]
    assert kinds(extra) == [(3, "orphan_result")]


def test_same_name_calls_without_ids_pair_in_order():
    conversation = [
        USER,
        calls_without_ids("a", "a"),
        tool_result_message("a", "1"),
        tool_result_message("a", "2"),
    ]
    assert validate_tool_pairing(conversation) == []


def test_problems_come_back_in_message_order():
    conversation = [
        tool_result_message("a", "0"),
        USER, calls_without_ids("a", "b"), tool_result_message("b", "2"), USER,
    ]
    assert kinds(conversation) == [
        (0, "orphan_result"), (2, "unanswered_call"), (3, "out_of_order")
    ]


def test_malformed_conversation_raises_before_pairing_is_read():
    with pytest.raises(InvalidConversation) as caught:
        validate_tool_pairing([{"role": "robot", "content": "hi"}])
    assert caught.value.problems == [
        "message 0: role must be one of system, user, assistant, tool, got 'robot'"
    ]


# --- assert_paired: structure, then pairing, as one exception -----------------------


def test_assert_paired_checks_pairing_where_assert_valid_does_not():
    orphan = [USER, tool_result_message("get_exchange_rate", "162.4")]
    assert_valid(orphan)  # structure alone is fine
    with pytest.raises(InvalidConversation) as caught:
        assert_paired(orphan)
    assert caught.value.problems == [
        "message 1: tool result 'get_exchange_rate' has no open call before it"
    ]


def test_assert_paired_reports_structure_before_pairing():
    broken = [tool_result_message("a", "1"), {"role": "user"}]
    with pytest.raises(InvalidConversation) as caught:
        assert_paired(broken)
    assert caught.value.problems == ["message 1: a user message needs content"]


def test_assert_paired_passes_its_options_on():
    pending = [USER, calls_without_ids("a")]
    assert assert_paired(pending) is None
    with pytest.raises(InvalidConversation, match="has no result before the conversation ends"):
        assert_paired(pending, allow_pending=False)
    turn = parallel_tool_call_message([{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}])
    swapped = [USER, turn, *reversed([result_for_call(call, "ok") for call in turn["tool_calls"]])]
    assert assert_paired(swapped) is None
    with pytest.raises(InvalidConversation, match="strict_order is on"):
        assert_paired(swapped, strict_order=True)


def test_qwen3_renders_an_orphan_without_complaint(qwen3):
    orphan = [USER, tool_result_message("get_exchange_rate", "162.4")]
    text = render(qwen3, orphan)
    assert "<tool_response>\n162.4\n</tool_response>" in text
    assert kinds(orphan) == [(1, "orphan_result")]


# --- truncate_history ------------------------------------------------------------


def tool_round(names: list[str]) -> list[dict]:
    turn = parallel_tool_call_message([{"name": name, "arguments": {}} for name in names])
    return [turn, *(result_for_call(call, "ok") for call in turn["tool_calls"])]


def test_naive_cut_orphans_a_result_and_truncate_history_does_not():
    conversation = [SYSTEM, USER, *tool_round(["a", "b"]), ANSWER, USER, *tool_round(["c"]), ANSWER]
    naive = [SYSTEM, *conversation[-6:]]
    assert naive[1]["role"] == "tool"
    assert kinds(naive) == [(1, "orphan_result")]
    kept = truncate_history(conversation, 7)
    assert kept == [SYSTEM, USER, *tool_round(["c"]), ANSWER]
    assert validate_tool_pairing(kept) == []


def test_truncate_keeps_the_leading_system_message_and_counts_it():
    conversation = [SYSTEM, USER, ANSWER, USER, ANSWER, USER, ANSWER]
    assert truncate_history(conversation, 3) == [SYSTEM, USER, ANSWER]
    assert truncate_history(conversation[1:], 3) == [USER, ANSWER]


def test_truncate_returns_a_short_conversation_whole_and_as_a_new_list():
    conversation = [USER, ANSWER]
    kept = truncate_history(conversation, 5)
    assert kept == conversation and kept is not conversation


def test_truncate_raises_when_one_turn_is_longer_than_the_limit():
    conversation = [USER, *tool_round(["a", "b", "c"]), ANSWER]
    with pytest.raises(ValueError) as caught:
        truncate_history(conversation, 4)
    assert str(caught.value) == (
        "cannot truncate to 4 messages without splitting a turn: "
        "the shortest safe history has 6 (it starts at message 0)"
    )


def test_truncate_raises_when_there_is_no_user_message_to_start_at():
    conversation = [SYSTEM, ANSWER, ANSWER, ANSWER]
    with pytest.raises(ValueError, match="there is no user message to start the kept history at"):
        truncate_history(conversation, 2)


@pytest.mark.parametrize(
    "limit,error,message",
    [(0, ValueError, "max_messages must be at least 1, got 0"),
     (2.5, TypeError, "max_messages must be an int, got float"),
     (True, TypeError, "max_messages must be an int, got bool")],
)
def test_truncate_rejects_a_bad_limit(limit, error, message):
    with pytest.raises(error, match=message):
        truncate_history([USER], limit)


@st.composite
def paired_conversations(draw) -> list[dict]:
    """Well-paired histories: user turns, each followed by plain replies or tool rounds."""
    conversation: list[dict] = [SYSTEM] if draw(st.booleans()) else []
    for turn in range(draw(st.integers(1, 5))):
        conversation.append({"role": "user", "content": f"question {turn}"})
        for step in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                conversation.append({"role": "assistant", "content": f"reply {turn}.{step}"})
                continue
            names = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3))
            if draw(st.booleans()):
                conversation.extend(tool_round(names))
            else:
                conversation.append(calls_without_ids(*names))
                conversation.extend(tool_result_message(name, "ok") for name in names)
    return conversation


@settings(max_examples=300, deadline=None)
@given(conversation=paired_conversations(), data=st.data())
def test_truncation_only_cuts_at_safe_points(conversation, data):
    assert validate_tool_pairing(conversation) == []
    limit = data.draw(st.integers(1, len(conversation) + 2), label="max_messages")
    has_system = conversation[0]["role"] == "system"
    head = 1 if has_system else 0
    fitting = [
        start
        for start in range(head, len(conversation))
        if conversation[start]["role"] == "user" and head + len(conversation) - start <= limit
    ]
    if len(conversation) > limit and not fitting:
        with pytest.raises(ValueError):
            truncate_history(conversation, limit)
        return
    kept = truncate_history(conversation, limit)
    assert len(kept) <= limit
    assert validate_tool_pairing(kept) == []
    if len(conversation) <= limit:
        assert kept == conversation
        return
    # a suffix of the original, after the system message when there is one
    assert kept[:head] == conversation[:head]
    body = kept[head:]
    assert body == conversation[len(conversation) - len(body):]
    assert body[0]["role"] == "user"
    # the longest such suffix: nothing was dropped that could have been kept
    assert len(conversation) - len(body) == fitting[0]


@settings(max_examples=200, deadline=None)
@given(conversation=paired_conversations(), data=st.data())
def test_dropping_any_one_result_is_caught(conversation, data):
    results = [index for index, message in enumerate(conversation) if message["role"] == "tool"]
    if not results:
        return
    dropped = data.draw(st.sampled_from(results), label="dropped result")
    damaged = conversation[:dropped] + conversation[dropped + 1 :]
    assert validate_tool_pairing(damaged, allow_pending=False) != []


# --- conversations nobody here wrote ------------------------------------------------


@pytest.mark.parametrize(
    "conversation",
    [
        [USER, {"content": "no role"}, ANSWER],
        [{"content": "no role"}, USER, ANSWER],
        [SYSTEM, USER, ANSWER, "not a message", USER, ANSWER],
        [USER, ANSWER, {"role": None, "content": "x"}, USER],
        [],
    ],
    ids=["no-role", "first-no-role", "not-a-dict", "role-none", "empty"],
)
def test_truncate_reports_a_malformed_conversation_as_validate_conversation_does(conversation):
    with pytest.raises(InvalidConversation) as caught:
        truncate_history(conversation, 2)
    assert caught.value.problems == validate_conversation(conversation)


def test_truncate_validates_even_when_nothing_needs_cutting():
    with pytest.raises(InvalidConversation, match="message 0: role must be one of"):
        truncate_history([{"content": "hi"}], 5)


@settings(max_examples=500, deadline=None)
@given(conversation=conversations, limit=st.integers(1, 10))
def test_any_input_is_truncated_or_reported_never_a_key_error(conversation, limit):
    problems = validate_conversation(conversation)
    try:
        kept = truncate_history(conversation, limit)
    except InvalidConversation as error:
        assert error.problems == problems != []
        return
    except ValueError as error:  # a valid history with no safe cut
        assert problems == [] and "cannot truncate" in str(error)
        return
    assert problems == [] and len(kept) <= limit
    assert kept == conversation[len(conversation) - len(kept) :] or kept[0]["role"] == "system"


@settings(max_examples=500, deadline=None)
@given(conversation=conversations)
def test_any_input_gets_pairing_problems_or_invalid_conversation(conversation):
    try:
        problems = validate_tool_pairing(conversation, allow_pending=False)
    except InvalidConversation as error:
        assert error.problems == validate_conversation(conversation) != []
        return
    assert all(isinstance(problem, PairingProblem) for problem in problems)
