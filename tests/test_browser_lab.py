"""The failure browser in a real JupyterLab: the test starts JupyterLab on 127.0.0.1 (a free port, a token, a
temporary notebook folder, no browser of its own), opens a notebook in headless Chromium with Playwright, runs
``result.explore()``, picks a case and a filter in the widget, and checks the view follows. JupyterLab and its
kernel are stopped at the end."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.support.browser import chromium_page

ROOT = Path(__file__).resolve().parents[1]

SUITE = {
    "schemaVersion": "1.1.0",
    "metadata": {"name": "lab-suite"},
    "default_evaluators": {"ExactMatch": {}},
    "items": [
        {"testId": "HOURS", "prompt": "When does the office open?", "expected_response": "at nine on weekdays",
         "category": "office"},
        {"testId": "LEAVE", "prompt": "How many days of leave?", "expected_response": "25 days", "category": "hr"},
        {"testId": "PARKING", "prompt": "Is there parking?", "expected_response": "yes, level -1",
         "category": "office"},
    ],
}  # fmt: skip

CELL = """
import evalnb

def agent(prompt):
    return {"When does the office open?": "at ten on weekends", "How many days of leave?": "25 days"}.get(
        prompt, "no parking, sorry")

result = evalnb.run("suite.json", agent, progress=False)
result.explore()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def lab(tmp_path: Path) -> Iterator[str]:
    """A JupyterLab on 127.0.0.1 serving a folder with the suite and the notebook; yields the notebook's URL."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "suite.json").write_text(json.dumps(SUITE), encoding="utf-8")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL.strip())])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "explore.ipynb")
    port, token = free_port(), secrets.token_hex(16)
    home = tmp_path / "home"
    env = dict(os.environ)
    env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "HOME": str(home),  # settings, workspaces and runtime files stay in the temporary folder
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        }
    )
    log = (tmp_path / "lab.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={folder}", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--allow-root",  # CI runs as root
        ],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2
                ) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail(
                    "JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text(errors="replace")
                )
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/lab/tree/explore.ipynb?token={token}"
    finally:
        # the server and the kernel it started are one process group: stop them all, then make sure
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()


def options(select: Any) -> list[str]:
    """The labels of a select's options (ipywidgets writes their spaces as no-break spaces)."""
    return [t.replace("\xa0", " ") for t in select.locator("option").all_inner_texts()]


def answer_dialogs(page: Any, seen: list[str]) -> None:
    """Accept any JupyterLab dialog in the way (a slow server can ask which kernel to start: the default,
    Python 3, is the one), noting its text for the failure message."""
    dialog = page.locator(".jp-Dialog")
    while dialog.count() and dialog.first.is_visible():
        seen.append(" ".join(dialog.first.inner_text().split()))
        accept = dialog.first.locator(".jp-mod-accept")
        if accept.count():
            accept.first.click()
        else:
            page.keyboard.press("Escape")
        page.wait_for_timeout(500)


def run_first_cell(page: Any, seen: list[str]) -> None:
    """Run the notebook's cell once its kernel is idle; a key press the editor was not ready for is pressed
    again (the cell's prompt shows ``[*]`` or ``[1]`` once it runs)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=120_000)
    cell = page.locator(".jp-Notebook .jp-Cell").first
    started = "document.querySelector('.jp-Cell .jp-InputPrompt').innerText.match(/\\[(\\*|\\d+)\\]/)"
    for _attempt in range(20):
        answer_dialogs(page, seen)
        try:
            cell.locator(".cm-content").click(timeout=5000)
            page.keyboard.press("Shift+Enter")
            page.wait_for_function(started, timeout=3000)
            break
        except PlaywrightTimeout:
            continue
    deadline = time.monotonic() + 120
    while not page.locator(".evalnb-cases select").count():
        answer_dialogs(page, seen)
        if time.monotonic() > deadline:
            raise AssertionError("the browser widget did not appear")
        page.wait_for_timeout(500)


def test_pick_a_case_in_jupyterlab_and_the_view_follows(lab: str, tmp_path: Path) -> None:
    with chromium_page() as page:
        page.set_default_timeout(120_000)
        page.goto(lab)
        seen: list[str] = []
        try:
            run_first_cell(page, seen)
        except Exception as exc:
            page.screenshot(path=str(tmp_path / "lab.png"), full_page=True)
            raise AssertionError(f"{exc}; dialogs: {seen}; screenshot: {tmp_path / 'lab.png'}") from exc
        cases = page.locator(".evalnb-cases select")
        view = page.locator(".evalnb-view")
        # failed cases first: HOURS is shown, with the expected and actual words marked
        page.wait_for_function(
            "document.querySelector('.evalnb-view') && "
            "document.querySelector('.evalnb-view').innerText.includes('When does the office open?')"
        )
        assert page.locator(".evalnb-count").inner_text().startswith("2 cases")
        assert view.locator("del.eb-del", has_text="nine").count() == 1
        assert view.locator("ins.eb-ins", has_text="ten").count() == 1
        assert options(cases) == ["FAIL · HOURS", "FAIL · PARKING"]
        # pick another case: the view follows
        cases.select_option(label="FAIL · PARKING")
        page.wait_for_function(
            "document.querySelector('.evalnb-view').innerText.includes('Is there parking?')"
        )
        assert "no parking, sorry" in view.inner_text() and "yes, level -1" in view.inner_text()
        assert view.locator("tr.eb-failed[data-check='ExactMatch']").count() == 1
        # a filter: every case of the hr category (it passed), the list and the view follow
        page.locator(".evalnb-filter-status select").select_option(label="all")
        page.locator(".evalnb-filter-category select").select_option(label="hr")
        page.wait_for_function(
            "document.querySelector('.evalnb-view').innerText.includes('How many days of leave?')"
        )
        assert options(cases) == ["PASS · LEAVE"]
        assert page.locator(".evalnb-count").inner_text().startswith("1 case matches")
        assert not page.errors, page.errors
