"""Hostile input to the loop and to the message contract, each kind drawn from a generator.

Every test draws a class of input with hypothesis from a fixed seed
(``derandomize=True``, no example database), so a run repeats exactly:

- ``max_rounds`` that is no count (negative, a bool, a float, None, text...):
  refused up front, where the loop used to run without a limit;
- a conversation that is not a list: refused as a whole, before anything
  else, in ``validate_conversation``'s words;
- histories whose ids crowd ``call99999``: generated ids never collide and
  never raise;
- text a model writes beside its calls: kept on the call turn and shown
  in the next prompt, every character outside the call markup;
- ``function.arguments`` as a str: valid only when it holds one JSON object;
- fields a template prints as text (``name``, ``tool_call_id``, the
  reasoning keys) holding something else: named with message and type.

``run_tool_loop`` runs on ``ScriptedModel`` (tests/test_loop.py) with the
real Qwen3 tokenizer from the offline cache; no weights are needed.
"""

from __future__ import annotations

import copy
import itertools
import json
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from message_strategies import conversations
from rates import QUESTION, get_exchange_rate
from standin import ANSWER, hermes_call
from test_loop import EUR_JPY, EUR_USD, ScriptedModel, rate_call, rate_result
from templatestudio.loop import ToolLoopLimit, run_tool_loop, run_tool_round
from templatestudio.messages import InvalidConversation, validate_conversation
from templatestudio.pairing import validate_tool_pairing
from templatestudio.render import safe_render
from templatestudio.tools import ParsedToolCall

FIXED = settings(derandomize=True, database=None, deadline=None)
CALL = hermes_call("get_exchange_rate", EUR_JPY)


def loop(tokenizer, replies, conversation=QUESTION, **options):
    """run_tool_loop on a ScriptedModel; returns (model, transcript or the exception raised)."""
    model = ScriptedModel(tokenizer, replies)
    try:
        return model, run_tool_loop(model, tokenizer, conversation, [get_exchange_rate], fmt="hermes", **options)
    except (InvalidConversation, ToolLoopLimit, TypeError, ValueError) as error:
        return model, error


# --- max_rounds: a count of rounds, or refused before generating -------------

not_a_count = st.one_of(
    st.integers(max_value=-1),
    st.booleans(),
    st.none(),
    st.floats(),
    st.fractions(),
    st.decimals(allow_nan=False),
    st.text(max_size=3),
    st.lists(st.integers(0, 3), max_size=2),
)


@settings(FIXED, max_examples=60)
@given(not_a_count)
def test_a_max_rounds_that_is_no_count_is_refused_before_anything_is_generated(qwen3, max_rounds):
    # The old loop compared rounds == max_rounds and ran on for these: with
    # five scripted calls it ran out of replies (IndexError) instead.
    model, outcome = loop(qwen3, [CALL] * 5, max_rounds=max_rounds)
    if isinstance(max_rounds, int) and not isinstance(max_rounds, bool):
        assert type(outcome) is ValueError
        assert str(outcome) == f"max_rounds must not be negative, got {max_rounds}"
    else:
        assert type(outcome) is TypeError
        assert str(outcome) == f"max_rounds must be an int, got {type(max_rounds).__name__}"
    assert model.prompts == []


@settings(FIXED, max_examples=15)
@given(max_rounds=st.integers(0, 3), asks=st.integers(0, 4))
def test_a_count_allows_exactly_that_many_rounds(qwen3, max_rounds, asks):
    model, outcome = loop(qwen3, [CALL] * asks + [ANSWER], max_rounds=max_rounds)
    if asks > max_rounds:
        assert isinstance(outcome, ToolLoopLimit)
        assert len(outcome.transcript.calls) == max_rounds
    else:
        assert outcome.answer == ANSWER and len(outcome.calls) == asks
    assert len(model.prompts) == min(asks, max_rounds) + 1


# --- the conversation: a list, checked before anything else -----------------

not_a_list = st.one_of(
    st.dictionaries(st.sampled_from(["role", "content", "x"]), st.text(max_size=4), max_size=3),
    st.text(max_size=5),
    st.none(),
    st.integers(),
    st.tuples(st.just(QUESTION[0])),
    st.binary(max_size=3),
    st.frozensets(st.integers(), max_size=2),
)


@settings(FIXED, max_examples=60)
@given(not_a_list)
def test_a_conversation_that_is_not_a_list_is_refused_as_a_whole_and_first(qwen3, conversation):
    # max_rounds=-1 is wrong too: the conversation's check comes before everything.
    model, outcome = loop(qwen3, [ANSWER], conversation, max_rounds=-1)
    assert type(outcome) is InvalidConversation
    expected = [f"conversation must be a list of messages, got {type(conversation).__name__}"]
    assert outcome.problems == expected == validate_conversation(conversation)
    assert model.prompts == []


@settings(FIXED, max_examples=60)
@given(conversations.filter(validate_conversation))
def test_any_malformed_conversation_is_refused_in_validate_conversations_words(qwen3, conversation):
    model, outcome = loop(qwen3, [ANSWER], conversation, max_rounds=-1)
    assert type(outcome) is InvalidConversation
    assert outcome.problems == validate_conversation(conversation)
    assert model.prompts == []


# --- generated ids: never one in use, never an error -------------------------

taken_numbers = st.sets(st.one_of(st.integers(1, 99_999), st.integers(99_990, 99_999)), min_size=1, max_size=6)
foreign_ids = st.lists(st.text(string.ascii_letters + string.digits, min_size=1, max_size=10), max_size=3)


def history_with_ids(ids: list[str]) -> list[dict]:
    """QUESTION, one turn of calls with these ids, their results in order, a new user turn."""
    turn = {"role": "assistant", "tool_calls": [rate_call(call_id, EUR_USD) for call_id in ids]}
    results = [rate_result(call_id, "1.1") for call_id in ids]
    return [*QUESTION, turn, *results, {"role": "user", "content": "And in yen?"}]


def new_ids(messages: list[dict], start: int) -> list[str]:
    return [call["id"] for message in messages[start:] for call in message.get("tool_calls", [])]


@settings(FIXED, max_examples=200)
@given(numbers=taken_numbers, foreign=foreign_ids, count=st.integers(1, 4), one_turn=st.booleans())
@example(numbers={99_999}, foreign=[], count=1, one_turn=True)
@example(numbers={1, 99_998, 99_999}, foreign=["call00002"], count=3, one_turn=False)
def test_generated_ids_never_collide_and_never_raise(numbers, foreign, count, one_turn):
    ids = list(dict.fromkeys([f"call{n:05d}" for n in sorted(numbers)] + foreign))
    messages = history_with_ids(ids)
    start = len(messages)
    run_tool_round(messages, [ParsedToolCall("get_exchange_rate", EUR_JPY)] * count, [get_exchange_rate],
                   one_turn=one_turn)
    fresh = new_ids(messages, start)
    assert len(set(fresh)) == count and not set(fresh) & set(ids)
    # Free nine-character ids remain, so every id keeps Mistral's shape.
    assert all(len(call_id) == 9 and call_id[4:].isdigit() for call_id in fresh)
    if max(numbers) + count <= 99_999:  # room above the highest: numbering goes on from it
        free_above = (f"call{n:05d}" for n in itertools.count(max(numbers) + 1))
        assert fresh == list(itertools.islice((i for i in free_above if i not in ids), count))
    assert validate_tool_pairing(messages, strict_order=True, allow_pending=False) == []


def test_ids_grow_a_digit_only_when_every_nine_character_id_is_in_use():
    ids = [f"call{n:05d}" for n in range(1, 100_000)]
    messages = [*QUESTION, {"role": "assistant", "tool_calls": [rate_call(i, EUR_USD) for i in ids]}]
    calls = [ParsedToolCall("get_exchange_rate", EUR_JPY)] * 2
    run_tool_round(messages, calls, [get_exchange_rate], one_turn=True)
    assert new_ids(messages, 2) == ["call100000", "call100001"]


@settings(FIXED, max_examples=25)
@given(numbers=taken_numbers)
@example(numbers={99_999})
def test_the_loop_continues_a_history_that_holds_call99999(qwen3, numbers):
    history = history_with_ids([f"call{n:05d}" for n in sorted(numbers)])
    model, outcome = loop(qwen3, [CALL, ANSWER], history)
    assert not isinstance(outcome, Exception), outcome  # the old loop raised ValueError here
    assert outcome.answer == ANSWER
    (fresh,) = new_ids(outcome.messages, len(history))
    assert fresh not in {f"call{n:05d}" for n in numbers} and len(fresh) == 9


# --- text beside the calls: kept, shown, nothing invented --------------------

# No "<", braces or quotes: the text must read as prose, not as a call or a tag.
prose = st.text(alphabet=string.ascii_letters + string.digits + " .,!?-\n\t", max_size=30)


@settings(FIXED, max_examples=60)
@given(before=prose, between=prose, after=prose, calls=st.integers(1, 2))
@example(before="I will look that up first.\n", between="", after="", calls=1)
def test_text_beside_the_calls_stays_on_their_turn_and_reaches_the_next_prompt(
    qwen3, before, between, after, calls
):
    reply = before + CALL + (between + CALL if calls == 2 else "") + after
    model, transcript = loop(qwen3, [reply, ANSWER])
    turn = transcript.messages[1]
    # Every character outside the call markup, only the two ends stripped.
    written = (before + (between if calls == 2 else "") + after).strip()
    if written:
        assert turn["content"] == written
        assert written in model.prompts[1]
    else:
        # Calls alone keep the exact turn and prompt they always had.
        assert list(turn) == ["role", "tool_calls"]
        bare_model, _ = loop(qwen3, [CALL + (CALL if calls == 2 else ""), ANSWER])
        assert model.prompts[1] == bare_model.prompts[1]
    assert len(turn["tool_calls"]) == calls
    assert transcript.answer == ANSWER


@settings(FIXED, max_examples=60)
@given(content=prose, count=st.integers(1, 3), one_turn=st.booleans())
def test_a_round_puts_the_text_on_its_first_turn_only(content, count, one_turn):
    messages = list(QUESTION)
    calls = [ParsedToolCall("get_exchange_rate", EUR_JPY)] * count
    run_tool_round(messages, calls, [get_exchange_rate], one_turn=one_turn, content=content)
    turns = [message for message in messages if message["role"] == "assistant"]
    assert len(turns) == (1 if one_turn else count)
    expected = [content.strip()] if content.strip() else []
    assert [turn.get("content") for turn in turns[:1] if "content" in turn] == expected
    assert all(list(turn) == ["role", "tool_calls"] for turn in turns[1:])


# --- function.arguments as a str: one JSON object, or a precise problem ------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
JSON_KIND = {type(None): "null", bool: "boolean", int: "number", float: "number", str: "string", list: "array"}
AT = "message 1, tool call 0: function.arguments"


def with_arguments(arguments: object) -> list[dict]:
    function = {"name": "get_exchange_rate", "arguments": arguments}
    return [*QUESTION, {"role": "assistant", "tool_calls": [{"type": "function", "function": function}]}]


@settings(FIXED, max_examples=150)
@given(json_values)
@example(None)
@example([1, 2])
@example("str")
def test_a_json_str_of_arguments_is_valid_exactly_when_it_holds_an_object(qwen3, value):
    text = json.dumps(value)
    conversation = with_arguments(text)
    if isinstance(value, dict):
        assert validate_conversation(conversation) == []
        assert text in safe_render(qwen3, conversation)  # printed as it stands
    else:
        problem = f"{AT} str must hold a JSON object, got JSON {JSON_KIND[type(value)]}"
        assert validate_conversation(conversation) == [problem]
        with pytest.raises(InvalidConversation) as caught:
            safe_render(qwen3, conversation)  # never rendered as `"arguments": [1, 2]}`
        assert caught.value.problems == [problem]


@settings(FIXED, max_examples=150)
@given(
    st.dictionaries(st.text(max_size=4), json_values, max_size=3),
    st.integers(1, 40),
    st.text(string.ascii_letters + string.digits + ' ,:[]"', max_size=3),
)
@example({}, 1, "")
@example({}, 1, "not json")
def test_arguments_text_that_is_not_json_is_refused_where_json_stops(value, cut, junk):
    # A JSON object's text with its end cut off, then junk without a "}": never an object.
    whole = json.dumps(value)
    text = whole[: max(0, len(whole) - cut)] + junk
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError as error:
        reason = f"{error.msg} at char {error.pos}"
        assert validate_conversation(with_arguments(text)) == [
            f"{AT} str must hold a JSON object, got text that is not JSON ({reason})"
        ]
    else:  # all was cut, and the junk alone is some other JSON value ("1", "[]")
        assert not isinstance(decoded, dict) and validate_conversation(with_arguments(text)) != []


@settings(FIXED, max_examples=60)
@given(st.text(string.ascii_letters, min_size=1, max_size=4), json_values, json_values,
       st.sampled_from(["NaN", "Infinity", "-Infinity"]), st.booleans())
def test_what_json_loads_reads_but_json_forbids_is_refused(key, first, second, constant, repeat):
    # Python's decoder takes NaN and keeps the last of two equal keys; the
    # prompt would print both keys, or a NaN, to a model that reads JSON.
    if repeat:
        text = f"{{{json.dumps(key)}: {json.dumps(first)}, {json.dumps(key)}: {json.dumps(second)}}}"
        problem = f"got an object that repeats the key {key!r}"
    else:
        text = f"{{{json.dumps(key)}: [{json.dumps(first)}, {constant}]}}"
        problem = f"got {constant}, which is not JSON"
    assert validate_conversation(with_arguments(text)) == [f"{AT} str must hold a JSON object, {problem}"]


@settings(FIXED, max_examples=10)
@given(st.integers(4_301, 20_000), st.sampled_from("123456789"))
def test_a_number_longer_than_pythons_int_limit_is_still_json(digits, digit):
    # int() refuses over 4300 digits with a ValueError; the check reads only the shape.
    number = digit * digits
    assert validate_conversation(with_arguments(f'{{"n": {number}}}')) == []
    assert validate_conversation(with_arguments(number)) == [f"{AT} str must hold a JSON object, got JSON number"]


@pytest.mark.parametrize("depth", [10_000, 100_000])
def test_arguments_nested_past_the_decoders_depth_are_a_problem_not_a_crash(depth):
    problems = validate_conversation(with_arguments("[" * depth + "]" * depth))
    assert problems == [f"{AT} str must hold a JSON object, got text nested too deeply to decode"]


# --- fields a template prints as text must be text ---------------------------

TEXT_FIELDS = ("content", "name", "tool_call_id", "reasoning_content", "thinking", "reasoning")
PAIRED = [
    {"role": "system", "content": "Be brief."},
    *QUESTION,
    {"role": "assistant", "tool_calls": [rate_call("call00001", EUR_JPY)]},
    rate_result("call00001", "162.4"),
    {"role": "assistant", "content": ANSWER},
]
not_text = st.one_of(
    st.integers(), st.floats(), st.booleans(), st.binary(max_size=3), st.tuples(st.text(max_size=2)),
    st.lists(st.text(max_size=2), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


@settings(FIXED, max_examples=200)
@given(index=st.integers(0, len(PAIRED) - 1), key=st.sampled_from(TEXT_FIELDS), value=not_text)
@example(index=3, key="tool_call_id", value=1)
@example(index=3, key="name", value=["get_exchange_rate"])
def test_a_text_field_holding_something_else_is_named_with_its_message_and_type(index, key, value):
    conversation = copy.deepcopy(PAIRED)
    conversation[index][key] = value
    assert validate_conversation(conversation) == [
        f"message {index}: {key} must be a str, got {type(value).__name__}"
    ]


@settings(FIXED, max_examples=30)
@given(index=st.integers(0, len(PAIRED) - 1), key=st.sampled_from(TEXT_FIELDS[1:]))
def test_none_in_a_text_field_reads_as_absent(index, key):
    conversation = copy.deepcopy(PAIRED)
    conversation[index][key] = None
    assert validate_conversation(conversation) == []


@settings(FIXED, max_examples=40)
@given(key=st.sampled_from(TEXT_FIELDS[3:]), value=not_text, on_call=st.booleans())
def test_gemma4_never_meets_reasoning_that_is_not_text(gemma4, key, value, on_call):
    # Gemma 4's template adds reasoning to text: anything else was a bare TypeError mid-render.
    conversation = copy.deepcopy(PAIRED[1:])
    index = 1 if on_call else 3
    conversation[index][key] = value
    with pytest.raises(InvalidConversation) as caught:
        safe_render(gemma4, conversation)
    assert caught.value.problems == [f"message {index}: {key} must be a str, got {type(value).__name__}"]


@settings(FIXED, max_examples=25)
@given(key=st.sampled_from(["tool_call_id", "name"]), value=not_text)
def test_the_loop_names_a_results_field_type_not_a_pairing_puzzle(qwen3, key, value):
    history = copy.deepcopy(PAIRED[:4]) + [{"role": "user", "content": "And in dollars?"}]
    history[3][key] = value
    model, outcome = loop(qwen3, [ANSWER], history)
    assert type(outcome) is InvalidConversation
    assert outcome.problems == [f"message 3: {key} must be a str, got {type(value).__name__}"]
    assert model.prompts == []
