"""Checkers for the exercises of part 1 (notebooks 00-12), one per exercise.

Each ``check_…`` function takes the learner's answer (a function, a class, a
value), runs it on a class of cases through ``exercises.checking`` and returns
whether every case passed. Expected results come from the package or from the
real tokenizers, so a checker says what the code does today, not what a note
once said. Tokenizers are loaded once per session (``_tokenizer``).

Not handled: answers that print, loop forever or change the tokenizers they
are handed (every case shares the cached tokenizer objects).
"""

from __future__ import annotations

import copy
import inspect
import json
from functools import lru_cache

from exercises.checking import Case, check, check_value
from templatestudio.calls import ParsedToolCall
from templatestudio.families import family
from templatestudio.messages import validate_conversation
from templatestudio.render import load_tokenizer, render
from templatestudio.rates import QUESTION, get_exchange_rate
from templatestudio.tools import (
    HermesParser,
    call_survives,
    renders_tools,
    tool_call_message,
    tool_schema,
)

__all__ = [
    "check_classify_reply",
    "check_calls_from_message",
    "check_call_survives_prediction",
    "check_choose_fallback",
    "check_convert_amount",
    "check_from_openai_message",
    "check_leak_check_with_markers",
    "check_llama_json_parser",
    "check_markdown_table",
    "check_normalize_calls",
    "check_read_reply",
    "check_refused_tool",
    "check_renders_tools_prediction",
    "check_repaired_conversation",
    "check_result_survives",
    "check_round_trip",
    "check_run_calls",
    "check_tools_in_prompt",
    "check_tool_support_prediction",
]

EUR_JPY = {"base": "EUR", "quote": "JPY"}


@lru_cache(maxsize=None)
def _tokenizer(name: str):
    """The tokenizer of a course family ("qwen3") or of a repo id."""
    try:
        repo_id = family(name).repo_id
    except KeyError:
        repo_id = name
    return load_tokenizer(repo_id)


class _Raised:
    """What an answer raised; equal to "raises Name" when the exception is a Name (or a subclass)."""

    __hash__ = None

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __eq__(self, other: object) -> bool:
        if not (isinstance(other, str) and other.startswith("raises ")):
            return False
        return other.removeprefix("raises ") in {cls.__name__ for cls in type(self.error).__mro__}

    def __repr__(self) -> str:
        return f"raises {type(self.error).__name__}: {self.error}"


def _outcome(fn, *args):
    """fn(*args), or what it raised (for cases that expect an exception)."""
    try:
        return fn(*args)
    except Exception as error:  # the exception is the answer compared
        return _Raised(error)


def _weather_tool(city: str, days: int = 1) -> dict:
    """Forecast the weather for a city.

    Args:
        city: the city, such as "Lyon".
        days: how many days ahead, 1 to 7.
    """
    return {}


# --- notebook 00 -------------------------------------------------------------


def check_repaired_conversation(repaired: object) -> bool:
    """00.1: the broken conversation of step 0 with its three faults fixed, nothing else changed."""
    def facts(conversation):
        problems = validate_conversation(conversation)
        if problems:
            return f"problems: {problems}"
        roles = [message["role"] for message in conversation]
        call = conversation[1]["tool_calls"][0]["function"]
        return {
            "roles": roles,
            "question": conversation[0].get("content"),
            "call name": call["name"],
            "arguments are a dict": isinstance(call["arguments"], dict),
            "result": conversation[2].get("content"),
        }

    expected = {
        "roles": ["user", "assistant", "tool"],
        "question": "How many yen is one euro?",
        "call name": "get_exchange_rate",
        "arguments are a dict": True,
        "result": "162.4",
    }
    return check(
        "Exercise 00.1 (repaired)",
        lambda conversation: _outcome(facts, conversation),
        [Case("the repaired conversation", (repaired,), expected)],
    )


# --- notebook 01 -------------------------------------------------------------


def check_convert_amount(fn) -> bool:
    """01.1: a function whose schema get_json_schema builds as the exercise describes."""
    def schema_part(part):
        schema = tool_schema(fn)["function"]
        if part == "name":
            return schema["name"]
        if part == "types":
            return {key: value["type"] for key, value in schema["parameters"]["properties"].items()}
        if part == "required":
            return sorted(schema["parameters"].get("required", []))
        if part == "every parameter described":
            return all(
                value.get("description") for value in schema["parameters"]["properties"].values()
            )
        if part == "has a description":
            return bool(schema.get("description"))
        if part == "return":
            return schema.get("return")
        raise KeyError(part)

    cases = [
        Case("the tool's name", ("name",), "convert_amount"),
        Case("parameter types", ("types",), {"amount": "number", "base": "string", "quote": "string"}),
        Case("required parameters (quote has a default)", ("required",), ["amount", "base"]),
        Case("a description for the tool", ("has a description",), True),
        Case("a description for every parameter", ("every parameter described",), True),
        Case("the return type", ("return",), {"type": "number"}),
    ]
    return check("Exercise 01.1 (convert_amount)", lambda part: _outcome(schema_part, part), cases)


def check_refused_tool(fn) -> bool:
    """01.2: every parameter documented under Args:, yet get_json_schema refuses the function."""
    def verdict(question):
        if question == "parameters":
            return len(inspect.signature(fn).parameters) >= 2
        if question == "every parameter documented":
            doc = inspect.getdoc(fn) or ""
            _, _, args = doc.partition("Args:")
            return all(f"{name}:" in args for name in inspect.signature(fn).parameters)
        try:
            tool_schema(fn)
        except Exception as error:
            return type(error).__name__
        return "accepted"

    cases = [
        Case("at least two parameters", ("parameters",), True),
        Case("every parameter documented under Args:", ("every parameter documented",), True),
        Case("what get_json_schema does with it", ("schema",), "TypeHintParsingException"),
    ]
    return check("Exercise 01.2 (refused)", verdict, cases)


# --- notebook 02 -------------------------------------------------------------


def check_tools_in_prompt(answer) -> bool:
    """02.1: the tool schemas read back from between Qwen3's <tools> tags."""
    qwen3 = _tokenizer("qwen3")
    one = [tool_schema(get_exchange_rate)]
    two = [tool_schema(get_exchange_rate), tool_schema(_weather_tool)]
    system = [{"role": "system", "content": "Answer in French."}, *QUESTION]
    prompts = {
        "Qwen3's prompt with one tool": render(qwen3, QUESTION, tools=one),
        "Qwen3's prompt with two tools": render(qwen3, QUESTION, tools=two),
        "two tools after a system message": render(qwen3, system, tools=two),
        "Qwen3's prompt without tools": render(qwen3, QUESTION),
    }
    expected = [one, two, two, []]
    # A case names its prompt instead of printing a whole render as the failing input.
    cases = [Case(label, (label,), tools) for label, tools in zip(prompts, expected)]
    return check("Exercise 02.1 (tools_in_prompt)", lambda label: _outcome(answer, prompts[label]), cases)


# --- notebooks 03 and 05: predict, then probe ----------------------------------


def _prediction(title: str, probe, model_id: object, prediction: object) -> bool:
    if not isinstance(model_id, str) or not model_id:
        print(f"{title}: not yet (MY_MODEL must be a repo id, such as one in families.py).")
        return False
    if not isinstance(prediction, bool):
        print(f"{title}: not yet (MY_PREDICTION must be True or False, got {prediction!r}).")
        return False
    return check_value(f"{title[:-1]} on {model_id})", prediction, probe(_tokenizer(model_id)))


def check_renders_tools_prediction(model_id: object, prediction: object) -> bool:
    """03.1: the learner's prediction of renders_tools for a template of their choice."""
    tools = [tool_schema(get_exchange_rate)]
    return _prediction(
        "Exercise 03.1 (predict renders_tools)",
        lambda tok: renders_tools(tok, QUESTION, tools),
        model_id,
        prediction,
    )


def check_call_survives_prediction(model_id: object, prediction: object) -> bool:
    """05.1: the learner's prediction of call_survives for a template of their choice."""
    return _prediction(
        "Exercise 05.1 (predict call_survives)",
        lambda tok: call_survives(tok, "get_exchange_rate"),
        model_id,
        prediction,
    )


def _result_survives(tokenizer, content: str) -> bool:
    conversation = [
        *QUESTION,
        tool_call_message("get_exchange_rate", EUR_JPY),
        {"role": "tool", "name": "get_exchange_rate", "content": content},
    ]
    return content in render(tokenizer, conversation, add_generation_prompt=False)


def check_result_survives(answer) -> bool:
    """05.2: does a tool result reach the prompt? Template errors must not be swallowed."""
    cases = []
    for name in ["qwen3", "llama3", "gemma3", "gemma4", "llama3.1"]:
        expected = _outcome(_result_survives, _tokenizer(name), "162.4 (result 7f3a)")
        if isinstance(expected, _Raised):
            expected = f"raises {type(expected.error).__name__}"
        cases.append(Case(f"{name}", (name, "162.4 (result 7f3a)"), expected))
    return check(
        "Exercise 05.2 (result_survives)",
        lambda name, content: _outcome(answer, _tokenizer(name), content),
        cases,
    )


# --- notebook 04 -------------------------------------------------------------


def check_round_trip(answer) -> bool:
    """04.1: question, call and result as three messages, any result turned into text."""
    def expected(question, arguments, result_text):
        return [
            {"role": "user", "content": question},
            {
                "role": "assistant",
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_exchange_rate", "arguments": arguments}}
                ],
            },
            {"role": "tool", "name": "get_exchange_rate", "content": result_text},
        ]

    question = "How many yen is one euro?"
    cases = [
        Case("a float result", (question, "get_exchange_rate", EUR_JPY, 162.4),
             expected(question, EUR_JPY, "162.4")),
        Case("a str result stays as it is", (question, "get_exchange_rate", EUR_JPY, "162.4 yen"),
             expected(question, EUR_JPY, "162.4 yen")),
        Case("a dict result becomes JSON", (question, "get_exchange_rate", EUR_JPY, {"rate": 162.4}),
             expected(question, EUR_JPY, '{"rate": 162.4}')),
        Case("a list result becomes JSON", (question, "get_exchange_rate", EUR_JPY, [162.4, 163.0]),
             expected(question, EUR_JPY, "[162.4, 163.0]")),
        Case("arguments given as a JSON string",
             (question, "get_exchange_rate", '{"base": "EUR", "quote": "JPY"}', 162.4),
             expected(question, EUR_JPY, "162.4")),
        Case("arguments that are not an object", (question, "get_exchange_rate", "[1, 2]", 162.4),
             "raises ValueError"),
    ]
    return check("Exercise 04.1 (round_trip)", lambda *args: _outcome(answer, *args), cases)


# --- notebook 06 -------------------------------------------------------------


def _openai_call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def check_normalize_calls(answer) -> bool:
    """06.1: every call's arguments as a dict; everything else about a call kept."""
    as_text = json.dumps(EUR_JPY)
    nested = {"filter": {"currencies": ["EUR", "JPY"], "since": {"year": 2024}}}
    cases = [
        Case("no calls", ([],), []),
        Case("one call, arguments as a string", ([_openai_call("c1", "get_exchange_rate", as_text)],),
             [_openai_call("c1", "get_exchange_rate", EUR_JPY)]),
        Case("a dict stays a dict", ([_openai_call("c1", "get_exchange_rate", EUR_JPY)],),
             [_openai_call("c1", "get_exchange_rate", EUR_JPY)]),
        Case("two calls, one of each kind",
             ([_openai_call("c1", "get_exchange_rate", as_text),
               _openai_call("c2", "get_exchange_rate", {"base": "USD", "quote": "EUR"})],),
             [_openai_call("c1", "get_exchange_rate", EUR_JPY),
              _openai_call("c2", "get_exchange_rate", {"base": "USD", "quote": "EUR"})]),
        Case("nested arguments", ([_openai_call("c3", "history", json.dumps(nested))],),
             [_openai_call("c3", "history", nested)]),
        Case("a call without an id", ([{"type": "function", "function": {"name": "f", "arguments": "{}"}}],),
             [{"type": "function", "function": {"name": "f", "arguments": {}}}]),
        Case("arguments that decode to a list", ([_openai_call("c4", "f", "[1, 2]")],), "raises ValueError"),
        Case("arguments that are not JSON", ([_openai_call("c5", "f", "EUR to JPY")],), "raises ValueError"),
    ]
    return check("Exercise 06.1 (normalize_calls)", lambda calls: _outcome(answer, calls), cases)


def check_from_openai_message(answer) -> bool:
    """06.2: an OpenAI-style assistant message made valid for the course's input contract."""
    as_text = json.dumps(EUR_JPY)
    call = _openai_call("call_1", "get_exchange_rate", as_text)
    fixed = _openai_call("call_1", "get_exchange_rate", EUR_JPY)
    cases = [
        Case("content None next to a call",
             ({"role": "assistant", "content": None, "tool_calls": [call]},),
             {"role": "assistant", "tool_calls": [fixed]}),
        Case("content kept when it is text",
             ({"role": "assistant", "content": "Let me look.", "tool_calls": [call]},),
             {"role": "assistant", "content": "Let me look.", "tool_calls": [fixed]}),
        Case("a plain answer",
             ({"role": "assistant", "content": "One euro buys 162.4 yen."},),
             {"role": "assistant", "content": "One euro buys 162.4 yen."}),
        Case("an empty tool_calls list is dropped",
             ({"role": "assistant", "content": "Hi.", "tool_calls": []},),
             {"role": "assistant", "content": "Hi."}),
        Case("the input is not changed in place",
             ({"role": "assistant", "content": None, "tool_calls": [dict(call)]},),
             {"role": "assistant", "tool_calls": [fixed]}),
    ]

    def run(message):
        given = copy.deepcopy(message)
        got = answer(given)
        if given != message:
            return "changed its input"
        return got

    return check("Exercise 06.2 (from_openai_message)", lambda message: _outcome(run, message), cases)


# --- notebook 07 -------------------------------------------------------------


def check_llama_json_parser(answer) -> bool:
    """07.1: a ToolCallParser for {"name": ..., "parameters": {...}} objects (Llama 3.1's format)."""
    parser = answer() if isinstance(answer, type) else answer
    call = '{"name": "get_exchange_rate", "parameters": {"base": "EUR", "quote": "JPY"}}'
    second = '{"name": "get_exchange_rate", "parameters": {"base": "USD", "quote": "EUR"}}'
    history = {"filter": {"currencies": ["EUR", "JPY"], "since": {"year": 2024}}}
    nested = json.dumps({"name": "history", "parameters": history})
    eur_jpy = ParsedToolCall("get_exchange_rate", EUR_JPY)
    usd_eur = ParsedToolCall("get_exchange_rate", {"base": "USD", "quote": "EUR"})
    cases = [
        Case("one call", (call,), [eur_jpy]),
        Case("after the python tag", ("<|python_tag|>" + call,), [eur_jpy]),
        Case("text around the call", (f"Let me check. {call} One moment.",), [eur_jpy]),
        Case("two calls, one per line", (f"{call}\n{second}",), [eur_jpy, usd_eur]),
        Case("two calls separated by a semicolon", (f"{call}; {second}",), [eur_jpy, usd_eur]),
        Case("nested arguments", (nested,),
             [ParsedToolCall("history", history)]),
        Case("a brace inside a string value", ('{"name": "note", "parameters": {"text": "a } b {"}}',),
             [ParsedToolCall("note", {"text": "a } b {"})]),
        Case("keys in the other order",
             ('{"parameters": {"base": "EUR", "quote": "JPY"}, "name": "get_exchange_rate"}',),
             [eur_jpy]),
        Case("malformed JSON", ('{"name": "get_exchange_rate", "parameters": {"base": "EUR"',), []),
        Case("JSON that is not a call", ('The rate is {"EUR/JPY": 162.4} today.',), []),
        Case("a name but no parameters object", ('{"name": "get_exchange_rate", "parameters": "EUR"}',), []),
        Case("a plain answer", ("One euro buys about 162.4 yen.",), []),
    ]
    if not callable(getattr(parser, "parse", None)):
        print("Exercise 07.1 (LlamaJSONParser): not yet (the answer needs a parse(text) method).")
        return False
    return check("Exercise 07.1 (LlamaJSONParser)", lambda text: _outcome(parser.parse, text), cases)


def check_run_calls(answer) -> bool:
    """07.2: run parsed calls against a dict of tools; every result a str, unknown names reported."""
    def rate(base: str, quote: str) -> float:
        return {"EURJPY": 162.4, "USDEUR": 0.92}[base + quote]

    def echo(**arguments) -> dict:
        return arguments

    tools = {"get_exchange_rate": rate, "echo": echo}
    cases = [
        Case("no calls", ([],), []),
        Case("one call", ([ParsedToolCall("get_exchange_rate", EUR_JPY)],), ["162.4"]),
        Case("two calls, in order",
             ([ParsedToolCall("get_exchange_rate", EUR_JPY),
               ParsedToolCall("get_exchange_rate", {"base": "USD", "quote": "EUR"})],),
             ["162.4", "0.92"]),
        Case("a dict result as JSON", ([ParsedToolCall("echo", {"a": [1, 2]})],), ['{"a": [1, 2]}']),
        Case("an unknown tool", ([ParsedToolCall("get_weather", {"city": "Lyon"})],),
             ["error: unknown tool get_weather"]),
    ]
    # The tools table holds functions, whose repr carries an address: it stays out of the printed input.
    return check("Exercise 07.2 (run_calls)", lambda calls: _outcome(answer, calls, tools), cases)


# --- notebook 09 -------------------------------------------------------------


def check_leak_check_with_markers(answer) -> bool:
    """09.1: the two-key check, plus the [TOOL_CALLS] and <|tool_call> markers."""
    from samples import FENCED_CALL, GEMMA4_CALL, PLAIN_ANSWER, QWEN3_CALL

    cases = [
        Case("Qwen3's tagged call", (QWEN3_CALL,), True),
        Case("the fenced call", (FENCED_CALL,), True),
        Case("a plain answer", (PLAIN_ANSWER,), False),
        Case("Mistral's marker", ('[TOOL_CALLS][{"name": "get_exchange_rate", "arguments": {}}]',), True),
        Case("Mistral's marker, newer spelling",
             ('[TOOL_CALLS]get_exchange_rate[ARGS]{"base": "EUR"}',), True),
        Case("Gemma 4's call (keys unquoted)", (GEMMA4_CALL,), True),
        Case("prose about names and arguments", ("Every tool has a name and arguments.",), False),
        Case("only a name key", ('{"name": "Ada"}',), False),
    ]
    return check("Exercise 09.1 (looks_like_a_call)", lambda text: _outcome(answer, text), cases)


def check_classify_reply(answer) -> bool:
    """09.2: the three exits of step 9's diagram, for HermesParser."""
    from samples import FENCED_CALL, PLAIN_ANSWER, QWEN3_CALL

    quoting = 'A call looks like {"name": "get_exchange_rate", "arguments": {}} in JSON.'
    cases = [
        Case("Qwen3's call", (QWEN3_CALL,), "call"),
        Case("the fenced call", (FENCED_CALL,), "leak"),
        Case("a plain answer", (PLAIN_ANSWER,), "answer"),
        Case("prose quoting a call (a false alarm, still a leak)", (quoting,), "leak"),
        Case("a call with text before it", ("Let me check.\n" + QWEN3_CALL,), "call"),
        Case("an empty reply", ("",), "answer"),
    ]
    return check("Exercise 09.2 (classify)", lambda text: _outcome(answer, text), cases)


# --- notebook 10 -------------------------------------------------------------


def check_calls_from_message(answer) -> bool:
    """10.1: (name, arguments) pairs from a parse_response message, plain answers included."""
    def rate_call(arguments):
        return {"type": "function", "function": {"name": "get_exchange_rate", "arguments": arguments}}

    call = rate_call(EUR_JPY)
    as_text = rate_call(json.dumps(EUR_JPY))
    other = rate_call({"base": "USD", "quote": "EUR"})
    cases = [
        Case("one call", ({"role": "assistant", "tool_calls": [call]},), [("get_exchange_rate", EUR_JPY)]),
        Case("a plain answer (no tool_calls key)", ({"role": "assistant", "content": "Hello."},), []),
        Case("two calls",
             ({"role": "assistant", "tool_calls": [call, other]},),
             [("get_exchange_rate", EUR_JPY), ("get_exchange_rate", {"base": "USD", "quote": "EUR"})]),
        Case("arguments as a JSON string", ({"role": "assistant", "tool_calls": [as_text]},),
             [("get_exchange_rate", EUR_JPY)]),
        Case("content and a call", ({"role": "assistant", "content": "Let me look.", "tool_calls": [call]},),
             [("get_exchange_rate", EUR_JPY)]),
    ]
    return check("Exercise 10.1 (calls_from_message)", lambda message: _outcome(answer, message), cases)


# --- notebook 11 -------------------------------------------------------------


def check_choose_fallback(answer) -> bool:
    """11.1: which fallback parser a tokenizer needs, read from its templates."""
    def kind(name):
        chosen = answer(_tokenizer(name))
        return "None" if chosen is None else type(chosen).__name__

    cases = [
        Case("qwen3", ("qwen3",), "HermesParser"),
        Case("gemma4 (ships a response template)", ("gemma4",), "None"),
        Case("llama3 (no tools branch)", ("llama3",), "raises ValueError"),
        Case("gemma3 (no tools branch)", ("gemma3",), "raises ValueError"),
        Case("llama3.1 (a format no parser of tools.py reads)", ("llama3.1",), "raises ValueError"),
    ]
    return check("Exercise 11.1 (choose_fallback)", lambda name: _outcome(kind, name), cases)


def check_read_reply(answer) -> bool:
    """11.2: ("calls", calls), ("answer", text) or ("leak", text); other errors pass through."""
    from samples import FENCED_CALL, GEMMA4_CALL, PLAIN_ANSWER, QWEN3_CALL

    def run(name, text):
        tokenizer = _tokenizer(name)
        fallback = None if tokenizer.response_template is not None else HermesParser()
        return answer(tokenizer, text, prefix=render(tokenizer, QUESTION), fallback=fallback)

    eur_jpy = [ParsedToolCall("get_exchange_rate", EUR_JPY)]
    broken = '<|tool_call>call:get_exchange_rate{base:<|"|>EUR<|"|>,quote:}<tool_call|>'
    cases = [
        Case("qwen3, a call", ("qwen3", QWEN3_CALL), ("calls", eur_jpy)),
        Case("qwen3, a plain answer", ("qwen3", PLAIN_ANSWER), ("answer", PLAIN_ANSWER)),
        Case("qwen3, the fenced call", ("qwen3", FENCED_CALL), ("leak", FENCED_CALL)),
        Case("gemma4, a call", ("gemma4", GEMMA4_CALL), ("calls", eur_jpy)),
        Case("gemma4, a plain answer", ("gemma4", PLAIN_ANSWER), ("answer", PLAIN_ANSWER)),
        Case("gemma4, a garbled call: its error passes through", ("gemma4", broken), "raises ValueError"),
    ]
    return check("Exercise 11.2 (read_reply)", lambda name, text: _outcome(run, name, text), cases)


# --- notebook 12 -------------------------------------------------------------


def check_markdown_table(answer) -> bool:
    """12.1: ToolSupport rows as a Markdown table."""
    from templatestudio.compare import ToolSupport

    header = "| family | tools | call | parse with |\n|---|---|---|---|"
    qwen3 = ToolSupport("qwen3", True, True, "your own parser")
    llama3 = ToolSupport("llama3", False, False, "none: no tool calling")
    gemma4 = ToolSupport("gemma4", True, True, "response template")
    cases = [
        Case("no rows: the header alone", ([],), header),
        Case("one row", ([qwen3],), header + "\n| qwen3 | True | True | your own parser |"),
        Case("three rows, in order", ([qwen3, llama3, gemma4],),
             header
             + "\n| qwen3 | True | True | your own parser |"
             + "\n| llama3 | False | False | none: no tool calling |"
             + "\n| gemma4 | True | True | response template |"),
    ]
    return check("Exercise 12.1 (markdown_table)", lambda rows: _outcome(answer, rows), cases)


def check_tool_support_prediction(prediction: object) -> bool:
    """12.2: the learner's predicted ToolSupport row for Llama 3.1."""
    from templatestudio.compare import tool_support

    actual = tool_support("llama3.1", _tokenizer("llama3.1"), QUESTION, [tool_schema(get_exchange_rate)])
    return check_value("Exercise 12.2 (predict the llama3.1 row)", prediction, actual)
