"""The course's prose is written in our own words, not the seed texts'.

The seed texts in ``../shared/seeds`` are the course spec: the notebooks must
reproduce their behaviour, names and outputs, never their sentences. This
test splits every markdown cell of every notebook into sentences and every
seed text into sentences, then flags a notebook sentence that

* shares a run of ``RUN`` or more consecutive words with a seed sentence, or
* has a word-level ``difflib.SequenceMatcher`` ratio of ``RATIO`` or more with
  a seed sentence, when both have ``MIN_WORDS`` words or more.

Code is not prose: fenced blocks (mermaid included) and inline code spans are
removed before the comparison, and so are code-looking tokens on both sides
(``tool_calls``, ``tokenizer.parse_response``, ``<tool_call>``, ``HermesParser``),
because the seeds write identifiers inline where the notebooks put them in
code spans. Not handled: paraphrase that keeps the meaning with different
words (that is the goal), and prose inside code cells (comments, strings).

The seeds live outside the repository; ``TEMPLATESTUDIO_SEEDS`` points at
them (default ``../shared/seeds`` beside the repo root). Without them the
test skips, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
RUN = 8  # consecutive shared words that count as copying
RATIO = 0.6  # word-sequence similarity that counts as a near-copy
MIN_WORDS = 7  # both sentences need this many words for the ratio check


def seeds_dir() -> Path:
    configured = Path(os.environ.get("TEMPLATESTUDIO_SEEDS", "../shared/seeds"))
    return configured if configured.is_absolute() else (ROOT / configured).resolve()


# --- text to sentences to words -------------------------------------------

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
HTML_TAG = re.compile(r"<[^<>\n]*>")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
BLOCK_START = re.compile(r"^\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s|>)")
# A token with code punctuation, a dotted path or an inner capital (camelCase)
# is an identifier or a literal, not a word of prose.
CODE_TOKEN = re.compile(r"[_()=<>\[\]{}|/\\`@#$%^~]|\w\.\w|[a-z][A-Z]")
PUNCT_EDGE = re.compile(r"^[(\"'\u201c*]+|[)\"'\u201d*,.:;!?]+$")
WORD_EDGE = re.compile(r"^[^\w']+|[^\w']+$")


def words(sentence: str) -> list[str]:
    """Normalised, lower-cased words of sentence, code-looking tokens dropped."""
    kept = []
    for token in sentence.replace("\u2019", "'").replace("\u2018", "'").split():
        token = PUNCT_EDGE.sub("", token)  # sentence punctuation, not code
        if token and not CODE_TOKEN.search(token):
            kept.append(WORD_EDGE.sub("", token).lower().strip("'"))
    return [word for word in kept if word]


def markdown_units(source: str) -> list[str]:
    """The prose of one markdown cell as paragraphs, headings, list items and table cells."""
    text = FENCE.sub("\n", source)
    text = CODE_SPAN.sub(" ", text)
    text = IMAGE.sub(" ", text)
    text = LINK.sub(r"\1", text)
    text = HTML_TAG.sub(" ", text)
    units: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            units.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            flush()
        elif stripped.startswith("|"):
            flush()
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            units.extend(cell for cell in cells if cell and not set(cell) <= set("-: "))
        elif BLOCK_START.match(line):
            flush()
            current.append(BLOCK_START.sub("", line).lstrip("#>").strip())
            if stripped.startswith("#"):
                flush()  # a heading is a sentence of its own
        else:
            current.append(stripped)
    flush()
    return units


def sentences(units: list[str]) -> list[str]:
    return [part.strip() for unit in units for part in SENTENCE_END.split(unit) if part.strip()]


def seed_sentences(text: str) -> list[str]:
    # A seed is a page dump: each line is a paragraph, code already inline.
    return sentences(text.splitlines())


# --- the index of seed sentences -------------------------------------------


@dataclass(frozen=True)
class Hit:
    measure: str
    seed: str


class SeedIndex:
    """Seed sentences indexed by their RUN-grams and by word, for fast lookup."""

    def __init__(self, seed_texts: list[str]) -> None:
        self.sentences: list[str] = []
        self.words: list[list[str]] = []
        self.grams: dict[tuple[str, ...], int] = {}
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for text in seed_texts:
            for sentence in seed_sentences(text):
                tokens = words(sentence)
                if len(tokens) < min(RUN, MIN_WORDS):
                    continue
                index = len(self.sentences)
                self.sentences.append(sentence)
                self.words.append(tokens)
                for start in range(len(tokens) - RUN + 1):
                    self.grams.setdefault(tuple(tokens[start : start + RUN]), index)
                for word, count in Counter(tokens).items():
                    self.postings[word].append((index, count))

    def match(self, sentence: str) -> Hit | None:
        tokens = words(sentence)
        for start in range(len(tokens) - RUN + 1):
            index = self.grams.get(tuple(tokens[start : start + RUN]))
            if index is not None:
                return Hit(f"{RUN}+ words in a row", self.sentences[index])
        if len(tokens) < MIN_WORDS:
            return None
        # ratio = 2M / (a + b) and M <= shared words counted with multiplicity,
        # so only seeds sharing enough words can reach RATIO.
        shared: Counter[int] = Counter()
        for word, count in Counter(tokens).items():
            for index, seed_count in self.postings.get(word, ()):
                shared[index] += min(count, seed_count)
        for index, common in shared.items():
            seed_tokens = self.words[index]
            if len(seed_tokens) < MIN_WORDS or 2 * common < RATIO * (len(tokens) + len(seed_tokens)):
                continue
            ratio = SequenceMatcher(None, tokens, seed_tokens, autojunk=False).ratio()
            if ratio >= RATIO:
                return Hit(f"similarity {ratio:.2f}", self.sentences[index])
        return None


@lru_cache(maxsize=1)
def seed_index() -> SeedIndex:
    directory = seeds_dir()
    paths = sorted(directory.glob("*.txt")) if directory.is_dir() else []
    if not paths:
        message = f"no seed texts in {directory} (set TEMPLATESTUDIO_SEEDS)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return SeedIndex([path.read_text(encoding="utf-8") for path in paths])


def notebook_sentences(path: Path) -> list[tuple[int, str]]:
    notebook = nbformat.read(path, as_version=4)
    return [
        (index, sentence)
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "markdown"
        for sentence in sentences(markdown_units(cell.source))
    ]


# --- the checks --------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_prose_is_our_own(path):
    index = seed_index()
    flagged = [
        f"{path.name} cell {cell}: {hit.measure}\n  notebook: {sentence}\n  seed:     {hit.seed}"
        for cell, sentence in notebook_sentences(path)
        if (hit := index.match(sentence)) is not None
    ]
    assert not flagged, f"{len(flagged)} sentence(s) follow a seed text:\n" + "\n".join(flagged)


def _swap_one_word(sentence: str) -> str:
    tokens = sentence.split()
    middle = len(tokens) // 2
    tokens[middle] = "zebra" if tokens[middle].lower() != "zebra" else "okapi"
    return " ".join(tokens)


def test_measure_catches_a_one_word_change_of_a_real_seed_sentence():
    index = seed_index()
    real = next(s for s, t in zip(index.sentences, index.words) if 12 <= len(t) <= 30)
    near_copy = _swap_one_word(real)
    assert near_copy != real
    assert index.match(near_copy) is not None, near_copy


def test_measure_passes_an_unrelated_sentence():
    index = seed_index()
    unrelated = "Penguins huddle together through the polar night while the wind scours the ice shelf."
    assert index.match(unrelated) is None


SYNTHETIC_SEED = (
    "Intro line.\n"
    "The parser found nothing in the text, so the raw call went straight to the user as an answer.\n"
    "Short one.\n"
)


def test_both_measures_on_a_synthetic_seed():
    index = SeedIndex([SYNTHETIC_SEED])
    run_copy = "Sadly the raw call went straight to the user as an answer today."
    assert index.match(run_copy).measure == f"{RUN}+ words in a row"
    # Every third word changed: no run of RUN words, yet the same sentence.
    reworded = "The parser found nothing in that text, so a raw call went directly to the user as the answer."
    assert index.match(reworded).measure.startswith("similarity")
    assert index.match("Nothing here resembles that seed sentence at all, honestly speaking.") is None


def test_code_is_not_prose():
    seed = SeedIndex(["apply the chat template and read every tools block it renders for the model today."])
    cell = (
        "Some prose.\n\n"
        "```mermaid\nflowchart TB\n    a[\"apply the chat template and read every tools block it renders for the model today\"]\n```\n\n"
        "Inline: `apply the chat template and read every tools block it renders for the model today`.\n\n"
        "| `code` | apply the chat template |\n|---|---|\n"
    )
    found = sentences(markdown_units(cell))
    assert all(seed.match(sentence) is None for sentence in found), found
    assert "apply the chat template" in found
    assert words("`x` HermesParser reads tool_calls from tokenizer.parse_response(text) <tool_call> ok.") == [
        "reads",
        "from",
        "ok",
    ]


DOCS = [ROOT / "README.md", *sorted((ROOT / "bench").glob("*.md"))]


@pytest.mark.parametrize("path", DOCS, ids=[path.name for path in DOCS])
def test_readme_prose_is_our_own(path):
    # The README is read as the course's front page: the same standard as the notebooks.
    index = seed_index()
    flagged = [
        f"{path.name}: {hit.measure}\n  ours: {sentence}\n  seed: {hit.seed}"
        for sentence in sentences(markdown_units(path.read_text(encoding="utf-8")))
        if (hit := index.match(sentence)) is not None
    ]
    assert not flagged, f"{len(flagged)} sentence(s) follow a seed text:\n" + "\n".join(flagged)
