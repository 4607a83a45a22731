"""The course's map: its three parts, each notebook's one idea, and its reading time.

This is the only list of the course's notebooks. ``python course_map.py``
writes what is derived from it:

* the map in notebook 00 (a markdown cell tagged ``course-map``) and in
  README.md (between ``<!-- course-map -->`` and ``<!-- /course-map -->``);
* a navigation line in every notebook, right under its title and as its last
  cell (cells tagged ``course-nav``): the part, the previous and the next
  notebook, the way back to the map.

``tests/test_course_map.py`` fails when a notebook is missing from the map (or
the map names a file that is not there), or when any of the derived text
differs from what this module would write today, reading times included: they
are computed from the notebooks themselves, so an edit that makes a notebook
longer shows in the map after ``python course_map.py``.

Reading time is an estimate, not a measurement: 200 words of prose a minute,
half a minute per code cell to read its code and output, five minutes per
exercise, rounded up to five minutes. It does not count running the cells
(seconds here, longer where real weights are loaded).
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent
NOTEBOOKS = ROOT / "notebooks"
README = ROOT / "README.md"
MAP_TAG = "course-map"
NAV_TAG = "course-nav"
README_START = "<!-- course-map -->"
README_END = "<!-- /course-map -->"
EXERCISE_HEADING = re.compile(r"^###\s+Exercise\b", re.MULTILINE)


@dataclass(frozen=True)
class Stop:
    """One notebook of the course and the one idea it teaches."""

    file: str
    idea: str

    @property
    def number(self) -> str:
        return self.file.split("_", 1)[0]


@dataclass(frozen=True)
class Part:
    title: str
    stops: tuple[Stop, ...]
    solutions: str | None = None


PARTS = (
    Part(
        "Part 1 — build `tools.py` one step at a time",
        (
            Stop("00_setup.ipynb", "The versions, the tokenizers from the cache, and the input contract every render checks"),
            Stop("01_tool_schema.ipynb", "A Python function becomes the JSON schema a template renders"),
            Stop("02_tools_in_the_prompt.ipynb", "Tools reach the prompt through the model's own template"),
            Stop("03_renders_tools.ipynb", "Some templates drop tools without a word: render with and without, compare"),
            Stop("04_round_trip.ipynb", "A call and its result, rendered back into the prompt"),
            Stop("05_call_survives.ipynb", "Does a past call survive into the next prompt?"),
            Stop("06_normalize_arguments.ipynb", "Arguments travel as a dict, always"),
            Stop("07_hermes_parser.ipynb", "A parser for JSON calls inside `<tool_call>` tags"),
            Stop("08_leak.ipynb", "The silent failure: a parser that finds nothing"),
            Stop("09_leak_check.ipynb", "A crude check that tells \"no call\" from \"a call we missed\""),
            Stop("10_response_template.ipynb", "A model's own response template, run by `parse_response`"),
            Stop("11_parse_tool_calls.ipynb", "`parse_tool_calls`: the response template first, a named parser otherwise, never a leak"),
            Stop("12_compare_tool_families.ipynb", "The family table: what each template renders, keeps and writes"),
        ),
        solutions="solutions_part1.ipynb",
    ),
    Part(
        "Part 2 — the live loop and the production reader",
        (
            Stop("13_live_tool_loop.ipynb", "A live model writes a call, and your own `parse_tool_calls` reads it"),
            Stop("14_detect_format.ipynb", "The template writes the format; the probe reads it off"),
            Stop("15_template_survey.ipynb", "The probe over every published template in the corpus"),
            Stop("16_typed_arguments_and_dispatch.ipynb", "From text to a typed function call, and tool errors the model can read"),
            Stop("17_streaming_without_leaks.ipynb", "Streaming a reply without ever showing a marker"),
            Stop("18_pairing_results.ipynb", "Every result answers a call: pairing, truncation, MCP results"),
            Stop("19_parallel_calls.ipynb", "Several calls in one turn"),
            Stop("20_capstone_loop.ipynb", "The whole loop: reader, dispatch, pairing and parallel calls together"),
        ),
        solutions="solutions_part2.ipynb",
    ),
    Part(
        "Part 3 — serving and formats",
        (
            Stop("21_serving_with_vllm.ipynb", "Serving with vLLM: a tool parser that needs no format flag"),
            Stop("22_strict_tool_calling.ipynb", "Strict tool calling in the model's own format"),
            Stop("23_new_formats_end_to_end.ipynb", "Two more formats end to end: DeepSeek V3.1 and GLM-4.7"),
            Stop("24_conformance.ipynb", "Measured against a public conformance suite"),
            Stop("25_deriving_a_format.ipynb", "A format no module declares, derived from the template"),
            Stop("26_your_own_model.ipynb", "Your own model: check, format, reader, loop, server, and a leak runbook"),
        ),
        solutions="solutions_part3.ipynb",
    ),
)

BONUS = (
    Stop("90_bonus_wire_shape_machinery.ipynb", "The machinery behind formats and streams: declarations, the engine, the run shortcut"),
)


def course() -> list[tuple[Part, Stop]]:
    """Every stop of the main path, in order, with its part."""
    return [(part, stop) for part in PARTS for stop in part.stops]


def listed_files() -> list[str]:
    """Every notebook the map names: the path, the bonus notebooks, the solutions."""
    files = [stop.file for _, stop in course()]
    files += [stop.file for stop in BONUS]
    files += [part.solutions for part in PARTS if part.solutions]
    return files


def _read(file: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / file, as_version=4)


def _cells(file: str) -> list:
    return _read(file).cells


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def minutes(file: str) -> int:
    """Estimated reading time of a notebook (see the module docstring)."""
    return reading_minutes(_cells(file))


def reading_minutes(cells: list) -> int:
    """Estimated reading time of cells, map and nav cells left out."""
    words = code = exercises = 0
    for cell in cells:
        if {MAP_TAG, NAV_TAG} & set(_tags(cell)):
            continue
        text = cell.source
        if cell["cell_type"] == "markdown":
            words += len(text.split())
            exercises += len(EXERCISE_HEADING.findall(text))
        elif cell["cell_type"] == "code":
            code += 1
    estimate = words / 200 + code / 2 + 5 * exercises
    return max(5, 5 * math.ceil(estimate / 5))


def _title(file: str) -> str:
    """The notebook's title: its first heading, without the "Step NN —" prefix."""
    first = _cells(file)[0].source.strip().splitlines()[0]
    title = first.lstrip("#").strip()
    return re.sub(r"^(Step|Bonus)\s+\S+\s+[—-]\s+", "", title)


def map_markdown(link_prefix: str = "") -> str:
    """The course map as markdown tables, one per part, links relative to link_prefix."""
    lines = []
    total = 0
    for part in PARTS:
        part_minutes = sum(minutes(stop.file) for stop in part.stops)
        total += part_minutes
        lines += [f"**{part.title}** (about {part_minutes} min)", ""]
        lines += ["| notebook | the one idea | min |", "|---|---|---|"]
        for stop in part.stops:
            lines.append(f"| [{stop.number}]({link_prefix}{stop.file}) | {stop.idea} | {minutes(stop.file)} |")
        if part.solutions:
            lines.append(f"| [solutions]({link_prefix}{part.solutions}) | Worked answers to the part's exercises, checked by the same cells | — |")
        lines.append("")
    lines += ["**Bonus** (outside the main path: the machinery, for readers who want it)", ""]
    lines += ["| notebook | what it opens up | min |", "|---|---|---|"]
    for stop in BONUS:
        lines.append(f"| [{stop.number}]({link_prefix}{stop.file}) | {stop.idea} | {minutes(stop.file)} |")
    lines += ["", f"Reading time for the three parts: about {total} min, exercises included."]
    return "\n".join(lines)


def map_cell_source() -> str:
    return "## Course map\n\n" + map_markdown()


def nav_source(part: Part, index: int) -> str:
    """The navigation line of the stop at position index of the main path."""
    stops = course()
    _, stop = stops[index]
    pieces = []
    if index > 0:
        previous = stops[index - 1][1]
        pieces.append(f"← [{previous.number} {_title(previous.file)}]({previous.file})")
    pieces.append("[course map](00_setup.ipynb#Course-map)")
    if index + 1 < len(stops):
        following = stops[index + 1][1]
        pieces.append(f"[{following.number} {_title(following.file)}]({following.file}) →")
    where = f"*{part.title.split(' — ')[0]} · notebook {stop.number} of {stops[0][1].number}–{stops[-1][1].number} · about {minutes(stop.file)} min*"
    return where + "  \n" + " · ".join(pieces)


def side_nav_source(stop: Stop, kind: str) -> str:
    return f"*{kind} · about {minutes(stop.file)} min*  \n[course map](00_setup.ipynb#Course-map)"


def _tagged_cell(source: str, tag: str, old: list) -> nbformat.NotebookNode:
    """A markdown cell tagged tag; an old cell with the same text is kept as is (its id too)."""
    for cell in old:
        if cell.source == source:
            return cell
    return nbformat.v4.new_markdown_cell(source, metadata={"tags": [tag]})


def with_nav(cells: list, source: str) -> list:
    """cells with the nav line under the title and as the last cell (old nav cells replaced)."""
    old = [cell for cell in cells if NAV_TAG in _tags(cell)]
    body = [cell for cell in cells if NAV_TAG not in _tags(cell)]
    top = _tagged_cell(source, NAV_TAG, old[:1])
    bottom = _tagged_cell(source, NAV_TAG, old[1:])
    if bottom is top:
        bottom = nbformat.v4.new_markdown_cell(source, metadata={"tags": [NAV_TAG]})
    return [body[0], top, *body[1:], bottom]


def with_map(cells: list) -> list:
    """Notebook 00's cells with the map as the cell after the first nav line."""
    old = [cell for cell in cells if MAP_TAG in _tags(cell)]
    body = [cell for cell in cells if MAP_TAG not in _tags(cell)]
    return [*body[:2], _tagged_cell(map_cell_source(), MAP_TAG, old), *body[2:]]


def readme_text(readme: str) -> str:
    """README.md with the map between its markers (links into notebooks/)."""
    start, end = readme.index(README_START), readme.index(README_END)
    return readme[: start + len(README_START)] + "\n" + map_markdown("notebooks/") + "\n" + readme[end:]


def nav_sources() -> dict[str, str]:
    """Every notebook's nav line, by file."""
    sources = {stop.file: nav_source(part, index) for index, (part, stop) in enumerate(course())}
    for stop in BONUS:
        sources[stop.file] = side_nav_source(stop, "Bonus")
    for part in PARTS:
        if part.solutions:
            sources[part.solutions] = side_nav_source(Stop(part.solutions, ""), f"Solutions to {part.title.split(' — ')[0]}")
    return sources


def write() -> list[str]:
    """Write the nav lines, the map in 00 and the README's map; return the files written."""
    written = []
    sources = nav_sources()
    # Nav first: the minutes in the map leave nav cells out, so the order does not matter for them,
    # but notebook 00's map sits after its nav line.
    for file in listed_files():
        path = NOTEBOOKS / file
        if not path.exists():
            continue
        notebook = nbformat.read(path, as_version=4)
        cells = with_nav(notebook.cells, sources[file])
        if file == "00_setup.ipynb":
            cells = with_map(cells)
        if [id(cell) for cell in cells] != [id(cell) for cell in notebook.cells]:
            notebook.cells = cells
            nbformat.write(notebook, path)
            written.append(file)
    readme = README.read_text(encoding="utf-8")
    updated = readme_text(readme)
    if updated != readme:
        README.write_text(updated, encoding="utf-8")
        written.append("README.md")
    return written


if __name__ == "__main__":
    missing = [file for file in listed_files() if not (NOTEBOOKS / file).exists()]
    for file in missing:
        print(f"not there yet: notebooks/{file}", file=sys.stderr)
    for file in write():
        print(f"wrote {file}")
