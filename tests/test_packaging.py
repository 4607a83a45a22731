"""What ``pip install templatestudio`` puts in a user's environment: the package, nothing else.

The course's top-level modules (families, rates, samples, fetch_models) stay
in the repository for the notebooks and tests; the wheel must not carry
them, and nothing inside the package may import them, or the installed
CLI would fail outside the repository.
"""

from __future__ import annotations

import ast
import importlib.metadata
import runpy
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

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


def test_the_wheel_holds_the_corpus_list_the_fetch_command_reads(wheel):
    # python -m templatestudio corpus fetch runs from an installed wheel too.
    assert "templatestudio/corpus_list.json" in wheel.namelist()


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


# Ranges, not pins: `pip install templatestudio` into an environment that already has
# vLLM (transformers<5.20) must keep vLLM's transformers. The exact versions are the
# course's lock, constraints/course.txt; the vLLM environment runs on the lower bounds
# (constraints/lowest.py, checked there by tests/vllm/test_installed_package.py).
def requirements(wheel: zipfile.ZipFile) -> list[Requirement]:
    (metadata,) = [name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")]
    lines = wheel.read(metadata).decode().splitlines()
    return [Requirement(line.split(":", 1)[1]) for line in lines if line.startswith("Requires-Dist:")]


def lock() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints" / "course.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, pinned = line.split("==")
            pins[canonicalize_name(name)] = Version(pinned)
    return pins


def test_every_dependency_is_a_range_with_a_lower_bound_and_no_exact_pin(wheel):
    declared = requirements(wheel)
    assert declared, "the wheel declares no dependencies"
    for requirement in declared:
        if canonicalize_name(requirement.name) == "templatestudio":
            continue  # dev's templatestudio[live,mcp]: the package's own extras
        operators = {spec.operator for spec in requirement.specifier}
        assert "==" not in operators and "===" not in operators, f"{requirement} pins a version"
        assert ">=" in operators, f"{requirement} has no lower bound to test"


def test_the_lower_bounds_the_vllm_environment_installs_are_the_wheels():
    lowest = runpy.run_path(str(ROOT / "constraints" / "lowest.py"))["lower_bounds"]()
    base = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    for text in base:
        requirement = Requirement(text)
        bound = next(spec.version for spec in requirement.specifier if spec.operator == ">=")
        assert lowest[requirement.name] == bound
        assert Version(bound) in requirement.specifier, f"{requirement}: its own lower bound is outside it"


def test_the_course_lock_pins_every_dependency_inside_its_declared_range(wheel):
    pins = lock()
    for requirement in requirements(wheel):
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": "dev"}):
            continue  # an extra the course does not install
        name = canonicalize_name(requirement.name)
        if name in {"torch", "templatestudio"}:
            continue  # torch is the Makefile's TORCH_SPEC; templatestudio[live,mcp] is the package itself
        assert name in pins, f"constraints/course.txt does not lock {name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints/course.txt pins {name}=={pins[name]}, outside {requirement}"
        )


def test_the_environment_runs_on_the_course_lock():
    # make builds .venv with -c constraints/course.txt: what is installed is what is locked.
    for name, pinned in lock().items():
        try:
            installed = Version(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            continue  # locked for another platform's wheel set, not installed here
        assert installed == pinned, f"{name} {installed} installed, constraints/course.txt locks {pinned}"
