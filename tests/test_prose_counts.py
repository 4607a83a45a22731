"""Nothing stale: every number a notebook's prose states is printed by one of its cells.

For each notebook, every number its markdown states (digits, and the number
words three to twenty) must appear among the numbers its code cells print in
their stored outputs, so that a count written in prose and a count the code
prints cannot drift apart unnoticed: re-executing a notebook changes the
outputs, and the prose must follow. What is exempt (code, links, versions,
model names, step/notebook/part references, years and dates, ordinals) is
defined and documented in tests/prose_numbers.py; the synthetic notebooks
below pin each rule down.

A number no cell can print (a fact about a file or a machine the course does
not have) goes in a code span, or in ALLOWED below with its reason. Keep
ALLOWED short: an entry names the notebook, the number as written and a piece
of its sentence, and an entry that no longer matches fails the run.

The README is prose about the package rather than a notebook: it is checked
for the counts that drift, the corpus size (``len(labels.json)``) and the
number of registered formats (``len(templatestudio.formats.FORMATS)``),
wherever it states them as totals.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from templatestudio.corpus import load_labels
from templatestudio.formats import FORMATS

from corpus_guard import require_corpus
from prose_numbers import GENERATED_TAGS, notebook_prose_numbers, printed_values, read_notebook, unprinted_numbers

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
README = ROOT / "README.md"

# notebook stem -> [(number as written, a piece of its sentence, why no cell prints it)]
ALLOWED: dict[str, list[tuple[str, str, str]]] = {}


def allowed(stem: str, text: str, sentence: str) -> bool:
    return any(number == text and piece in sentence for number, piece, _ in ALLOWED.get(stem, ()))


def stale_numbers(notebook, stem: str = "") -> list[str]:
    return [
        f"{number.text!r} in: {number.sentence}"
        for number in unprinted_numbers(notebook)
        if not allowed(stem, number.text, number.sentence)
    ]


# --- the rules on synthetic notebooks ---------------------------------------


def synthetic(prose: str, *printed: str):
    """A notebook with one markdown cell and one code cell per printed text (a stream output)."""
    cells = [new_markdown_cell(prose)]
    for text in printed:
        cell = new_code_cell("print(...)")
        cell.outputs = [new_output("stream", name="stdout", text=text)]
        cells.append(cell)
    return new_notebook(cells=cells)


def stated(prose: str) -> list[str]:
    return [number.text for number in notebook_prose_numbers(synthetic(prose))]


def test_a_count_the_output_contradicts_fails():
    notebook = synthetic("The scan found 12 templates that drop tools.", "templates that drop tools: 11\n")
    assert stale_numbers(notebook) == ["'12' in: The scan found 12 templates that drop tools."]


def test_a_count_the_output_prints_passes():
    notebook = synthetic("The scan found 12 templates that drop tools.", "templates that drop tools: 12\n")
    assert stale_numbers(notebook) == []


def test_a_count_in_words_is_checked_too():
    assert stale_numbers(synthetic("Render a four-turn exchange.", "3 messages\n"))
    assert not stale_numbers(synthetic("Render a four-turn exchange.", "4 messages\n"))
    assert not stale_numbers(synthetic("Six formats read it.", "six formats\n"))


def test_values_compare_as_numbers():
    assert not stale_numbers(synthetic("It ran 2,000 turns, 93% of them clean, 1.50 s each.", "2000 turns, 93 %, 1.5 s\n"))
    assert stale_numbers(synthetic("It ran 2,000 turns.", "200 turns\n"))
    # A number inside a name in the output does not count as printing it.
    assert stale_numbers(synthetic("Three formats read it.", "Qwen3 reads it\n"))


def test_outputs_of_every_kind_count():
    notebook = synthetic("It found 87 templates and 44 formats, 9 fixtures and 7 rows.")
    html_cell, svg_cell, error_cell, plain_cell = (new_code_cell("x") for _ in range(4))
    html_cell.outputs = [new_output("display_data", data={"text/html": "<table><td>87</td></table>", "text/plain": "<table>"})]
    svg_cell.outputs = [new_output("display_data", data={"image/svg+xml": '<svg width="44"><text x="3">44</text></svg>'})]
    error_cell.outputs = [new_output("error", ename="ValueError", evalue="expected 9 characters", traceback=[])]
    plain_cell.outputs = [new_output("execute_result", data={"text/plain": "7"}, execution_count=1)]
    notebook.cells += [html_cell, svg_cell, error_cell, plain_cell]
    assert printed_values(notebook) >= {87, 44, 9, 7}
    assert stale_numbers(notebook) == []


@pytest.mark.parametrize(
    "prose",
    [
        "Pass `max_tokens=12` and read ``n = 5``.",  # code spans
        "```python\nprint(12)\n```",  # a fence
        "```mermaid\nflowchart LR\n  A[\"12 templates\"] --> B\n```",  # mermaid is code too
        "See [the 12 formats](https://example.org/v12/page) or https://example.org/12.",  # links and URLs
        "transformers 5.22.1, vLLM 0.33, Python 3.11 and Jinja2 3.1.6 are pinned; v5.22.1 too.",  # versions
        "Qwen3-0.6B, GLM-4.7, Llama 3.1, Llama 3 8B, gpt-oss-20b, Kimi K2, Phi-4 and Mistral Small 3.2.",  # names
        "Gemma 2 and 3 drop tools; Qwen3.5 and 3.8 write XML; DeepSeek V3.1 too.",  # names, continued
        "As step 14 showed, notebooks 13, 16 and 18 and steps 1–12 (part 2, exercise 14.2, cell 7) agree.",
        "See issue #22975 and PR 47878.",  # references
        "Steps 14–19 replaced pieces: the reader (14), the survey (15) and the stream (17).",
        "| you want to | step |\n|---|---|\n| read a reply | 14 |\n| the errors | 13–20 |",
        "## 4. Send the result back",  # a numbered heading
        "1. first item\n2. second item",  # list markers
        "Released in 2025, on 2026-12-06 at 08:15 UTC, or on December 6.",  # years and dates
        "The 1st, 2nd and 3rd calls; the first and the third.",  # ordinals
        "The next Llama release, 3.1, renders them.",  # a version named as a release
        "It breaks lines at U+2028.",  # a code point
        '<img width="600" src="x.svg"> and <!-- 12 -->',  # HTML
    ],
)
def test_exempt_classes_state_no_number(prose):
    assert stated(prose) == []


@pytest.mark.parametrize(
    "prose, numbers",
    [
        ("The scan found 12 templates.", ["12"]),
        ("A 27-row table and a four-turn exchange.", ["27", "four"]),
        ("About 15,300 tests, 2–4× the size, 1.78x slower, 93% pass.", ["15,300", "2", "4", "1.78", "93"]),
        ("It maps at most 2048 MiB and runs 2000 turns.", ["2048", "2000"]),  # not years
        ("Through vLLM, 414 fixtures pass.", ["414"]),  # a name before a comma is not a version
        ("Gemma 3 and 12 templates agree.", ["12"]),  # a count after a name is still a count
        ("Llama 3.1, 4 formats and Gemma 3.", ["4"]),
        ("The server answers with HTTP 400.", ["400"]),
        ("Twenty-seven formats, three of them new.", ["Twenty-seven", "three"]),
        ("| format | samples |\n|---|---|\n| hermes | 8 |", ["8"]),  # table cells are prose
        ("The reader (14) and the survey (15) agree.", ["14", "15"]),  # no step named: not a reference
    ],
)
def test_counts_are_stated(prose, numbers):
    assert stated(prose) == numbers


def test_the_course_maps_cells_are_left_to_test_course_map():
    # The map's reading times are checked against course_map.py by tests/test_course_map.py.
    notebook = synthetic("The course takes 95 minutes.")
    notebook.cells[0].metadata["tags"] = ["course-map"]
    assert stated_numbers_of(notebook) == []
    course_map = pytest.importorskip("course_map")
    assert GENERATED_TAGS == {course_map.MAP_TAG, course_map.NAV_TAG}


def stated_numbers_of(notebook) -> list[str]:
    return [number.text for number in notebook_prose_numbers(notebook)]


# --- the course's notebooks -------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_every_number_in_the_prose_is_printed(path):
    stale = stale_numbers(read_notebook(path), path.stem)
    assert not stale, (
        f"{path.name}: {len(stale)} number(s) the prose states that no stored output prints "
        "(fix the prose, print the number, put it in a code span, or add it to ALLOWED with a reason):\n  "
        + "\n  ".join(stale)
    )


def test_every_allowed_number_is_still_stated():
    unused = []
    for stem, entries in ALLOWED.items():
        path = ROOT / "notebooks" / f"{stem}.ipynb"
        numbers = notebook_prose_numbers(read_notebook(path)) if path.exists() else []
        for text, piece, _ in entries:
            if not any(number.text == text and piece in number.sentence for number in numbers):
                unused.append(f"{stem}: {text!r} ({piece!r})")
    assert not unused, "ALLOWED entries that no sentence states any more (remove them):\n  " + "\n  ".join(unused)


# --- the README's totals ----------------------------------------------------

NUMBER = r"(\d{1,3}(?:,\d{3})+|\d+)"
# Phrases that state the whole corpus or the whole registry, not a part of it.
CORPUS_TOTALS = [
    rf"\bthe {NUMBER} (?:corpus|published) templates\b",
    rf"\ball {NUMBER} (?:corpus |published )?templates\b",
    rf"\bcorpus,? \(?{NUMBER} (?:published )?templates\b",
    rf"\b{NUMBER} (?:published )?templates in (?:`?\.\./shared/corpus|the corpus)\b",
    rf"\b{NUMBER}-template corpus\b",
]
FORMAT_TOTALS = [
    rf"\b{NUMBER} formats, one module each\b",
    rf"\bof the {NUMBER} (?:registered )?formats\b",
    rf"\ball {NUMBER} (?:registered )?formats\b",
    rf"\bthe {NUMBER} registered formats\b",
    rf"\b{NUMBER} (?:registered )?formats (?:are )?(?:registered|in the registry)\b",
]


def readme_totals(patterns: list[str]) -> list[tuple[int, str]]:
    """(number, the line it is on) for every phrase of patterns in README.md (lines joined per paragraph)."""
    text = README.read_text(encoding="utf-8")
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        for pattern in patterns:
            for match in re.finditer(pattern, flat, re.IGNORECASE):
                found.append((int(match.group(1).replace(",", "")), flat[max(0, match.start() - 60) : match.end() + 40]))
    return found


def test_readme_corpus_size_is_the_corpus():
    stated_totals = readme_totals(CORPUS_TOTALS)
    assert stated_totals, "README.md states the size of the template corpus nowhere this test can find"
    require_corpus()
    size = len(load_labels())
    wrong = [f"{number} in: …{where}…" for number, where in stated_totals if number != size]
    assert not wrong, f"README.md states a corpus size other than len(labels.json) = {size}:\n  " + "\n  ".join(wrong)


def test_readme_format_count_is_the_registry():
    stated_totals = readme_totals(FORMAT_TOTALS)
    assert stated_totals, "README.md states the number of formats nowhere this test can find"
    wrong = [f"{number} in: …{where}…" for number, where in stated_totals if number != len(FORMATS)]
    assert not wrong, f"README.md states a format count other than len(FORMATS) = {len(FORMATS)}:\n  " + "\n  ".join(wrong)


def test_the_readme_patterns_find_totals():
    sentences = {
        "scan of the 87 corpus templates": CORPUS_TOTALS,
        "0 wrong answers on all 87 templates": CORPUS_TOTALS,
        "The whole corpus, 87 templates, checks in 3.5 s": CORPUS_TOTALS,
        "44 formats, one module each.": FORMAT_TOTALS,
        "34 of the 44 formats have one": FORMAT_TOTALS,
    }
    for sentence, patterns in sentences.items():
        numbers = [int(m.group(1)) for p in patterns for m in re.finditer(p, sentence, re.IGNORECASE)]
        assert numbers in ([87], [44]), sentence
    # A part of the corpus or of the registry is not a total.
    for sentence in ("66 templates get a reader", "115 samples of 27 formats", "over the 20 formats whose template"):
        assert not [m for p in CORPUS_TOTALS + FORMAT_TOTALS for m in re.finditer(p, sentence, re.IGNORECASE)], sentence
