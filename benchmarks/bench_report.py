"""Report speed, as ratios measured in one run, the two sides taking turns.

1. `sessionctx report FILE -o OUT` over `sessionctx build FILE` on the same synthetic ~100 MB
   session, whole processes (goal <= 2.0).
2. In headless Chromium: time until the report's first screen of records is painted (the
   Element Timing entry of its first row's heading) over the first contentful paint of a page
   of the same size holding only static text (goal <= 1.5). The report's own first contentful
   paint and the moment its first rows entered the document are printed beside it.

Run: .venv/bin/python benchmarks/bench_report.py [--mb 100] [--rounds 3]
Needs Debian's chromium (or SESSIONCTX_CHROMIUM) for the second figure.
"""

from __future__ import annotations

import argparse
import html
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the package
from benchmarks.bench_core import write_session

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _cli() -> list[str]:
    exe = shutil.which("sessionctx", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "sessionctx.cli"]


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def static_page(like: Path, session: Path, out: Path) -> None:
    """A page of the same size as `like`: the session's own lines as escaped static text."""
    target = like.stat().st_size
    with out.open("w", encoding="utf-8") as f, session.open(encoding="utf-8") as src:
        f.write("<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>static</title>"
                "</head><body><main>\n")
        written = 0
        while written < target:
            line = src.readline()
            if not line:
                src.seek(0)
                continue
            chunk = f"<p>{html.escape(line.strip())}</p>\n"
            f.write(chunk)
            written += len(chunk)
        f.write("</main></body></html>\n")


_PAINTED = """() => new Promise(done => {
  const found = performance.getEntriesByType('element')
    .filter(e => e.identifier === 'sessionctx-first-rows');
  if (found.length) { done(found[0].renderTime); return; }
  new PerformanceObserver(list => {
    const e = list.getEntries().find(x => x.identifier === 'sessionctx-first-rows');
    if (e) done(e.renderTime);
  }).observe({type: 'element', buffered: true});
  setTimeout(() => done(null), 5000);
})"""


def first_paint(browser: object, path: Path) -> tuple[float, float | None, float | None]:
    """(first contentful paint, the report's first rows painted, the rows entering the
    document) in ms, each on a fresh page; the last two are None for a page without rows."""
    context = browser.new_context()  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(path.as_uri(), wait_until="commit", timeout=600_000)
    page.wait_for_load_state("load", timeout=600_000)
    fcp = page.evaluate(
        "performance.getEntriesByName('first-contentful-paint').map(e => e.startTime)[0]")
    mark = page.evaluate(
        "performance.getEntriesByName('sessionctx-first-render').map(e => e.startTime)[0]")
    painted = page.evaluate(_PAINTED) if mark is not None else None
    context.close()
    return (float(fcp), float(painted) if painted is not None else None,
            float(mark) if mark is not None else None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cli = _cli()
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp, "session.jsonl")
        records = write_session(str(session), args.mb)
        report = Path(tmp, "report.html")
        print(f"session: {session.stat().st_size / 2**20:.0f} MB, {records} records")
        builds, reports = [], []
        for _ in range(args.rounds):
            builds.append(_timed([*cli, "build", str(session)]))
            reports.append(_timed([*cli, "report", str(session), "-o", str(report)]))
        b, r = statistics.median(builds), statistics.median(reports)
        print(f"report / build (goal <= 2.0): {r / b:.2f}   "
              f"[build {b:.1f} s, report {r:.1f} s; report file "
              f"{report.stat().st_size / 2**20:.0f} MB]")

        chromium = os.environ.get("SESSIONCTX_CHROMIUM") or shutil.which("chromium")
        if chromium is None:
            print("first render: skipped (no chromium)")
            return
        static = Path(tmp, "static.html")
        static_page(report, session, static)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, headless=True, args=ARGS)
            ours, theirs, painted, marks = [], [], [], []
            for _ in range(args.rounds):
                fcp, rows, mark = first_paint(browser, report)
                ours.append(fcp)
                if rows is not None and mark is not None:
                    painted.append(rows)
                    marks.append(mark)
                theirs.append(first_paint(browser, static)[0])
            browser.close()
        o, t = statistics.median(painted), statistics.median(theirs)
        print(f"first screen, report / static page of the same size (goal <= 1.5): {o / t:.2f}"
              f"   [report's first rows painted at {o:.0f} ms, static page's first paint "
              f"{t:.0f} ms; report's first contentful paint {statistics.median(ours):.0f} ms, "
              f"its first rows in the document at {statistics.median(marks):.0f} ms]")


if __name__ == "__main__":
    main()
