"""Fixtures of the browser test: a private JupyterLab and one Chromium page.

``lab`` starts JupyterLab on 127.0.0.1 on a free port with a random token,
as root if need be (``--allow-root``), serving a copy of notebooks/ so that
Run All never writes into the repository, and stops it by its pid at the
end. ``page`` is one Chromium page with JupyterLab loaded. A failing test
leaves a screenshot in ``.browser-artifacts/`` (or in
``$TEMPLATESTUDIO_BROWSER_ARTIFACTS``).
"""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
import sys
import urllib.error

import pytest
from chromium_lab import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    NOTEBOOK_SOURCE,
    Lab,
    close_notebook,
    free_port,
    lab_environment,
    open_notebook,
    require_browser,
    wait_until_serving,
)


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    require_browser()
    base = tmp_path_factory.mktemp("lab")
    notebooks = base / "notebooks"
    notebooks.mkdir()
    for notebook in sorted(NOTEBOOK_SOURCE.glob("*.ipynb")):
        shutil.copy2(notebook, notebooks / notebook.name)
    port, token = free_port(), secrets.token_hex(16)
    log = base / "jupyterlab.log"
    command = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={notebooks}",
    ]
    with log.open("w") as log_file:
        process = subprocess.Popen(
            command, env=lab_environment(base), stdout=log_file, stderr=subprocess.STDOUT
        )
    server = Lab(f"http://127.0.0.1:{port}", token, notebooks, process, log)
    try:
        wait_until_serving(server)
        yield server
    finally:
        try:
            if process.poll() is None:
                server.shut_down_kernels()
        except (OSError, urllib.error.URLError):
            pass  # the server is stopped below either way
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def page(lab, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        try:
            tab = context.pages[0] if context.pages else context.new_page()
            # ?reset: start from an empty workspace, whatever was open before.
            tab.goto(f"{lab.url}/lab?reset&token={lab.token}")
            tab.wait_for_selector(".jp-DirListing-item", timeout=60_000)
            yield tab
        finally:
            context.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed:
        item.browser_failed = True
    return report


def screenshot(page, node) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", node.name)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


@pytest.fixture
def notebook(request, page, lab):
    """Open the notebook named by the test's parameter; screenshot a failure; close it."""
    try:
        open_notebook(page, lab, request.param)
    except Exception:
        screenshot(page, request.node)
        raise
    yield request.param
    if getattr(request.node, "browser_failed", False):
        screenshot(page, request.node)
    close_notebook(page, lab, request.param)
