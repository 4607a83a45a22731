"""Download the tokenizer files of every tokenizer the course loads, then report each template.

Only the files a tokenizer needs are fetched (no weights), through
huggingface_hub with its progress bars. Run it once online; afterwards the
course works offline from the Hugging Face cache (HF_HUB_OFFLINE=1).
``--weights`` also downloads Qwen3-0.6B's weights (about 1.5 GB) for the
live tool loop of step 13.
"""

from __future__ import annotations

import argparse
import sys

from huggingface_hub import hf_hub_download, snapshot_download
from huggingface_hub.errors import LocalEntryNotFoundError

from families import FAMILIES, GEMMA4
from templatestudio.families import LLAMA31

TOKENIZER_FILES = [
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    "chat_template.json",
    "special_tokens_map.json",
    "tokenizer.model",
    "config.json",
    "generation_config.json",
]


# Step 13 runs Qwen3-0.6B; its weights are one safetensors file.
LIVE_MODEL = FAMILIES["qwen3"]
WEIGHTS_FILE = "model.safetensors"


def model_ids() -> list[str]:
    """The step-12 table's four families, then Llama 3.1 (steps 14, 19, 20 and exercises load it)."""
    return [*FAMILIES.values(), GEMMA4, LLAMA31]


def fetch_tokenizer(model_id: str) -> str:
    """Download (or find in the cache) model_id's tokenizer files; return the folder."""
    return snapshot_download(model_id, allow_patterns=TOKENIZER_FILES)


def fetch_weights(model_id: str = LIVE_MODEL) -> str:
    """Download (or find in the cache) model_id's weights; return the file's path."""
    return hf_hub_download(model_id, WEIGHTS_FILE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--weights",
        action="store_true",
        help=f"also download {LIVE_MODEL}'s weights (about 1.5 GB) for step 13",
    )
    args = parser.parse_args(argv)
    from templatestudio.render import load_tokenizer

    for model_id in model_ids():
        try:
            fetch_tokenizer(model_id)
        except LocalEntryNotFoundError:
            print(
                f"{model_id} is not in the Hugging Face cache and the Hub is offline; "
                f"run fetch_models.py once with network access (HF_HUB_OFFLINE unset)",
                file=sys.stderr,
            )
            return 1
    for model_id in model_ids():
        print(f"{model_id} template: {len(load_tokenizer(model_id).chat_template)} chars")
    if args.weights:
        try:
            fetch_weights()
        except LocalEntryNotFoundError:
            print(
                f"{LIVE_MODEL} weights are not in the Hugging Face cache and the Hub is offline; "
                f"run fetch_models.py --weights once with network access (HF_HUB_OFFLINE unset)",
                file=sys.stderr,
            )
            return 1
        print(f"{LIVE_MODEL} weights: in the Hugging Face cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
