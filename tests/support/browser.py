"""The system Chromium for tests: pages opened with Playwright, figures rendered to PNG with kaleido.

Playwright's own browser download does not work offline, so both drive Debian's ``chromium`` (``.ci/run``
installs it). A test that needs it fails when it is missing: a skipped browser test would hide a page or a
figure nobody looked at::

    from tests.support.browser import chromium_page, render_png

    with chromium_page() as page:
        page.goto(path.as_uri())
    render_png(fig, tmp_path / "fig.png")      # -> the PNG's pixels as a (height, width, 3) uint8 array
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHROMIUM_ARGS", "chromium", "chromium_page", "png_pixels", "render_png"]

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str:
    """The Chromium executable; fails the test (never skips) when there is none."""
    found = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(found).exists():
        pytest.fail("Chromium is not installed: `apt-get install -y chromium` (.ci/run installs it)")
    return found


@contextmanager
def chromium_page(*, offline: bool = False) -> Iterator[Any]:
    """A Playwright page in headless Chromium; ``offline`` refuses every request that is not a local file.

    The page collects the JavaScript errors it raises in ``page.errors``.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            if offline:
                context.route(
                    "**/*",
                    lambda route: (
                        route.continue_() if route.request.url.startswith("file:") else route.abort()
                    ),
                )
            page = context.new_page()
            page.errors = []
            page.on("pageerror", lambda e: page.errors.append(str(e)))
            yield page
        finally:
            browser.close()


def render_png(fig: Any, path: Path, *, width: int = 1000, height: int | None = None) -> Any:
    """Write a plotly figure as PNG with kaleido on the system Chromium; returns its pixels (see png_pixels)."""
    os.environ["BROWSER_PATH"] = chromium()  # kaleido's way to name the browser it drives
    for attempt in range(3):
        try:
            fig.write_image(path, format="png", width=width, height=height or fig.layout.height or 500)
            break
        except Exception as exc:
            # kaleido can call its page's script before the page has loaded it on a busy machine; that is
            # kaleido's start-up, not the figure: try again (any other error is the test's)
            if "kaleido_scopes is not defined" not in str(exc) or attempt == 2:
                raise
    return png_pixels(path)


def png_pixels(path: Path) -> Any:
    """The pixels of a PNG as a ``(height, width, 3)`` uint8 numpy array."""
    import numpy as np
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))
