"""Planning + checkpoint cost for a 100k-record session, as a ratio to one core build of it
(goal: <= 1.0).

Run: .venv/bin/python benchmarks/bench_compaction.py [RECORDS]

Times are the least CPU time of the process over several runs: on a shared machine, time spent
waiting for a core is not the step's cost. Before each compaction run the record the previous
run appended is cut off and the file synced, outside the timing, so each run appends to the same
session and its own sync flushes only the record it appends.

"compaction over a built context" is what an agent pays on top of the build it already does
for its next request: plan, required identifiers, prompt, pair-check of the kept messages,
the checkpoint record, its encoding and the locked, fsynced append. The summarizer is an
in-process function, so no model or process time is counted. "whole pipeline" adds reading the
file and the build itself.

The core build is the session turned into its context: the file read and its records folded, as
`sessionctx build` does it and as the core's own benchmark measures it. The goal's ratio is taken
against it. The ratio against the fold alone (`build_context` over records already in memory) is
printed as a stricter reference.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from sessionctx.compaction.checkpoint import Settings, compact
from sessionctx.compaction.prompt import SECTIONS
from sessionctx.compaction.target import FileTarget
from sessionctx.context import build_context
from sessionctx.records import read_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the package
from benchmarks.turns import REPEATS, least


class Echo:
    """Returns a summary with every section and the identifiers the prompt asks for."""

    ref = "bench:echo"

    def summarize(self, prompt: str) -> str:
        mark = "\n<exact_identifiers>\n"
        quoted = prompt.split(mark, 1)[1].split("\n</exact_identifiers>", 1)[0] \
            if mark in prompt else ""
        idents = "\n".join(f"- {json.loads(x)}" for x in quoted.splitlines())
        return "\n".join(f"## {s}\n{idents if s == 'Exact identifiers' else 'None'}"
                         for s in SECTIONS)


def session(n: int, paths: bool = True) -> list[dict[str, Any]]:
    """Tool loops; with `paths`, every turn names a file, so the audit's identifiers are found
    early; without, no record holds an identifier and every text is searched."""
    out: list[dict[str, Any]] = []
    t = 0
    while len(out) < n:
        name = f"src/m{t}.py" if paths else f"module m{t}"
        out += [
            {"role": "user", "content": [{"type": "text", "text": f"turn {t}: fix {name}"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Looking at it."},
                {"type": "toolCall", "id": f"call_{t}", "name": "bash",
                 "arguments": {"command": f"cat {name}"}}]},
            {"role": "toolResult", "toolCallId": f"call_{t}", "toolName": "bash",
             "content": [{"type": "text", "text": "x = 1\n" * 20}], "isError": False},
            {"role": "assistant", "content": [{"type": "text", "text": f"Fixed m{t}."}]},
        ]
        t += 1
    return out[:n]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    print("session naming a file in every turn:")
    measure(n, paths=True)
    print("session with no identifier to keep (every text searched):")
    measure(n, paths=False)


def measure(n: int, paths: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(o) + "\n" for o in session(n, paths))
        size = os.path.getsize(path)
        target = FileTarget(path)
        snapshot = target.snapshot()
        records = snapshot.records
        messages = build_context(records).messages
        settings = Settings()

        def put_back() -> None:
            """The file as it was: the appended checkpoint cut off, not the session rewritten."""
            with open(path, "r+b") as out:
                out.truncate(size)
                out.flush()
                os.fsync(out.fileno())

        # The goal's two sides take turns, each from a collected heap (reading the session
        # leaves much garbage).
        build, compaction, stored = least(
            (lambda: build_context(records), None),
            (lambda: compact(target, Echo(), settings, snapshot=snapshot, messages=messages),
             put_back),
            (lambda: build_context(read_path(path).records), None))
        [pipeline] = least((lambda: compact(target, Echo(), settings), put_back))
    print(f"  records: {n}, context messages: {len(messages)} "
          f"(least CPU time of {REPEATS} runs)")
    print(f"  core build (read + fold):            {stored * 1000:8.1f} ms")
    print(f"  fold alone:                          {build * 1000:8.1f} ms")
    print(f"  compaction over a built context:     {compaction * 1000:8.1f} ms  "
          f"ratio {compaction / stored:.2f} (goal <= 1.0); over the fold alone "
          f"{compaction / build:.2f} (reference)")
    print(f"  whole pipeline (read+build+above):   {pipeline * 1000:8.1f} ms  "
          f"ratio {pipeline / stored:.2f}")


if __name__ == "__main__":
    main()
