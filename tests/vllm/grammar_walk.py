"""Random replies drawn from a structural tag with xgrammar's own matcher: what a model with no training writes.

A model under a grammar can only pick tokens the grammar allows; a random
pick among them is the worst such model. ``walk`` does that over a small
raw vocabulary: every printable ASCII character, a few others, every
character of the tag's literals, and every literal whole (begins, ends,
separators, constants), as a real tokenizer holds a format's special tokens
whole. Literals are picked five times as often as characters, so replies
reach their ends in a few hundred steps; a walk that does not end within
``max_steps`` is dropped (the caller counts them).
"""

from __future__ import annotations

import random

import numpy as np
import xgrammar as xgr

END = "<|walk_end|>"
EXTRA = ("\n", "\t", "é", "中", "🙂")


def literals(tag: object) -> set[str]:
    """Every literal string a structural tag's JSON form writes (begins, ends, separators, constants)."""
    found: set[str] = set()
    if isinstance(tag, dict):
        for key in ("begin", "end", "separator", "value"):
            if isinstance(tag.get(key), str) and tag[key]:
                found.add(tag[key])
        for value in tag.values():
            found |= literals(value)
    elif isinstance(tag, list):
        for item in tag:
            found |= literals(item)
    return found


class Walker:
    """One compiled structural tag and the vocabulary to walk it with."""

    def __init__(self, tag: dict) -> None:
        whole = literals(tag)
        characters = {chr(code) for code in range(32, 127)} | set(EXTRA)
        for literal in whole:
            characters |= set(literal)
        self.vocab = [END, *sorted(characters), *sorted(whole - characters)]
        info = xgr.TokenizerInfo(self.vocab, vocab_type=xgr.VocabType.RAW, stop_token_ids=[0])
        self.compiled = xgr.GrammarCompiler(info).compile_structural_tag(xgr.StructuralTag.model_validate(tag))

    def accepts(self, text: str) -> bool:
        """Whether the grammar accepts text whole (and nothing more is required after it)."""
        matcher = xgr.GrammarMatcher(self.compiled, terminate_without_stop_token=True)
        return matcher.accept_string(text) and matcher.is_terminated()

    def walk(self, rng: random.Random, *, stop: float = 0.3, max_steps: int = 3000) -> str | None:
        """A random text the grammar allows, or None when it did not end within max_steps."""
        matcher = xgr.GrammarMatcher(self.compiled)
        bitmask = xgr.allocate_token_bitmask(1, len(self.vocab))
        pieces: list[str] = []
        for _ in range(max_steps):
            matcher.fill_next_token_bitmask(bitmask)
            bits = np.unpackbits(bitmask.numpy().view(np.uint8), bitorder="little")[: len(self.vocab)]
            allowed = [int(index) for index in np.flatnonzero(bits)]
            if 0 in allowed and (len(allowed) == 1 or rng.random() < stop):
                return "".join(pieces)
            allowed = [index for index in allowed if index != 0]
            weights = [5.0 if len(self.vocab[index]) > 1 else 1.0 for index in allowed]
            token = rng.choices(allowed, weights)[0]
            if not matcher.accept_token(token):  # pragma: no cover - the mask allowed it
                raise AssertionError(f"xgrammar refused the token {self.vocab[token]!r} its own mask allowed")
            pieces.append(self.vocab[token])
        return None
