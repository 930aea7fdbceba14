"""A call in one streamed line of a gathered Claude Code message is named at that line by check,
repair, explain and the report alike; the report's row for the whole message spans its lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.context import build_context
from sessionctx.inputs import read_input
from sessionctx.records import select_branch
from sessionctx.report import page_model
from tests.test_repair_formats import claude_variants

DANGLING = "toolu_01BxsuUhRW9umBEuD9FYvYDu"


@pytest.mark.parametrize(("case", "first", "call_line"),
                         [("as stored", 13, 14), ("unanswered in the middle", 12, 13)])
def test_every_command_names_the_calls_own_line(fixtures: Path, tmp_path: Path, case: str,
                                                first: int, call_line: int) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(claude_variants(fixtures)[case])
    assert DANGLING in path.read_text().splitlines()[call_line - 1]  # the call's own line

    read = read_input(str(path))
    records, off = select_branch(read.records)
    page = page_model(records, build_context(records), off_branch=off)
    pending = next(p for p in page.pending if p["id"] == DANGLING)
    change = next(c for c in page.changes
                  if c["kind"] == "dropped_unpaired_call" and DANGLING in c["reason"])
    assert pending["s"] == change["s"] == f"line {call_line}"
    assert pending["row"] == change["row"]
    assert page.rows[pending["row"]]["s"] == f"lines {first}–{call_line}"

    checked = json.loads(CliRunner().invoke(main, ["check", str(path), "--json"]).output)
    assert {p["record"]["line"] for p in checked["problems"] if DANGLING in p["message"]} \
        == {call_line}
    assert [p["record"] for p in checked["pending_calls"] if p["id"] == DANGLING] \
        == [{"line": call_line}]
    repaired = json.loads(CliRunner().invoke(
        main, ["repair", str(path), "--dry-run", "--json"]).output)
    assert {c["line"] for c in repaired["changes"] if DANGLING in c["reason"]} \
        == {call_line}
    explained = CliRunner().invoke(main, ["explain", str(path)]).output
    assert any(r.startswith(f"lines {first}–{call_line} ") and "ExitPlanMode" in r
               for r in explained.splitlines())
