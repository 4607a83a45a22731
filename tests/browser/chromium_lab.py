"""What the browser test needs to find Chromium and to run a private JupyterLab.

Chromium is Debian's ``/usr/bin/chromium`` driven by Playwright; Playwright's
own browser download is never used (it needs a network this CI lacks). The
JupyterLab server gets its own config, data, runtime, settings and workspace
folders, so nothing a user configured or left open changes what it shows.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_SOURCE = ROOT / "notebooks"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",  # CI containers run as root, where the sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(os.environ.get("TEMPLATESTUDIO_BROWSER_ARTIFACTS", ROOT / ".browser-artifacts"))
IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")  # as tests/conftest.py
HAVE_BROWSER = CHROMIUM.is_file() and importlib.util.find_spec("playwright") is not None
MISSING = (
    "the browser test needs Debian's chromium (apt-get install -y chromium, giving "
    f"{CHROMIUM}) and the playwright package (pip install -e '.[dev]')"
)
START_TIMEOUT = 60  # seconds for JupyterLab to answer /api/status
OPEN_TIMEOUT = 60_000  # ms: open a notebook and start its kernel
SETTLE = 500  # ms after the kernel is idle for JupyterLab to mark a rewrite (seen before idle)
KERNEL_STATUS = '.jp-StatusBar-TextItem[title^="Change kernel"]'  # "Python 3 (ipykernel) | Idle"


@dataclass
class Lab:
    url: str
    token: str
    notebooks: Path
    process: subprocess.Popen
    log: Path

    def api(self, method: str, path: str):
        request = urllib.request.Request(
            f"{self.url}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shut_down_kernels(self) -> None:
        for session in self.api("GET", "sessions"):
            self.api("DELETE", f"sessions/{session['id']}")
        for kernel in self.api("GET", "kernels"):
            self.api("DELETE", f"kernels/{kernel['id']}")

    def shut_down_soon(self, name: str) -> None:
        """Shut the kernel of notebook name down in the background.

        The server answers a DELETE only once the kernel is gone, which takes
        a second or more; the next notebook need not wait for that.
        """
        sessions = [s["id"] for s in self.api("GET", "sessions") if s["path"] == name]

        def delete() -> None:
            for session in sessions:
                try:
                    self.api("DELETE", f"sessions/{session}")
                except (OSError, urllib.error.URLError):
                    pass  # the server is stopping; its teardown shuts kernels down

        threading.Thread(target=delete, daemon=True).start()


def require_browser() -> None:
    """Skip without a browser, except under CI, where a missing browser is a failure."""
    if not HAVE_BROWSER:
        if IN_CI:
            pytest.fail(f"CI=true but {MISSING}", pytrace=False)
        pytest.skip(MISSING)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def lab_environment(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    folders = {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTER_DATA_DIR": "data",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "JUPYTERLAB_SETTINGS_DIR": "settings",
        "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
        "IPYTHONDIR": "ipython",
    }
    for variable, name in folders.items():
        (base / name).mkdir()
        env[variable] = str(base / name)
    # Notebook 13 must take its no-weights path here, even when the test
    # session trained a stand-in for nbval and named it in this variable.
    env.pop("TEMPLATESTUDIO_LIVE_MODEL", None)
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    # No news or update checks: they need the network and show a toast.
    notification = base / "settings" / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    return env


def wait_until_serving(server: Lab) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"JupyterLab exited at start:\n{server.log.read_text()[-3000:]}")
        try:
            server.api("GET", "status")
            return
        except (OSError, urllib.error.URLError):
            time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer in {START_TIMEOUT} s:\n{server.log.read_text()[-3000:]}")


def open_notebook(page, lab: Lab, name: str) -> None:
    """Double-click name in the file browser; return once its kernel is idle."""
    item = page.locator(".jp-DirListing-itemText", has_text=re.compile(f"^{re.escape(name)}$"))
    item.dblclick()
    page.wait_for_function(
        """(name) => {
          const tab = document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current');
          return tab && tab.textContent.trim() === name
            && document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell');
        }""",
        arg=name,
        timeout=OPEN_TIMEOUT,
    )
    # The server says when this notebook's kernel is up; the status bar, when
    # the page has heard of it (it may still show the last notebook's state).
    deadline = time.monotonic() + OPEN_TIMEOUT / 1000
    while not any(
        session["path"] == name and session["kernel"]["execution_state"] == "idle"
        for session in lab.api("GET", "sessions")
    ):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the kernel of {name} did not come up")
        time.sleep(0.2)
    wait_for_idle(page, OPEN_TIMEOUT)
    page.wait_for_timeout(SETTLE)


def wait_for_idle(page, timeout: int) -> None:
    page.wait_for_function(
        "(status) => { const item = document.querySelector(status);"
        " return item && item.textContent.trim().endsWith('| Idle'); }",
        arg=KERNEL_STATUS,
        timeout=timeout,
    )


def close_notebook(page, lab: Lab, name: str) -> None:
    """Close the current tab, name, without saving, and shut its kernel down."""
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
    edited = "jp-mod-dirty" in (tab.get_attribute("class") or "")
    tab.locator(".lm-TabBar-tabCloseIcon").click()
    if edited:  # JupyterLab asks before it drops changes
        page.locator(".jp-Dialog").get_by_role("button", name="Discard").click()
    page.wait_for_selector(".jp-NotebookPanel", state="detached", timeout=10_000)
    lab.shut_down_soon(name)
