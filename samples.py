"""Raw model output in each family's tool-call format, as written after the
generation prompt. Notebook 13 has Qwen3 write a real one instead. Samples of
every registered format live in its module: templatestudio.formats.FORMATS[name].samples."""

QWEN3_CALL = (
    "<tool_call>\n"
    '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}\n'
    "</tool_call>"
)

FENCED_CALL = (
    "```json\n"
    '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}\n'
    "```"
)

GEMMA4_CALL = (
    '<|tool_call>call:get_exchange_rate{base:<|"|>EUR<|"|>,quote:<|"|>JPY<|"|>}<tool_call|>'
)

PLAIN_ANSWER = "One euro buys about 162.4 yen."
