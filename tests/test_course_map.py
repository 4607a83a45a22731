"""The course map (course_map.py) and what is derived from it stay true.

Every notebook in notebooks/ is on the map (main path, bonus or solutions) and
every file the map names exists; the map in notebook 00 and in README.md, and
every notebook's navigation lines, are exactly what ``python course_map.py``
writes today (reading times included, so an edit that changes a notebook's
length fails here until the map is written again).
"""

from __future__ import annotations

import re

import nbformat
import pytest

import course_map

NOTEBOOK_FILES = sorted(path.name for path in course_map.NOTEBOOKS.glob("*.ipynb"))
LINK = re.compile(r"\]\(([^)#]+)(?:#[^)]*)?\)")


def test_every_notebook_is_on_the_map_and_every_file_on_the_map_exists():
    listed = course_map.listed_files()
    assert len(listed) == len(set(listed))
    assert sorted(listed) == NOTEBOOK_FILES


def test_the_main_path_is_numbered_in_order_without_gaps():
    numbers = [int(stop.number) for _, stop in course_map.course()]
    assert numbers == list(range(len(numbers)))


@pytest.mark.parametrize("file", NOTEBOOK_FILES)
def test_each_notebook_carries_its_navigation_line_under_its_title_and_at_its_end(file):
    cells = nbformat.read(course_map.NOTEBOOKS / file, as_version=4).cells
    expected = course_map.nav_sources()[file]
    assert cells[0].cell_type == "markdown" and cells[0].source.lstrip().startswith("# ")
    assert cells[1].source == expected and course_map.NAV_TAG in cells[1].metadata.get("tags", [])
    assert cells[-1].source == expected and course_map.NAV_TAG in cells[-1].metadata.get("tags", [])
    assert sum(course_map.NAV_TAG in cell.metadata.get("tags", []) for cell in cells) == 2


@pytest.mark.parametrize("file", NOTEBOOK_FILES)
def test_navigation_links_point_at_notebooks_that_exist(file):
    for target in LINK.findall(course_map.nav_sources()[file]):
        assert (course_map.NOTEBOOKS / target).exists(), target


def test_notebook_00_shows_the_map_as_written_today():
    cells = nbformat.read(course_map.NOTEBOOKS / "00_setup.ipynb", as_version=4).cells
    maps = [cell for cell in cells if course_map.MAP_TAG in cell.metadata.get("tags", [])]
    assert [cell.source for cell in maps] == [course_map.map_cell_source()]


def test_the_readme_shows_the_map_as_written_today():
    readme = course_map.README.read_text(encoding="utf-8")
    assert readme.count(course_map.README_START) == 1
    assert course_map.readme_text(readme) == readme
    for target in LINK.findall(course_map.map_markdown("notebooks/")):
        assert (course_map.ROOT / target).exists(), target


def test_reading_time_counts_prose_code_and_exercises_but_not_the_map():
    # 408 words (2.04 min), 4 code cells (2 min), one exercise (5 min): 9.04, rounded up to 10.
    cells = [nbformat.v4.new_markdown_cell("# Step 99 — x\n\n" + "word " * 398 + "\n\n### Exercise 99.1 — y")]
    cells += [nbformat.v4.new_code_cell("1") for _ in range(4)]
    assert course_map.reading_minutes(cells) == 10
    cells.append(nbformat.v4.new_markdown_cell("nav " * 5000, metadata={"tags": [course_map.NAV_TAG]}))
    cells.append(nbformat.v4.new_markdown_cell("map " * 5000, metadata={"tags": [course_map.MAP_TAG]}))
    assert course_map.reading_minutes(cells) == 10
    cells.append(nbformat.v4.new_code_cell("2"))
    assert course_map.reading_minutes(cells) == 10  # 9.54
    cells.append(nbformat.v4.new_code_cell("3"))
    assert course_map.reading_minutes(cells) == 15  # 10.04
