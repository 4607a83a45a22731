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

from exercises.checking import Case, check, check_value, leaving_input_alone
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
    "check_as_hermes",
    "check_calls_or_raise",
    "check_classify_reply",
    "check_calls_from_message",
    "check_call_survives_prediction",
    "check_choose_fallback",
    "check_convert_amount",
    "check_fenced_calls",
    "check_from_openai_message",
    "check_generation_opening",
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
    "check_tool_responses",
    "check_tool_schemas",
    "check_tool_support_prediction",
    "check_tools_seen",
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


def get_weather(city: str, days: int = 1) -> dict:
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


def check_generation_opening(answer) -> bool:
    """00.2: the text add_generation_prompt=True adds, for any tokenizer and conversation."""
    conversations = {
        "the question": QUESTION,
        "a system message first": [{"role": "system", "content": "Answer in French."}, *QUESTION],
        "a finished round trip": [
            *QUESTION,
            tool_call_message("get_exchange_rate", EUR_JPY),
            {"role": "tool", "name": "get_exchange_rate", "content": "162.4"},
        ],
        "an answered question": [*QUESTION, {"role": "assistant", "content": "About 162.4 yen."}],
    }

    def opening(name, label):
        tokenizer, conversation = _tokenizer(name), conversations[label]
        return render(tokenizer, conversation)[len(render(tokenizer, conversation, add_generation_prompt=False)):]

    pairs = [
        ("qwen3", "the question"),
        ("llama3", "the question"),
        ("gemma3", "the question"),
        ("gemma4", "the question"),
        ("qwen3", "a system message first"),
        ("llama3.1", "a finished round trip"),
        ("gemma4", "a finished round trip"),
        ("gemma4", "an answered question"),
    ]
    # A case names its tokenizer and conversation; a tokenizer's repr is not something to print.
    cases = [Case(f"{name}, {label}", (name, label), opening(name, label)) for name, label in pairs]
    return check(
        "Exercise 00.2 (generation_opening)",
        lambda name, label: _outcome(answer, _tokenizer(name), conversations[label]),
        cases,
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
    two = [tool_schema(get_exchange_rate), tool_schema(get_weather)]
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


def _without(schema: dict, names) -> dict:
    """schema with the parameters in names taken out of properties and required."""
    schema = copy.deepcopy(schema)
    parameters = schema["function"]["parameters"]
    for name in names:
        parameters["properties"].pop(name)
    if "required" in parameters:
        parameters["required"] = [name for name in parameters["required"] if name not in names]
    return schema


class _RateLookup:
    """A callable object: get_json_schema has no function to read."""

    def __call__(self, base: str, quote: str) -> float:
        """Look up a rate.

        Args:
            base: the currency held.
            quote: the currency wanted.
        """
        return 162.4


def check_tool_schemas(answer) -> bool:
    """02.2: schemas for dicts, plain functions and functools.partial objects; TypeError otherwise."""
    from functools import partial

    rate, weather = tool_schema(get_exchange_rate), tool_schema(get_weather)
    tools = {
        "no tools": [],
        "a schema dict": [rate],
        "a plain function": [get_exchange_rate],
        'partial(get_exchange_rate, "EUR")': [partial(get_exchange_rate, "EUR")],
        'partial(get_exchange_rate, quote="JPY")': [partial(get_exchange_rate, quote="JPY")],
        "partial(get_weather, days=3)": [partial(get_weather, days=3)],
        'partial(get_weather, "Lyon")': [partial(get_weather, "Lyon")],
        'a schema dict, get_weather, partial(get_exchange_rate, "EUR")':
            [rate, get_weather, partial(get_exchange_rate, "EUR")],
        "an object with __call__": [_RateLookup()],
        "the builtin len": [len],
    }
    expected = [
        [],
        [rate],
        [rate],
        [_without(rate, ["base"])],
        [_without(rate, ["quote"])],
        [_without(weather, ["days"])],
        [_without(weather, ["city"])],
        [rate, weather, _without(rate, ["base"])],
        "raises TypeError",
        "raises TypeError",
    ]
    # A case names its list: the repr of a function or a partial carries a memory address.
    cases = [Case(label, (label,), schemas) for label, schemas in zip(tools, expected)]
    return check(
        "Exercise 02.2 (tool_schemas)",
        lambda label: _outcome(answer, list(tools[label])),
        cases,
    )


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


# A toy template (not a published one) that writes the first tool's name and drops the others.
_FIRST_TOOL_ONLY = (
    "{%- if tools %}Tool: {{ tools[0].function.name }}\n{% endif %}"
    "{%- for message in messages %}{{ message.role }}: {{ message.content }}\n{% endfor %}"
    "{%- if add_generation_prompt %}assistant: {% endif %}"
)


@lru_cache(maxsize=None)
def _first_tool_only():
    """A tokenizer of its own (not the cached Qwen3 one) running _FIRST_TOOL_ONLY."""
    tokenizer = load_tokenizer(family("qwen3").repo_id)
    tokenizer.chat_template = _FIRST_TOOL_ONLY
    return tokenizer


def _probe_tokenizer(name: str):
    return _first_tool_only() if name == "toy: first tool only" else _tokenizer(name)


def check_tools_seen(answer) -> bool:
    """03.2: the tools whose names the template writes, name by name, not fooled by the question."""
    schemas = {"get_exchange_rate": tool_schema(get_exchange_rate), "get_weather": tool_schema(get_weather)}
    conversations = {
        "the question": QUESTION,
        "a question naming the tool": [
            {"role": "user", "content": "Please run get_exchange_rate for EUR to JPY."}
        ],
    }

    def seen(name, label, tool_names):
        tokenizer, conversation = _probe_tokenizer(name), conversations[label]
        with_tools = render(tokenizer, conversation, tools=[schemas[tool] for tool in tool_names])
        without = render(tokenizer, conversation)
        return [tool for tool in tool_names if with_tools.count(tool) > without.count(tool)]

    one, two = ("get_exchange_rate",), ("get_exchange_rate", "get_weather")
    triples = [
        ("qwen3", "the question", one),
        ("qwen3", "the question", two),
        ("llama3", "the question", one),
        ("gemma3", "the question", two),
        ("gemma4", "the question", two),
        ("llama3.1", "the question", two),
        ("llama3", "a question naming the tool", one),
        ("qwen3", "a question naming the tool", two),
        ("qwen3", "the question", ()),
        ("toy: first tool only", "the question", two),
    ]
    cases = [Case(f"{name}, {label}, {len(tools)} tool(s)", (name, label, tools), seen(name, label, tools))
             for name, label, tools in triples]
    return check(
        "Exercise 03.2 (tools_seen)",
        lambda name, label, tools: _outcome(
            answer, _probe_tokenizer(name), conversations[label], [schemas[tool] for tool in tools]
        ),
        cases,
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


def check_tool_responses(answer) -> bool:
    """04.2: the tool results read back out of a Qwen3 prompt, in order and unchanged."""
    qwen3 = _tokenizer("qwen3")
    usd_eur = {"base": "USD", "quote": "EUR"}

    def result(content):
        return {"role": "tool", "name": "get_exchange_rate", "content": content}

    both_calls = tool_call_message("get_exchange_rate", EUR_JPY)
    both_calls["tool_calls"] += tool_call_message("get_exchange_rate", usd_eur)["tool_calls"]
    call = tool_call_message("get_exchange_rate", EUR_JPY)
    conversations = {
        "one result": ([*QUESTION, call, result("162.4")], ["162.4"]),
        "no result yet": (QUESTION, []),
        "two calls in one turn, two results":
            ([*QUESTION, both_calls, result("162.4"), result('{"rate": 0.92}')], ["162.4", '{"rate": 0.92}']),
        "two rounds, one result each": (
            [*QUESTION, call, result("162.4"), tool_call_message("get_exchange_rate", usd_eur), result("0.92")],
            ["162.4", "0.92"],
        ),
        "a result over two lines, spaces kept":
            ([*QUESTION, call, result("  162.4\nper euro  ")], ["  162.4\nper euro  "]),
        "an empty result": ([*QUESTION, call, result("")], [""]),
    }
    tools = [tool_schema(get_exchange_rate)]
    prompts = {label: render(qwen3, conversation, tools=tools) for label, (conversation, _) in conversations.items()}
    # A case names its prompt instead of printing a whole render as the failing input.
    cases = [Case(label, (label,), contents) for label, (_, contents) in conversations.items()]
    return check("Exercise 04.2 (tool_responses)", lambda label: _outcome(answer, prompts[label]), cases)


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

    run = leaving_input_alone(answer)

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


# --- notebook 08 -------------------------------------------------------------


def check_calls_or_raise(answer) -> bool:
    """08.1: the parser's calls; a ValueError when it found none but a call-shaped JSON object is there."""
    from samples import FENCED_CALL, PLAIN_ANSWER, QWEN3_CALL
    from templatestudio.tools import FencedJSONParser

    parsers = {"HermesParser()": HermesParser, "FencedJSONParser()": FencedJSONParser}
    eur_jpy = [ParsedToolCall("get_exchange_rate", EUR_JPY)]
    bare = '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}'
    cases = [
        Case("Qwen3's call, Hermes parser", ("HermesParser()", QWEN3_CALL), eur_jpy),
        Case("the fenced call, fenced parser", ("FencedJSONParser()", FENCED_CALL), eur_jpy),
        Case("a plain answer", ("HermesParser()", PLAIN_ANSWER), []),
        Case("an empty reply", ("HermesParser()", ""), []),
        Case("the fenced call, Hermes parser", ("HermesParser()", FENCED_CALL), "raises ValueError"),
        Case("Qwen3's call, fenced parser", ("FencedJSONParser()", QWEN3_CALL), "raises ValueError"),
        Case("a bare call with text around it", ("HermesParser()", f"Calling now: {bare} (one moment)"),
             "raises ValueError"),
        Case("keys in the other order",
             ("HermesParser()", '{"arguments": {"base": "EUR"}, "name": "get_exchange_rate"}'), "raises ValueError"),
        Case("a call inside a JSON list", ("HermesParser()", f"[TOOL_CALLS][{bare}]"), "raises ValueError"),
        Case("JSON that is not a call", ("HermesParser()", 'The rate is {"EUR/JPY": 162.4} today.'), []),
        Case("prose naming both keys", ("HermesParser()", 'A call has a "name" and "arguments".'), []),
        Case("arguments that are a plain string",
             ("HermesParser()", '{"name": "get_exchange_rate", "arguments": "EUR"}'), []),
    ]
    return check(
        "Exercise 08.1 (calls_or_raise)",
        lambda parser, text: _outcome(answer, text, parsers[parser]()),
        cases,
    )


def check_fenced_calls(answer) -> bool:
    """08.2: calls in json fences, one object or a list of them; anything else is not a call."""
    from samples import FENCED_CALL, PLAIN_ANSWER, QWEN3_CALL

    call = '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}'
    second = '{"name": "get_exchange_rate", "arguments": {"base": "USD", "quote": "EUR"}}'
    history = {"filter": {"currencies": ["EUR", "JPY"], "since": {"year": 2024}}}
    as_text = json.dumps({"name": "get_exchange_rate", "arguments": json.dumps(EUR_JPY)})
    eur_jpy = ParsedToolCall("get_exchange_rate", EUR_JPY)
    usd_eur = ParsedToolCall("get_exchange_rate", {"base": "USD", "quote": "EUR"})

    def fence(body, language="json"):
        return f"```{language}\n{body}\n```"

    cases = [
        Case("the fenced call", (FENCED_CALL,), [eur_jpy]),
        Case("text around the fence", (f"Let me check.\n{fence(call)}\nOne moment.",), [eur_jpy]),
        Case("two fences", (f"{fence(call)}\n{fence(second)}",), [eur_jpy, usd_eur]),
        Case("one fence holding a list of two calls", (fence(f"[{call}, {second}]"),), [eur_jpy, usd_eur]),
        Case("nested arguments", (fence(json.dumps({"name": "history", "arguments": history})),),
             [ParsedToolCall("history", history)]),
        Case("arguments as a JSON string", (fence(as_text),), [eur_jpy]),
        Case("a json fence that is not a call", (fence('{"EUR/JPY": 162.4}'),), []),
        Case("a python fence", (fence("get_exchange_rate(base='EUR', quote='JPY')", "python"),), []),
        Case("malformed JSON in a fence", (fence('{"name": "get_exchange_rate", "arguments": {"base": '),), []),
        Case("Qwen3's tagged call", (QWEN3_CALL,), []),
        Case("a plain answer", (PLAIN_ANSWER,), []),
    ]
    return check("Exercise 08.2 (parse_fenced_calls)", lambda text: _outcome(answer, text), cases)


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


def check_as_hermes(answer) -> bool:
    """10.2: a Gemma 4 reply rewritten as Qwen3 writes it; checked by what HermesParser reads back."""
    gemma4 = _tokenizer("gemma4")
    prefix = render(gemma4, QUESTION)
    quote = '<|"|>'

    def gemma4_call(name, arguments):
        return f"<|tool_call>call:{name}{{{arguments}}}<tool_call|>"

    rate = gemma4_call("get_exchange_rate", f"base:{quote}EUR{quote},quote:{quote}JPY{quote}")
    texts = {
        "one call": rate,
        "two calls": rate + gemma4_call("get_exchange_rate", f"base:{quote}USD{quote},quote:{quote}EUR{quote}"),
        "a number and a space in a value": gemma4_call("get_weather", f"city:{quote}Le Havre{quote},days:3"),
        "nested arguments": gemma4_call(
            "history", f"filter:{{currencies:[{quote}EUR{quote},{quote}JPY{quote}],since:{{year:2024}}}}"
        ),
        "quotes inside a value, and a boolean": gemma4_call("note", f'text:{quote}a "quoted" word{quote},urgent:true'),
        "no arguments": gemma4_call("ping", ""),
        "text before the call": "Let me check." + rate,
        "a plain answer": "One euro buys about 162.4 yen.",
        "an empty reply": "",
    }

    def hermes(text):
        message = gemma4.parse_response(text, prefix=prefix)
        blocks = [
            "<tool_call>\n"
            + json.dumps({"name": call["function"]["name"], "arguments": call["function"]["arguments"]})
            + "\n</tool_call>"
            for call in message.get("tool_calls", [])
        ]
        return "\n".join(part for part in [message.get("content", ""), *blocks] if part)

    def read_back(text):
        """What HermesParser reads out of text, and the text left outside the tags."""
        return HermesParser().parse(text), HermesParser.pattern.sub("", text).strip()

    def same(got, expected):
        return isinstance(got, str) and read_back(got) == read_back(expected)

    cases = [Case(label, (text,), hermes(text), same) for label, text in texts.items()]
    return check(
        "Exercise 10.2 (as_hermes)",
        lambda text: _outcome(answer, gemma4, text, prefix),
        cases,
    )


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
