"""Claude Code subagent transcripts: a file that is all sidechain is that agent's conversation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from sessionctx.changes import ChangeKind
from sessionctx.cli import main
from sessionctx.context import build_context
from sessionctx.inputs import read_raw
from sessionctx.records import MESSAGE
from tests.conftest import FIXTURES

CLAUDE = FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
Obj = dict[str, Any]


def _lines() -> list[Obj]:
    return [json.loads(x) for x in CLAUDE.read_text().splitlines() if x.strip()]


def _jsonl(objs: list[Obj]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def _subagent(objs: list[Obj]) -> list[Obj]:
    """The real session's lines as a subagent writes its own: every entry a sidechain one."""
    return [{**o, "isSidechain": True, "agentId": "a1b2c3d4"} for o in objs]


def test_an_all_sidechain_file_reads_as_that_agents_conversation(tmp_path: Path) -> None:
    answered = _lines()[:12]  # up to the answer of the last call that has one
    main_read = read_raw(_jsonl(answered), "main.jsonl")
    expected = [r.view for r in main_read.records if r.kind == MESSAGE]
    sub = read_raw(_jsonl(_subagent(answered)), "agent-a1b2c3d4.jsonl")
    assert [r.view for r in sub.records if r.kind == MESSAGE] == expected
    ctx = build_context(sub.records)
    assert not ctx.pending_calls and not ctx.repairs
    path = tmp_path / "agent-a1b2c3d4.jsonl"
    path.write_bytes(_jsonl(_subagent(answered)))
    outcome = CliRunner().invoke(main, ["check", str(path)])
    assert outcome.exit_code == 0, outcome.output
    assert f"ready to send as stored ({len(ctx.messages)} messages)" in outcome.output
    assert len(ctx.messages) == 8


def test_a_subagent_transcript_keeps_its_dangling_call() -> None:
    sub = read_raw(_jsonl(_subagent(_lines())), "agent.jsonl")
    ctx = build_context(sub.records)
    assert [p.name for p in ctx.pending_calls] == ["ExitPlanMode"]


def test_sidechain_entries_in_a_session_name_their_cause() -> None:
    objs = _lines()
    side = {**objs[5], "uuid": "side-1", "parentUuid": objs[5]["uuid"], "isSidechain": True}
    result = read_raw(_jsonl([*objs, side]), "s.jsonl")
    ctx = build_context(result.records)
    skipped = [c for c in ctx.changes if c.record is not None
               and c.record.line == len(objs) + 1]
    assert [c.kind for c in skipped] == [ChangeKind.SKIPPED_CONTEXT_ROW]
    assert "sidechain entry of another agent" in skipped[0].reason
    assert len([r for r in result.records if r.kind == MESSAGE]) == len(
        [r for r in read_raw(_jsonl(objs), "s.jsonl").records if r.kind == MESSAGE])


def test_explain_names_the_subagent_transcripts_beside_a_session(tmp_path: Path) -> None:
    session = tmp_path / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
    session.write_bytes(CLAUDE.read_bytes())
    folder = tmp_path / session.stem / "subagents"
    folder.mkdir(parents=True)
    agents = [folder / "agent-b2.jsonl", folder / "agent-a1.jsonl"]
    for agent in agents:
        agent.write_bytes(_jsonl(_subagent(_lines()[:12])))
    (folder / "notes.txt").write_text("not a transcript")
    rows = CliRunner().invoke(main, ["explain", str(session)]).output.splitlines()
    at = rows.index("2 subagent transcripts beside this session (explain each on its own):")
    assert rows[at + 1:at + 3] == [f"  {agents[1]}", f"  {agents[0]}"]
    alone = CliRunner().invoke(main, ["explain", str(agents[0])]).output
    assert "subagent transcript" not in alone and "read as claude-code" in alone
