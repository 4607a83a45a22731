"""The model families the course compares, by Hugging Face repo id.

Llama 3 and Gemma 3 are ungated copies whose templates equal the official,
gated ones. Gemma 4 stands apart because it is the one family that ships a
response template, so the course brings it in when it reaches parsing.
"""

FAMILIES = {
    "qwen3": "Qwen/Qwen3-0.6B",
    "llama3": "NousResearch/Meta-Llama-3-8B-Instruct",
    "gemma3": "unsloth/gemma-3-1b-it",
}
GEMMA4 = "google/gemma-4-E2B-it"
