"""The vLLM names a format answers for besides its first: replies in that model's wire, read by the format.

Each alias a format declares in ``vllm_parser`` (after the first name, the
wire the format was written from) has replies here written the way that
model writes them (its chat template and vLLM's documentation of the
parser); the format must read the calls listed. An alias with no reply here
fails, so a new alias comes with its evidence. Not checked: vLLM's own
leniencies beyond the wire (Mistral's ``NAME{...}`` with the ``[ARGS]``
token dropped, LFM2 values that are not Python literals, Llama 4's
``<|python_start|>`` list left unclosed); the format refuses or cuts those.
"""

from __future__ import annotations

import pytest

from templatestudio import read_tool_calls
from templatestudio.formats import FORMATS

# alias -> [(reply, [(name, arguments), ...]), ...]
REPLIES: dict[str, list[tuple[str, list[tuple[str, dict]]]]] = {
    "cohere_command3": [
        ('<|START_THINKING|> I will call foo with query1<|END_THINKING|><|START_ACTION|>\n[\n'
         '    {"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "query1"}}\n]\n<|END_ACTION|>',
         [("foo", {"query": "query1"})]),
        ('<|START_ACTION|>\n[\n    {"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "q"}},\n'
         '    {"tool_call_id": "1", "tool_name": "bar", "parameters": {"x": 42}}\n]\n<|END_ACTION|>',
         [("foo", {"query": "q"}), ("bar", {"x": 42})]),
        ("<|START_THINKING|>A greeting.<|END_THINKING|><|START_RESPONSE|>Hello <co>there</co: 0:[1]><|END_RESPONSE|>",
         []),
    ],
    "cohere_command4": [
        ('<|START_THINKING|>Look it up.<|END_THINKING|><|START_ACTION|>\n[\n'
         '    {"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "query1"}}\n]\n<|END_ACTION|>',
         [("foo", {"query": "query1"})]),
        ("<|START_THINKING|>The user greets us.<|END_THINKING|><|START_TEXT|>I'm doing well, thank you<|END_TEXT|>", []),
    ],
    "lfm2": [
        ("<|tool_call_start|>[lookup_order(order_id='A-17', verbose=False)]<|tool_call_end|>Looking it up.",
         [("lookup_order", {"order_id": "A-17", "verbose": False})]),
        ("<|tool_call_start|>[ping(), set_volume(level=3)]<|tool_call_end|>",
         [("ping", {}), ("set_volume", {"level": 3})]),
    ],
    "llama4_pythonic": [
        ('<|python_start|>[convert(amount=12.5, to="USD")]<|python_end|>', [("convert", {"amount": 12.5, "to": "USD"})]),
        ("[convert(amount=1, to='EUR'), ping()]", [("convert", {"amount": 1, "to": "EUR"}), ("ping", {})]),
    ],
    "mistral": [
        ('[TOOL_CALLS]search_docs[ARGS]{"query": "tax forms", "limit": 5}',
         [("search_docs", {"query": "tax forms", "limit": 5})]),
        ('[TOOL_CALLS][{"name": "search_docs", "arguments": {"query": "leases"}}]', [("search_docs", {"query": "leases"})]),
    ],
    "openai": [
        ('<|channel|>commentary to=functions.book_room <|constrain|>json<|message|>{"room": "B2", "hours": 2}<|call|>',
         [("book_room", {"room": "B2", "hours": 2})]),
        ("<|channel|>analysis<|message|>A room is needed.<|end|><|start|>assistant<|channel|>commentary "
         'to=functions.book_room <|constrain|>json<|message|>{"room": "C1"}<|call|>', [("book_room", {"room": "C1"})]),
    ],
    "qwen3_coder": [
        ("<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/main.py\n</parameter>\n</function>\n</tool_call>",
         [("read_file", {"path": "src/main.py"})]),
    ],
    "step3p5": [
        ("I will open it.<tool_call>\n<function=open_url>\n<parameter=url>\nhttps://example.org\n</parameter>\n"
         "</function>\n</tool_call>", [("open_url", {"url": "https://example.org"})]),
    ],
    "step5": [
        ("Let me read it.\n\n<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n"
         "<parameter=lines>\n40\n</parameter>\n</function>\n</tool_call>",
         [("read_file", {"path": "src/app.py", "lines": "40"})]),
    ],
    "glm45": [
        ("<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>notes.md</arg_value>\n</tool_call>",
         [("read_file", {"path": "notes.md"})]),
    ],
    "poolside_v1": [
        ("<tool_call>list_dir<arg_key>dir</arg_key><arg_value>/srv</arg_value></tool_call>", [("list_dir", {"dir": "/srv"})]),
    ],
    "ling3": [
        ("<think>The city is given.</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value>"
         "</tool_call>", [("get_weather", {"city": "Beijing"})]),
        ("<tool_call>ping</tool_call>", [("ping", {})]),
    ],
    "qwen3_json": [
        ('<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>', [("get_time", {"zone": "UTC"})]),
    ],
    "granite4": [
        ('First the time: \n<tool_call> {"name": "get_time", "arguments": {"zone": "CET"}} </tool_call> and the date: '
         '<tool_call> {"name": "get_date", "arguments": {}} </tool_call> Done.',
         [("get_time", {"zone": "CET"}), ("get_date", {})]),
    ],
    "ernie45": [
        ('Both are needed.\n</think>\n\n<tool_call>\n{"name": "get_time", "arguments": {"zone": "PST"}}\n</tool_call>\n',
         [("get_time", {"zone": "PST"})]),
    ],
    "llama4_json": [
        ('{"name": "get_time", "parameters": {"zone": "JST"}}', [("get_time", {"zone": "JST"})]),
    ],
    "jamba": [
        (' <tool_calls>[\n    {"name": "translate", "arguments": {"text": "hi", "to": "fr"}}\n]</tool_calls>',
         [("translate", {"text": "hi", "to": "fr"})]),
    ],
    "hunyuan_a13b": [
        ('Two lookups. <tool_calls>[{"name": "stock", "arguments": {"t": "IBM"}}, '
         '{"name": "stock", "arguments": {"t": "SAP"}}]</tool_calls>',
         [("stock", {"t": "IBM"}), ("stock", {"t": "SAP"})]),
    ],
    "deepseek_v4": [
        ('Checking.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="forecast">\n'
         '<｜DSML｜parameter name="city" string="true">Oslo</｜DSML｜parameter>\n'
         '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
         "</｜DSML｜invoke>\n</｜DSML｜tool_calls>", [("forecast", {"city": "Oslo", "days": 3})]),
    ],
    "deepseek_v41": [
        ('Checking.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="forecast">\n'
         '<｜DSML｜ parameter name="city" string="true">Lima</｜DSML｜ parameter>\n'
         '<｜DSML｜ parameter name="hourly" string="false">true</｜DSML｜ parameter>\n'
         "</｜DSML｜ invoke>\n</｜DSML｜ calls>", [("forecast", {"city": "Lima", "hourly": True})]),
    ],
    "kimi_k3": [
        ('<|open|>tools<|sep|><|open|>call tool="run" index="1"<|sep|>'
         '<|open|>argument key="code" type="string"<|sep|>print(2)<|close|>argument<|sep|>'
         '<|open|>argument key="opts" type="object"<|sep|>{"quiet": true}<|close|>argument<|sep|>'
         "<|close|>call<|sep|><|close|>tools<|sep|>", [("run", {"code": "print(2)", "opts": {"quiet": True}})]),
    ],
    "muse": [
        (" to=self<|message|>Look it up first.<|eom|><|start|>assistant to=search.web<|message|>"
         '<atem:function_calls>\n<atem:invoke name="search.web">\n<atem:parameter name="q">muse spark</atem:parameter>\n'
         "</atem:invoke>\n</atem:function_calls><|eom|>", [("search.web", {"q": "muse spark"})]),
        (" to=commentary<|message|>Checking both.<|eom|><|start|>assistant to=calc<|message|><atem:function_calls>\n"
         '<atem:invoke name="calc">\n<atem:parameter name="expr">2+2</atem:parameter>\n</atem:invoke>\n'
         "</atem:function_calls>", [("calc", {"expr": "2+2"})]),
    ],
    # Muse Spark 1.x: vLLM registers the same Muse parser class under this name.
    "musespark1x": [
        (" to=self<|message|>One lookup.<|eom|><|start|>assistant to=weather<|message|><atem:function_calls>\n"
         '<atem:invoke name="weather">\n<atem:parameter name="city">Oslo</atem:parameter>\n</atem:invoke>\n'
         "</atem:function_calls>", [("weather", {"city": "Oslo"})]),
    ],
}


def _owner(alias: str):
    (fmt,) = [fmt for fmt in FORMATS.values() if alias in fmt.vllm_parser]
    return fmt


def test_every_alias_has_replies():
    # The first name of a format needs none: the format's own samples are in that wire.
    aliases = {name for fmt in FORMATS.values() for name in fmt.vllm_parser[1:]}
    aliases |= {fmt.vllm_parser[0] for fmt in FORMATS.values()
                if fmt.vllm_parser and fmt.vllm_parser[0] in REPLIES}
    assert aliases - set(REPLIES) == set(), "declared vLLM names with no reply in their wire here"
    assert set(REPLIES) - aliases == set(), "replies for a name no format declares"


@pytest.mark.parametrize("alias, reply, calls",
                         [(alias, reply, calls) for alias, replies in REPLIES.items() for reply, calls in replies],
                         ids=lambda value: value if isinstance(value, str) and len(value) < 20 else "")
def test_the_format_reads_the_aliased_wire(alias, reply, calls):
    fmt = _owner(alias)
    read = read_tool_calls(reply, fmt.name).calls
    assert [(call.name, call.arguments) for call in read] == calls, f"{alias} -> {fmt.name}"
