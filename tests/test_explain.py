"""`explain` on real files: quiet runs fold, checkpoints read short, every change shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.context import build_context
from sessionctx.explain import explain_lines, index_ranges
from sessionctx.inputs import read_raw
from tests.conftest import FIXTURES

CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
PI = FIXTURES / "pi" / "large-session.jsonl"


def _explain(path: Path) -> list[str]:
    outcome = CliRunner().invoke(main, ["explain", str(path)])
    assert outcome.exit_code == 0, outcome.output
    return outcome.output.splitlines()


def test_index_ranges() -> None:
    assert index_ranges([0, 1, 2, 3, 4, 7]) == "#0–#4, #7"
    assert index_ranges([5]) == "#5"
    assert index_ranges([3, 1, 2, 9, 10]) == "#1–#3, #9–#10"


def test_codex_context_lines_fold_into_counted_runs() -> None:
    objs = [json.loads(x) for x in CODEX.read_text().splitlines()]
    rows = _explain(CODEX)
    folded = [r for r in rows if re.match(r"lines \d+–\d+: \d+ context rows", r)]
    assert folded
    for row in folded:
        m = re.match(r"lines (\d+)–(\d+): (\d+) context rows \((.*)\), not sent$", row)
        assert m, row
        first, last, count = int(m[1]), int(m[2]), int(m[3])
        span = objs[first - 1:last]
        assert count == len(span) == last - first + 1
        counted = dict(part.rsplit(" ×", 1) for part in m[4].split(", "))
        types: dict[str, int] = {}
        for o in span:
            types[o["type"]] = types.get(o["type"], 0) + 1
        assert {k: int(v) for k, v in counted.items()} == types
    assert len(rows) < len(objs)


def test_a_checkpoint_row_shows_its_summary_line_and_the_messages_it_gives() -> None:
    objs = [json.loads(x) for x in PI.read_text().splitlines()]
    compaction = {"type": "compaction", "timestamp": "2025-11-21T03:00:00Z",
                  "summary": "Goal: finish the nord theme\n" + "details " * 200,
                  "firstKeptEntryIndex": 830, "tokensBefore": 10}
    raw = "".join(json.dumps(o) + "\n" for o in [*objs[:900], compaction])
    read = read_raw(raw.encode(), "pi.jsonl")
    ctx = build_context(read.records)
    rows = explain_lines(read.records, ctx, "pi.jsonl", read.format)
    row = next(r for r in rows if r.startswith("line 901 "))
    assert "'Goal: finish the nord theme'" in row and "details" not in row
    assert f"giving #0–#{len(ctx.messages) - 1}" in row
    assert len(row) < 160
    kept = next(r for r in rows if r.startswith("line 900 "))
    assert re.search(r" #\d+ ", kept)  # the kept entry names the message it became
    assert rows[0] == "pi.jsonl: read as pi"


def test_every_change_a_row_concerns_shows_its_reason() -> None:
    rows = _explain(PI)
    at = next(i for i, r in enumerate(rows) if r.startswith("line 4 "))
    assert "metadata" in rows[at]
    assert "skipped_metadata: metadata never reaches the model" in rows[at + 1]
    report = json.loads(CliRunner().invoke(main, ["check", str(PI), "--json"]).output)
    shown = "\n".join(rows)
    for change in report["changes"]:
        if change["kind"] in ("skipped_metadata", "skipped_context_row"):
            continue  # folded runs name them by count
        assert f"{change['kind']}: {change['reason']}" in shown


def test_a_streamed_message_names_its_lines() -> None:
    rows = _explain(FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl")
    assert any(r.startswith("lines 13–14 ") and "ExitPlanMode" in r for r in rows)
    pending = rows[-1]
    assert pending.lstrip().startswith("line 14 ")
