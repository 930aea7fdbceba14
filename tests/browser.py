"""Headless Chromium for the page tests: Debian's system browser driven by Playwright.

Playwright's own browser download cannot work offline, so the tests point it at the system
executable. Where no browser is installed the tests skip, except under CI, where `.ci/run`
installs one and its absence is a failure.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def chromium_path() -> str | None:
    return os.environ.get("SESSIONCTX_CHROMIUM") or shutil.which("chromium") or shutil.which(
        "chromium-browser")


@dataclass
class Watched:
    """A page with everything it asked the network for and every error it logged."""

    page: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def outside(self) -> list[str]:
        return [u for u in self.requests if not u.startswith(("file:", "data:", "about:"))]


def browser() -> Iterator[Any]:
    """One browser for a test module (a pytest fixture body)."""
    path = chromium_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium on a CI machine: .ci/run installs Debian's chromium")
        pytest.skip("no chromium installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def open_page(b: Any, url: str, *, color_scheme: str = "light",
              viewport: tuple[int, int] = (1400, 1000)) -> Watched:
    context = b.new_context(viewport={"width": viewport[0], "height": viewport[1]},
                            color_scheme=color_scheme)
    page = context.new_page()
    watched = Watched(page)
    page.on("request", lambda r: watched.requests.append(r.url))
    page.on("console", lambda m: watched.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: watched.errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("html[data-loaded]")
    return watched


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']} at {v['nodes'][0]['target']}"
            for v in found if v["impact"] in ("serious", "critical")]


def rows_shown(page: Any) -> int:
    return int(page.locator("#list article.row").count())


def wait_until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Poll from Python: the page's own security policy forbids evaluating strings in it."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the page never reached the expected state")
        time.sleep(0.05)
