"""Checkers for the exercises of notebooks 13, 18, 19 and 20 (the live loop).

Each ``check_...`` function takes the learner's answer (a function), runs it
on a class of cases and prints the verdict through ``exercises.checking``;
none raises. Cases that need a model use a scripted writer instead: a
function (or a model-shaped object for ``run_tool_loop``) that returns fixed
replies chosen by what the prompt holds. It is not a model and says so in
its name; it only lets a checker see what a loop sends and does.

Not handled: answers that print, or that change the conversations they are
given in ways the expected value does not show (13.1, 19.x and 20.2 get
fresh copies for every case; 18.1 checks that its input was left alone).
"""

from __future__ import annotations

import copy
import json

from exercises.checking import Case, check, leaving_input_alone

THINK = "<think>\nThe user wants a rate; the get_exchange_rate tool gives it.\n</think>\n\n"
RATES = {("EUR", "JPY"): 162.4, ("USD", "GBP"): 0.79, ("JPY", "EUR"): 0.0062}


def _rate(base: str, quote: str) -> float:
    """Look up how many units of one currency one unit of another buys.

    Args:
        base: ISO 4217 code of the currency you hold, such as "EUR".
        quote: ISO 4217 code of the currency you want, such as "JPY".
    """
    return RATES[(base, quote)]


_rate.__name__ = "get_exchange_rate"


def get_time() -> str:
    """The time of day at the exchange.
    """
    return "09:00"


def _call(name: str, arguments: dict) -> str:
    """A call as Qwen3 writes it."""
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


EUR_JPY = _call("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
USD_GBP = _call("get_exchange_rate", {"base": "USD", "quote": "GBP"})


def _pair(name: str, arguments: dict, content: str) -> list[dict]:
    from templatestudio.tools import tool_call_message, tool_result_message

    return [tool_call_message(name, arguments), tool_result_message(name, content)]


# --- notebook 13 -----------------------------------------------------------


def check_tool_messages(answer) -> bool:
    """Exercise 13.1: tool_messages(reply, tools) -> the messages round one appends."""
    from templatestudio.tools import UnparsedToolCall

    tools = [_rate, get_time]

    def run(reply):
        try:
            return answer(reply, tools)
        except UnparsedToolCall:
            return "raises UnparsedToolCall"

    eur = {"base": "EUR", "quote": "JPY"}
    usd = {"base": "USD", "quote": "GBP"}
    string_args = '<tool_call>\n{"name": "get_exchange_rate", "arguments": "{\\"base\\": \\"EUR\\", \\"quote\\": \\"JPY\\"}"}\n</tool_call>'
    cases = [
        Case("one call, nothing else", (EUR_JPY,), _pair("get_exchange_rate", eur, "162.4")),
        Case("reasoning, then the call", (THINK + EUR_JPY,), _pair("get_exchange_rate", eur, "162.4")),
        Case("text around the call", ("Let me look that up.\n" + EUR_JPY + "\n",), _pair("get_exchange_rate", eur, "162.4")),
        Case(
            "two calls in one reply, in the order written",
            (THINK + EUR_JPY + "\n" + USD_GBP,),
            _pair("get_exchange_rate", eur, "162.4") + _pair("get_exchange_rate", usd, "0.79"),
        ),
        Case("a tool without arguments", (_call("get_time", {}),), _pair("get_time", {}, "09:00")),
        Case("arguments sent as a JSON string", (string_args,), _pair("get_exchange_rate", eur, "162.4")),
        Case("a plain answer", (THINK + "One euro buys 162.4 yen.",), []),
        Case(
            "a call rehearsed in the reasoning only",
            ("<think>\nI could write " + USD_GBP + " but I know it.\n</think>\n\nIt is 162.4 yen.",),
            [],
        ),
        Case("a call one brace short", (EUR_JPY.replace("}}", "}"),), "raises UnparsedToolCall"),
    ]
    return check("Exercise 13.1 (tool_messages)", run, cases)


class ScriptedWriter:
    """What exercise 13.2 calls instead of a model: fixed replies, one per call, not a model.

    Round k gets the k-th reply, after the writer checks that the prompt
    lists the tools and carries every result that round should see; a
    prompt that does not gets a reply starting "WRONG:", which no case
    expects. A call past the script means a call ran that should not have.
    """

    def __init__(self, label: str, rounds: list[tuple[str, list[str]]]) -> None:
        self.label = label
        self.rounds = rounds  # (reply, results the prompt must carry by then)
        self.prompts: list[str] = []

    def __repr__(self) -> str:
        return f"<scripted writer: {self.label}>"

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if len(self.prompts) > len(self.rounds):
            return "WRONG: a call ran that should not have"
        reply, results = self.rounds[len(self.prompts) - 1]
        if '"name": "get_exchange_rate"' not in prompt.split("<|im_start|>user")[0]:
            return "WRONG: the prompt does not list the tools"
        for result in results:
            if f"<tool_response>\n{result}\n</tool_response>" not in prompt:
                return f"WRONG: the prompt lacks the result {result}"
        return reply


def check_small_loop(answer) -> bool:
    """Exercise 13.2: small_loop(tokenizer, write, conversation, tools) -> the answer text."""
    from families import FAMILIES
    from templatestudio.render import load_tokenizer

    tokenizer = load_tokenizer(FAMILIES["qwen3"])
    question = [{"role": "user", "content": "How many yen is one euro?"}]
    jpy_eur = _call("get_exchange_rate", {"base": "JPY", "quote": "EUR"})
    scripts = {
        "answers at once": ([(THINK + "Hello.", [])], "Hello."),
        "one call, then the answer": (
            [(THINK + EUR_JPY, []), (THINK + "One euro is 162.4 yen.", ["162.4"])],
            "One euro is 162.4 yen.",
        ),
        "two rounds of calls": (
            [
                (THINK + EUR_JPY, []),
                (jpy_eur, ["162.4"]),
                ("It is 162.4 yen; one yen is 0.0062 euro.", ["162.4", "0.0062"]),
            ],
            "It is 162.4 yen; one yen is 0.0062 euro.",
        ),
        "two calls in one reply": (
            [(EUR_JPY + "\n" + USD_GBP, []), ("162.4 yen, and 0.79 pounds per dollar.", ["162.4", "0.79"])],
            "162.4 yen, and 0.79 pounds per dollar.",
        ),
        "a call rehearsed in the reasoning": (
            [("<think>\nMaybe " + EUR_JPY + "? No need.\n</think>\n\nAbout 162 yen.", [])],
            "About 162 yen.",
        ),
    }

    def run(writer, conversation):
        return answer(tokenizer, writer, copy.deepcopy(conversation), [_rate, get_time])

    cases = [
        Case(label, (ScriptedWriter(label, rounds), question), expected)
        for label, (rounds, expected) in scripts.items()
    ]
    return check("Exercise 13.2 (small_loop)", run, cases)


# --- notebook 18 -----------------------------------------------------------


def _paired_conversations() -> dict[str, list[dict]]:
    from templatestudio.parallel import parallel_tool_call_message, result_for_call

    user = {"role": "user", "content": "How many yen is one euro?"}

    def turn(names, first_id=1):
        call_turn = parallel_tool_call_message(
            [{"name": name, "arguments": {}} for name in names], first_id=first_id
        )
        return [call_turn, *(result_for_call(call, "ok") for call in call_turn["tool_calls"])]

    done = {"role": "assistant", "content": "Done."}
    return {
        "one call": [user, *turn(["get_exchange_rate"])],
        "two calls in one turn": [user, *turn(["get_exchange_rate", "get_time"])],
        "two rounds": [user, *turn(["get_time"]), *turn(["get_exchange_rate"], first_id=2), done],
        "same tool twice": [user, *turn(["get_exchange_rate", "get_exchange_rate"])],
    }


def check_break_pairing(answer) -> bool:
    """Exercise 18.1: break_pairing(conversation) -> a copy with one result answering no call."""
    from templatestudio.pairing import validate_tool_pairing

    def broken_by_id(original):
        def same(got, _expected):
            if not isinstance(got, list) or len(got) != len(original):
                return False
            changed = [i for i, (a, b) in enumerate(zip(original, got)) if a != b]
            if len(changed) != 1 or got[changed[0]].get("role") != "tool":
                return False
            only_id = {k: v for k, v in got[changed[0]].items() if k != "tool_call_id"}
            if only_id != {k: v for k, v in original[changed[0]].items() if k != "tool_call_id"}:
                return False
            kinds = {problem.kind for problem in validate_tool_pairing(got)}
            return bool(kinds & {"unmatched_result", "orphan_result"})

        return same

    run = leaving_input_alone(answer)

    cases = [
        Case(
            label,
            (conversation,),
            "the same messages, one tool_call_id changed to an id no call has",
            same=broken_by_id(copy.deepcopy(conversation)),
        )
        for label, conversation in _paired_conversations().items()
    ]
    return check("Exercise 18.1 (break_pairing)", run, cases)


def check_repair_pairing(answer) -> bool:
    """Exercise 18.2: repair_pairing(conversation) -> the conversation with every result's id fixed."""
    cases = []
    for label, paired in _paired_conversations().items():
        broken = copy.deepcopy(paired)
        tools = [i for i, message in enumerate(broken) if message["role"] == "tool"]
        for i in tools:
            broken[i]["tool_call_id"] = "call99999"
        cases.append(Case(f"{label}: every result's id unknown", (broken,), paired))
    paired = _paired_conversations()["two calls in one turn"]
    swapped = copy.deepcopy(paired)
    swapped[3]["tool_call_id"] = "call00007"
    cases.append(Case("two calls: only the second id unknown", (swapped,), paired))
    cases.append(Case("already paired: unchanged", (copy.deepcopy(paired),), paired))

    def run(conversation):
        return answer(copy.deepcopy(conversation))

    return check("Exercise 18.2 (repair_pairing)", run, cases)


# --- notebook 19 -----------------------------------------------------------


def _turn(*pairs):
    from templatestudio.parallel import parallel_tool_call_message

    return parallel_tool_call_message(
        [{"name": "get_exchange_rate", "arguments": {"base": b, "quote": q}} for b, q in pairs]
    )


def check_order_results(answer) -> bool:
    """Exercise 19.1: order_results(turn, finished) -> the tool messages in call order."""
    from templatestudio.parallel import result_for_call

    two = _turn(("EUR", "JPY"), ("USD", "GBP"))
    three = _turn(("EUR", "JPY"), ("USD", "GBP"), ("JPY", "EUR"))
    ids = [call["id"] for call in three["tool_calls"]]

    def expected(turn, texts):
        return [result_for_call(call, text) for call, text in zip(turn["tool_calls"], texts)]

    def run(turn, finished):
        try:
            return answer(copy.deepcopy(turn), list(finished))
        except ValueError:
            return "raises ValueError"

    cases = [
        Case("two calls, finished in call order", (two, [(ids[0], "162.4"), (ids[1], "0.79")]), expected(two, ["162.4", "0.79"])),
        Case("two calls, the second finished first", (two, [(ids[1], "0.79"), (ids[0], "162.4")]), expected(two, ["162.4", "0.79"])),
        Case(
            "three calls, finished last to first",
            (three, [(ids[2], "0.0062"), (ids[1], "0.79"), (ids[0], "162.4")]),
            expected(three, ["162.4", "0.79", "0.0062"]),
        ),
        Case(
            "three calls, middle one first",
            (three, [(ids[1], "0.79"), (ids[0], "162.4"), (ids[2], "0.0062")]),
            expected(three, ["162.4", "0.79", "0.0062"]),
        ),
        Case("a result for an id the turn never made", (two, [(ids[0], "162.4"), ("call00042", "0.79")]), "raises ValueError"),
        Case("a call left without a result", (two, [(ids[1], "0.79")]), "raises ValueError"),
    ]
    return check("Exercise 19.1 (order_results)", run, cases)


def check_one_call_per_turn(answer) -> bool:
    """Exercise 19.2: one_call_per_turn(turn, results) -> call, result, call, result, ..."""
    from templatestudio.parallel import result_for_call

    def expected(turn, texts):
        messages = []
        for call, text in zip(turn["tool_calls"], texts):
            messages.append({"role": "assistant", "tool_calls": [call]})
            messages.append(result_for_call(call, text))
        return messages

    one = _turn(("EUR", "JPY"))
    two = _turn(("EUR", "JPY"), ("USD", "GBP"))
    three = _turn(("EUR", "JPY"), ("USD", "GBP"), ("JPY", "EUR"))

    def results(turn, texts):
        return [result_for_call(call, text) for call, text in zip(turn["tool_calls"], texts)]

    def run(turn, tool_messages):
        return answer(copy.deepcopy(turn), copy.deepcopy(tool_messages))

    cases = [
        Case("one call", (one, results(one, ["162.4"])), expected(one, ["162.4"])),
        Case("two calls", (two, results(two, ["162.4", "0.79"])), expected(two, ["162.4", "0.79"])),
        Case(
            "three calls",
            (three, results(three, ["162.4", "0.79", "0.0062"])),
            expected(three, ["162.4", "0.79", "0.0062"]),
        ),
    ]
    return check("Exercise 19.2 (one_call_per_turn)", run, cases)


# --- notebook 20 -----------------------------------------------------------


class ScriptedModel:
    """Not a model: an object run_tool_loop can call like one, replaying fixed replies.

    ``generate`` decodes the prompt, picks the reply for the number of tool
    results the prompt holds, and returns the prompt's ids followed by the
    reply's ids and the end-of-turn id, as a model's generate does.
    """

    def __init__(self, tokenizer, replies: list[str]) -> None:
        from transformers import GenerationConfig

        self.tokenizer = tokenizer
        self.replies = replies
        end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.generation_config = GenerationConfig(eos_token_id=end, pad_token_id=end)
        self.device = "cpu"

    def generate(self, input_ids, **_settings):
        import torch

        prompt = self.tokenizer.decode(input_ids[0])
        index = min(prompt.count("<tool_response>"), len(self.replies) - 1)
        reply = self.tokenizer(self.replies[index], add_special_tokens=False)["input_ids"]
        end = [self.generation_config.eos_token_id]
        return torch.cat([input_ids, torch.tensor([reply + end])], dim=1)


def check_convert_tool(answer) -> bool:
    """Exercise 20.1: a convert(amount, base, quote) tool that dispatch and run_tool_loop can use."""
    from families import FAMILIES
    from templatestudio.calls import ParsedToolCall
    from templatestudio.dispatch import dispatch
    from templatestudio.loop import run_tool_loop
    from templatestudio.rates import get_exchange_rate
    from templatestudio.render import load_tokenizer
    from templatestudio.tools import tool_schema

    tokenizer = load_tokenizer(FAMILIES["qwen3"])

    def close(got, expected):
        try:
            return abs(float(got) - expected) < 1e-6
        except (TypeError, ValueError):
            return False

    def run(kind, value):
        if kind == "schema":
            parameters = tool_schema(answer)["function"]["parameters"]
            types = {name: spec["type"] for name, spec in parameters["properties"].items()}
            return sorted(parameters["required"]), types
        if kind == "dispatch":
            return dispatch(ParsedToolCall("convert", value), [answer, get_exchange_rate]).content
        call = _call("convert", {"amount": value, "base": "EUR", "quote": "JPY"})
        model = ScriptedModel(tokenizer, [THINK + call, "That is the amount in yen."])
        question = [{"role": "user", "content": f"How many yen is {value} euro?"}]
        transcript = run_tool_loop(model, tokenizer, question, [answer, get_exchange_rate])
        return [message["content"] for message in transcript.messages if message["role"] == "tool"]

    def one_close(got, expected):
        return isinstance(got, list) and len(got) == 1 and close(got[0], expected[0])

    eur_jpy = {"base": "EUR", "quote": "JPY"}
    cases = [
        Case(
            "the schema: what is required, and the types",
            ("schema", None),
            (["amount", "base", "quote"], {"amount": "number", "base": "string", "quote": "string"}),
        ),
        Case("dispatch: 100 EUR to JPY", ("dispatch", {"amount": 100, **eur_jpy}), 16240.0, same=close),
        Case("dispatch: an amount written as text", ("dispatch", {"amount": "2.5", **eur_jpy}), 406.0, same=close),
        Case("dispatch: a fractional amount", ("dispatch", {"amount": 0.5, **eur_jpy}), 81.2, same=close),
        Case(
            "dispatch: no amount, dispatch's error",
            ("dispatch", eur_jpy),
            "error: convert: missing required parameter 'amount'",
        ),
        Case("run_tool_loop, a scripted writer asking for 10 euro", ("loop", 10), [1624.0], same=one_close),
        Case("run_tool_loop, asking for 3 euro", ("loop", 3), [487.2], same=one_close),
    ]
    return check("Exercise 20.1 (convert)", run, cases)


def shorten(text: str, limit: int) -> str:
    """Keep the start of a text.

    Args:
        text: The text to cut.
        limit: How many characters to keep.
    """
    return text[:limit]


def check_round_messages(answer) -> bool:
    """Exercise 20.2: round_messages(messages, raw, tools, one_turn) -> what run_tool_round appends."""
    from templatestudio.loop import run_tool_round
    from templatestudio.parallel import parallel_tool_call_message, result_for_call
    from templatestudio.reader import read_tool_calls

    # shorten's limit is an integer: a call that writes it as text is typed by the schema,
    # and run_tool_round writes the typed arguments into the history.
    tools = [_rate, get_time, shorten]
    question = [{"role": "user", "content": "How many yen is one euro?"}]
    earlier_turn = parallel_tool_call_message(
        [{"name": "get_time", "arguments": {}}, {"name": "get_time", "arguments": {}}]
    )
    earlier = [
        *question,
        earlier_turn,
        *(result_for_call(call, "09:00") for call in earlier_turn["tool_calls"]),
    ]

    def expected(messages, raw, one_turn):
        history = copy.deepcopy(messages)
        if not read_tool_calls(raw, "hermes").calls:
            return []
        run_tool_round(history, read_tool_calls(raw, "hermes").calls, tools, one_turn=one_turn)
        return history[len(messages):]

    def run(messages, raw, one_turn):
        return answer(copy.deepcopy(messages), raw, tools, one_turn)

    two = THINK + EUR_JPY + "\n" + USD_GBP
    rows = [
        ("one call", question, THINK + EUR_JPY, True),
        ("two calls, one turn", question, two, True),
        ("two calls, a turn each", question, two, False),
        ("an unknown tool: an error result", question, _call("get_weather", {"city": "Tokyo"}), True),
        ("a bad argument: an error result", question, _call("get_exchange_rate", {"currency": "EUR"}), True),
        ("an integer written as text: the history holds the typed call", question,
         _call("shorten", {"text": "exchange", "limit": "3"}), True),
        ("ids continue after call00002", earlier, EUR_JPY, True),
        ("a call rehearsed in the reasoning: nothing", question, "<think>\n" + EUR_JPY + "\n</think>\n\nIt is 162.4.", True),
    ]
    cases = [Case(label, (messages, raw, one), expected(messages, raw, one)) for label, messages, raw, one in rows]
    return check("Exercise 20.2 (round_messages)", run, cases)
