"""The numbers a notebook's prose states, and the numbers its outputs print.

Used by tests/test_prose_counts.py (every number in markdown prose must be
printed by some code cell of the same notebook). A module of its own so that the
rules can be read, and tested on synthetic notebooks, apart from the course's
notebooks.

Not read: the markdown cells course_map.py writes (tagged ``course-map`` and
``course-nav``: the map with its reading times, the navigation lines), whose
every number tests/test_course_map.py checks against ``python course_map.py``.

What counts as a stated number
------------------------------
Digits that stand alone in prose (``87``, ``2,000``, ``93%``, ``1.78x``, ``27-row``,
the ``2`` and ``4`` of ``2–4×``), and the number words three to twenty (and
twenty-one to twenty-nine), which in this course always count something
("six formats", "a four-turn exchange").

What is exempt, and nothing else
--------------------------------
* code: fenced blocks (mermaid included) and inline code spans; HTML tags
  (their attributes), HTML comments;
* links: a markdown link or image (its text and its target), a bare or
  angle-bracket URL, a reference-style link definition;
* versions: a dotted number with two dots or more (``0.33.0``), anything with a
  ``v`` or another letter glued to it (``v5.22.1``), a number right after a
  project name (``transformers 5.22``, ``Python 3.11``, ``vLLM 0.33``);
* model and family names: a number glued to letters (``Qwen3``, ``8B``, ``K2``,
  ``V3.1``), a number hyphen-joined after a word (``GLM-4.7``, ``Qwen3-0.6B``,
  ``Phi-4``), a number after a model family name (``Llama 3.1``, ``Gemma 2 and 3``,
  ``Mistral Small 3.2``);
* references: after step/notebook/part/exercise/cell/section/issue/PR/item
  (with the list that follows: ``steps 1–12``, ``notebooks 13, 16 and 18``); a
  bare ``(14)`` in a sentence that also names a step or notebook that way; the
  cells of a table column headed "step", "notebook", "part", ...; an issue
  number ``#22975``; a numbered-list marker or a ``## 4.`` heading number; a
  Unicode code point ``U+2028``;
* years and dates: 1990–2039 as a four-digit number not followed by a unit-like
  word, ISO dates (``2026-12-06``), times of day (``08:15``), a day next to a
  month name;
* ordinals: ``1st``, ``2nd`` (glued letters) and the words first, second, ...
  (never extracted).

A stated number passes when the same value is printed by a code cell of the
same notebook: a number token in its ``text/plain``, ``text/markdown``, stream
text, error name and value, or ``text/html`` / ``image/svg+xml`` stripped of
tags. Values compare as decimals (``2,000`` = ``2000``, ``93%`` = ``93``,
``1.50`` = ``1.5``); a number word matches its digits or the word itself.

Not handled: a number printed by an output for another reason (a stated
``3`` passes when any output prints a standalone ``3``), so small counts are
checked only loosely; prose inside code cells (comments, strings).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

import nbformat

# --- masking the parts of markdown that are not prose -----------------------

FENCE = re.compile(r"^[ \t]*(```+|~~~+)[^\n]*\n.*?^[ \t]*\1[^\n]*$", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# [text](target) and ![alt](target), the target possibly holding one level of parentheses.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
REFERENCE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\[[^\]]*\]")
LINK_DEFINITION = re.compile(r"^[ \t]*\[[^\]]+\]:[ \t]+\S+.*$", re.MULTILINE)
AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^>\s]*>")
BARE_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]`]*[^\s<>()\[\]`.,;:!?'\"]")
HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
# "1. " opening a numbered list item, "## 4. " numbering a section heading.
LIST_MARKER = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+)?(?:\d+\.)*\d+[.)](?=\s)", re.MULTILINE)
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?\b")
TIME_OF_DAY = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*UTC)?\b")
CODE_POINT = re.compile(r"\bU\+[0-9A-Fa-f]{4,6}\b")
ISSUE_NUMBER = re.compile(r"#\d+")

MASK = "\0"


def _blank(match: re.Match) -> str:
    """The match replaced by MASK characters, newlines kept (line structure survives)."""
    return "".join(ch if ch == "\n" else MASK for ch in match.group(0))


def mask_markdown(source: str) -> str:
    """source with every exempt region (code, links, tags, dates, ...) masked, same length."""
    text = source
    for pattern in (FENCE, CODE_SPAN, HTML_COMMENT, INLINE_LINK, REFERENCE_LINK, LINK_DEFINITION,
                    AUTOLINK, BARE_URL, HTML_TAG, LIST_MARKER, ISO_DATE, TIME_OF_DAY, CODE_POINT,
                    ISSUE_NUMBER):
        text = pattern.sub(_blank, text)
    return text


# --- prose units and sentences ----------------------------------------------

BLOCK_START = re.compile(r"^\s*(#{1,6}\s|[-*+]\s|>)")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^a-z])")


def _names_a_reference(header_cell: str) -> bool:
    """A table column headed "step", "notebook", "part", ...: its numbers are references."""
    return bool(re.fullmatch(r"(?:" + REFERENCE_WORDS + r")", header_cell.replace(MASK, " ").strip(" *_"), re.IGNORECASE))


def _units(masked: str) -> list[tuple[int, int, bool]]:
    """Spans of paragraphs, headings, list items and table cells (on the masked text).

    The flag is True for the cells of a table column whose header names a
    reference ("step", "notebook", ...).
    """
    units: list[tuple[int, int, bool]] = []
    start = end = None
    position = 0
    header: list[bool] | None = None  # per column of the current table: a reference column?

    def flush() -> None:
        nonlocal start, end
        if start is not None:
            units.append((start, end, False))
        start = end = None

    for line in masked.splitlines(keepends=True):
        line_start, body = position, line.rstrip("\n")
        position += len(line)
        stripped = body.replace(MASK, " ").strip()
        if not stripped:
            flush()
            header = None
            continue
        if stripped.startswith("|"):
            flush()
            cells = body.split("|")
            if header is None:
                header = [_names_a_reference(cell) for cell in cells]
            offset = line_start
            for column, cell in enumerate(cells):
                if cell.replace(MASK, " ").strip() and not set(cell.strip()) <= set("-: "):
                    units.append((offset, offset + len(cell), column < len(header) and header[column]))
                offset += len(cell) + 1
            continue
        header = None
        if BLOCK_START.match(body):
            flush()
        if start is None:
            start = line_start
        end = line_start + len(body)
        if stripped.startswith("#"):
            flush()  # a heading is a sentence of its own
    flush()
    return units


def sentences(source: str) -> list[tuple[str, str]]:
    """(original sentence, masked sentence) pairs of one markdown cell's prose."""
    masked = mask_markdown(source)
    pairs = []
    for start, end, reference in _units(masked):
        unit = masked[start:end]
        if reference:
            unit = re.sub(NUMBER_LIST, lambda match: MASK * len(match.group(0)), unit)
        cursor = 0
        for match in [*SENTENCE_END.finditer(unit), None]:
            stop = match.start() if match else len(unit)
            piece = unit[cursor:stop]
            if piece.replace(MASK, " ").strip():
                original = " ".join(source[start + cursor : start + stop].split())
                pairs.append((original, piece))
            cursor = match.end() if match else len(unit)
    return pairs


# --- numbers in a sentence --------------------------------------------------

NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
    if value >= 3
}
UNITS_WORDS = "one two three four five six seven eight nine".split()
WORD_NUMBER = re.compile(
    r"(?<![\w-])(twenty-(?:" + "|".join(UNITS_WORDS) + r")|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
    + r")(?![\w])",
    re.IGNORECASE,
)
# A standalone digit token: 2,000 / 87 / 1.78 / 0.33.0 (the last one a version).
DIGITS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*")

# Words after which a number names something instead of counting it.
REFERENCE_WORDS = (
    r"steps?|notebooks?|parts?|exercises?|cells?|sections?|chapters?|issues?|PRs?|pull requests?|items?"
)
# A model family, or a project whose version follows its name.
NAME_WORDS = (
    r"Llama|Gemma|Qwen|Mistral|Ministral|Devstral|Magistral|Mixtral|Phi|Granite|Hermes|DeepSeek|GLM|Kimi|"
    r"MiniMax|InternLM|Falcon|OLMo|SmolLM|Nemotron|Apriel|Seed|Solar|GigaChat|Functionary|xLAM|Yi|Jamba|"
    r"Aya|Command|Cohere|Claude|GPT|GPT-OSS|gpt-oss|LFM|LFM2|Idefics|LLaVA|Moondream|Hunyuan|ERNIE|"
    r"Python|python|Transformers|transformers|vLLM|vllm|SGLang|sglang|Jinja|Jinja2|jinja2|torch|PyTorch|"
    r"pandas|CUDA|Ubuntu|Debian|JupyterLab|Jupyter|Chromium|nbformat|pytest|tokenizers|huggingface_hub|"
    r"llama\.cpp|ik_llama\.cpp|Ollama|TRL|mistral-common|CanIToolCall|canitoolcall|MCP|JSON Schema|draft|Draft"
)
# ", 3" / "and 3.8" after a named number ("Gemma 2 and 3 drop tools"), unless a
# plural-looking word follows: "Gemma 3 and 12 templates" counts templates.
NAME_CONTINUATION = r"(?:\s*(?:,|and|or|/)\s*\d+(?:\.\d+)*(?![\w.]*\s+[a-z][\w-]*s\b))"
NUMBER_LIST = r"\d+(?:\.\d+)*(?:\s*(?:,|and|or|&|to|through|–|—|-|/)\s*\d+(?:\.\d+)*)*"
REFERENCE = re.compile(r"(?<![\w-])(?:" + REFERENCE_WORDS + r")\s+" + NUMBER_LIST, re.IGNORECASE)
# "(14)", "(13–20)" in a sentence that names steps or notebooks: "the format read from the
# template (14), checked against a survey (15)" after "Steps 14–19".
PAREN_REFERENCE = re.compile(r"\(\s*" + NUMBER_LIST + r"\s*\)")
# A name, an optional capitalised qualifier (Mistral Small 3.2), the number and its
# continuations; or "release, 3.1" / "version 2", a version named as such.
NAMED = re.compile(
    r"(?<![\w-])(?:(?:" + NAME_WORDS + r")(?:\s+[A-Z][\w.]*)?|(?:release|version|revision),?)\s+\d+(?:\.\d+)*"
    + NAME_CONTINUATION + "*"
)
# Qwen3.5 and 3.8, V3 and 4: the continuations of a name with its number glued on.
GLUED_NAME = re.compile(r"(?<![\w-])[A-Za-z][\w.-]*?\d+(?:\.\d+)*" + NAME_CONTINUATION + "+")
MONTHS = (
    r"January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
DAY_MONTH = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:" + MONTHS + r")\b|\b(?:" + MONTHS + r")\.?\s+\d{1,2}\b(?!,\d)")
# A year is not followed by a unit or a counted noun (2048 MiB, 2000 turns).
YEAR = re.compile(r"(?<![\d,.])(?:199\d|20[0-3]\d)(?![\d,.]\d)(?!\s*(?:%|×|[a-z]|[A-Za-z]{1,3}\b))")


@dataclass(frozen=True)
class Stated:
    """One number a sentence states: its text, its value, and the sentence."""

    text: str
    value: Decimal
    sentence: str


def _value(token: str) -> Decimal | None:
    try:
        return Decimal(token.replace(",", "")).normalize()
    except InvalidOperation:
        return None


def _word_value(word: str) -> int:
    word = word.lower()
    if word.startswith("twenty-"):
        return 20 + UNITS_WORDS.index(word.split("-", 1)[1]) + 1
    return NUMBER_WORDS[word]


def _exempt_context(masked: str) -> str:
    """The masked sentence with references, names, dates and years masked too."""
    if REFERENCE.search(masked):
        masked = PAREN_REFERENCE.sub(_blank, masked)
    for pattern in (REFERENCE, NAMED, GLUED_NAME, DAY_MONTH, YEAR):
        masked = pattern.sub(_blank, masked)
    return masked


def stated_numbers(original: str, masked: str) -> list[Stated]:
    """Every number the (masked) sentence states, after the exemptions."""
    text = _exempt_context(masked)
    found: list[Stated] = []
    for match in DIGITS.finditer(text):
        token, start, end = match.group(0), match.start(), match.end()
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if before.isalnum() or before in "_.\0" or after.isalnum() and after not in "x×" or after in "_\0":
            continue  # glued to a name, a version, an ordinal or to masked code
        if after in "x×" and end + 1 < len(text) and text[end + 1].isalnum():
            continue  # 0x1F, 4xl: an identifier
        if before == "-" and start >= 2 and (text[start - 2].isalpha() or text[start - 2] in "_\0"):
            continue  # GLM-4.7, Phi-4, gpt-oss-20b: a name
        if token.count(".") >= 2:
            continue  # a version
        value = _value(token)
        if value is not None:
            found.append(Stated(token, value, original))
    for match in WORD_NUMBER.finditer(text):
        found.append(Stated(match.group(0), Decimal(_word_value(match.group(0))), original))
    return found


# course_map.MAP_TAG and NAV_TAG (tests/test_prose_counts.py checks they still are).
GENERATED_TAGS = frozenset({"course-map", "course-nav"})


def notebook_prose_numbers(notebook) -> list[Stated]:
    """Every number stated by the markdown cells of a notebook (nbformat node), generated cells aside."""
    stated: list[Stated] = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and not GENERATED_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            for original, masked in sentences(cell.source):
                stated.extend(stated_numbers(original, masked))
    return stated


# --- numbers in the outputs -------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
OUTPUT_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?![\d.]\d)")
TAGS_AND_STYLE = re.compile(r"<(style|script)\b.*?</\1>|<[^<>]*>", re.DOTALL | re.IGNORECASE)


def _as_text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def output_texts(notebook) -> list[str]:
    """What the code cells print: stream text, text/plain, markdown, HTML/SVG without tags, errors."""
    texts = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                texts.append(_as_text(output.get("text")))
            elif kind == "error":
                texts.append(f"{output.get('ename', '')}: {output.get('evalue', '')}")
            else:
                data = output.get("data", {})
                for mime in ("text/plain", "text/markdown", "text/latex"):
                    if mime in data:
                        texts.append(_as_text(data[mime]))
                for mime in ("text/html", "image/svg+xml"):
                    if mime in data:
                        texts.append(html.unescape(TAGS_AND_STYLE.sub(" ", _as_text(data[mime]))))
    return [ANSI.sub("", text) for text in texts]


def printed_values(notebook) -> set[Decimal]:
    """Every number value the notebook's outputs print (digits and number words)."""
    values: set[Decimal] = set()
    for text in output_texts(notebook):
        for match in OUTPUT_NUMBER.finditer(text):
            value = _value(match.group(0))
            if value is not None:
                values.add(value)
        for match in WORD_NUMBER.finditer(text):
            values.add(Decimal(_word_value(match.group(0))))
    return values


def unprinted_numbers(notebook) -> list[Stated]:
    """The stated numbers of a notebook that no output prints."""
    printed = printed_values(notebook)
    return [number for number in notebook_prose_numbers(notebook) if number.value not in printed]


def read_notebook(path: Path):
    return nbformat.read(path, as_version=4)
