"""What ``pip install templatestudio`` puts in a user's environment: the package, nothing else.

The course's top-level modules (families, rates, samples, fetch_models) stay
in the repository for the notebooks and tests; the wheel must not carry
them, and nothing inside the package may import them, or the installed
CLI would fail outside the repository.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COURSE_MODULES = {"families", "rates", "samples", "fetch_models"}
PACKAGE = ROOT / "templatestudio"


def package_modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """A wheel built from a copy of the sources (the repository gets no build/ folder)."""
    source = tmp_path_factory.mktemp("source")
    for name in ["pyproject.toml", "README.md", *(f"{module}.py" for module in COURSE_MODULES)]:
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(PACKAGE, source / "templatestudio", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
         "--quiet", "-w", str(out)],
        check=True, capture_output=True, timeout=300,
    )
    (built,) = out.glob("templatestudio-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_only_the_templatestudio_package(wheel):
    names = wheel.namelist()
    top_level = {name.split("/")[0] for name in names}
    assert top_level == {"templatestudio", f"templatestudio-{version(wheel)}.dist-info"}
    (listed,) = [name for name in names if name.endswith(".dist-info/top_level.txt")]
    assert wheel.read(listed).decode().split() == ["templatestudio"]


def test_the_wheel_holds_every_module_of_the_package_subpackages_included(wheel):
    expected = {path.relative_to(ROOT).as_posix() for path in package_modules()}
    assert {name for name in wheel.namelist() if name.endswith(".py")} == expected
    assert "templatestudio/formats/__init__.py" in expected  # subpackages are there to be missed


def version(wheel: zipfile.ZipFile) -> str:
    return Path(wheel.filename).name.split("-")[1]


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every module path imports, inside functions too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", package_modules(), ids=lambda path: path.relative_to(ROOT).as_posix())
def test_no_package_module_imports_a_course_module(path):
    assert imported_modules(path) & COURSE_MODULES == set()


CLI_WITHOUT_COURSE_FILES = """
import sys

class NoCourseModules:
    def find_spec(self, name, path=None, target=None):
        if name in {course}:
            raise ImportError(f"the package imported the course module {{name}}")

sys.meta_path.insert(0, NoCourseModules())
import templatestudio.__main__ as cli
import templatestudio.compare, templatestudio.render, templatestudio.templates

templatestudio.render.load_tokenizer = lambda repo_id: repo_id
templatestudio.compare.tool_support = lambda family, tokenizer, question, tools: (family, tokenizer)
print(cli.family_rows())
asked = []
templatestudio.templates.load_chat_templates = lambda target: asked.append(target) or []
assert cli.main(["check"]) == 0
print(asked)
"""


def test_the_cli_runs_with_the_course_modules_out_of_reach():
    # What a user who ran `pip install templatestudio` has: the package and no
    # course files. Both commands' family lists come from inside the package.
    code = CLI_WITHOUT_COURSE_FILES.format(course=sorted(COURSE_MODULES))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    rows, asked = result.stdout.splitlines()
    from templatestudio.families import TABLE_FAMILIES

    assert rows == repr(list(TABLE_FAMILIES.items()))
    assert asked == repr(list(TABLE_FAMILIES.values()))
