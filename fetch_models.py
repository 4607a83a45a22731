"""Download the tokenizer files of every course family, then report each template.

Only the files a tokenizer needs are fetched (no weights), through
huggingface_hub with its progress bars. Run it once online; afterwards the
course works offline from the Hugging Face cache (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import argparse
import sys

from huggingface_hub import snapshot_download
from huggingface_hub.errors import LocalEntryNotFoundError

from families import FAMILIES, GEMMA4

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


def model_ids() -> list[str]:
    return [*FAMILIES.values(), GEMMA4]


def fetch_tokenizer(model_id: str) -> str:
    """Download (or find in the cache) model_id's tokenizer files; return the folder."""
    return snapshot_download(model_id, allow_patterns=TOKENIZER_FILES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.parse_args(argv)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
