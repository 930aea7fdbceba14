"""`check DIR`: a Claude Code session's folder is that session and its subagents' transcripts;
any other directory is each session file in it; the exit code is the worst of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from sessionctx.cli import main
from tests.conftest import FIXTURES

CLAUDE = FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
Obj = dict[str, Any]


def _subagent(lines: int) -> str:
    """The real session's first lines as a subagent writes its own transcript."""
    objs = [json.loads(x) for x in CLAUDE.read_text().splitlines() if x.strip()][:lines]
    return "".join(json.dumps({**o, "isSidechain": True, "agentId": "a1"}) + "\n" for o in objs)


def _project(tmp_path: Path) -> tuple[Path, Path, list[Path]]:
    """A Claude Code project: the real session, and beside it its folder with two subagent
    transcripts (one answered, one ending on the real dangling call) and a sidecar."""
    project = tmp_path / "project"
    project.mkdir()
    session = project / CLAUDE.name
    shutil.copy(CLAUDE, session)
    folder = project / CLAUDE.stem
    subagents = folder / "subagents"
    subagents.mkdir(parents=True)
    done, dangling = subagents / "agent-a1.jsonl", subagents / "agent-b2.jsonl"
    done.write_text(_subagent(12))
    dangling.write_text(_subagent(1000))
    (subagents / "agent-a1.meta.json").write_text('{"agentType": "general-purpose"}')
    (folder / "tool-results").mkdir()
    return project, session, [done, dangling]


def _check(*args: str) -> tuple[int, Any]:
    out = CliRunner().invoke(main, ["check", *args, "--json"])
    return out.exit_code, json.loads(out.output)


def test_a_session_folder_checks_the_session_and_its_subagents(tmp_path: Path) -> None:
    project, session, (done, dangling) = _project(tmp_path)
    code, report = _check(str(project / CLAUDE.stem))
    assert code == 1 and report["ok"] is False and report["exit"] == 1
    assert [(f["path"], f["exit"]) for f in report["files"]] == [
        (str(session), 1), (str(done), 0), (str(dangling), 1)]
    assert report["files"][0]["format"] == "claude-code"
    lost = [p["kind"] for f in report["files"] for p in f["problems"]]
    assert lost == ["dropped_unpaired_call", "dropped_unpaired_call"]
    assert [p["name"] for f in report["files"] for p in f["pending_calls"]] == [
        "ExitPlanMode", "ExitPlanMode"]


def test_the_text_names_each_file_and_sums_them_up(tmp_path: Path) -> None:
    project, session, (done, dangling) = _project(tmp_path)
    out = CliRunner().invoke(main, ["check", str(project / CLAUDE.stem)])
    assert out.exit_code == 1
    assert f"{session}: 1 problem before it can be sent" in out.output
    assert f"{done}: ready to send as stored (8 messages)" in out.output
    assert f"{dangling}: 1 problem " in out.output
    assert out.output.rstrip().endswith(
        "3 session files: 1 ready, 2 with problems, 0 unreadable")


def test_a_project_folder_checks_each_session_with_its_subagents(tmp_path: Path) -> None:
    project, session, subagents = _project(tmp_path)
    code, report = _check(str(project))
    assert code == 1
    assert [f["path"] for f in report["files"]] == [str(session), *map(str, subagents)]


def test_a_folder_of_ready_subagents_exits_0(tmp_path: Path) -> None:
    _, _, (done, dangling) = _project(tmp_path)
    dangling.unlink()
    code, report = _check(str(done.parent))
    assert code == 0 and report["ok"] is True
    assert [f["path"] for f in report["files"]] == [str(done)]


def test_a_folder_of_codex_rollouts_checks_each_and_exits_with_the_worst(
        tmp_path: Path) -> None:
    day = tmp_path / "2025" / "09" / "24"
    day.mkdir(parents=True)
    first, second = day / CODEX.name, day / "rollout-b.jsonl"
    shutil.copy(CODEX, first)
    shutil.copy(CODEX, second)
    (day / "notes.txt").write_text("not a session")
    code, report = _check(str(day))
    assert [f["path"] for f in report["files"]] == [str(first), str(second)]
    assert {f["format"] for f in report["files"]} == {"codex"}
    assert code == max(f["exit"] for f in report["files"])
    (day / "broken.json").write_text("[1, 2")
    code, report = _check(str(day))
    assert code == 2 and report["exit"] == 2
    broken = next(f for f in report["files"] if f["path"].endswith("broken.json"))
    assert broken["exit"] == 2 and "broken.json" in broken["error"]
    out = CliRunner().invoke(main, ["check", str(day)])
    assert out.exit_code == 2 and "1 unreadable" in out.output


def test_a_folder_with_no_session_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a session")
    (tmp_path / "agent-a1.meta.json").write_text("{}")
    out = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert out.exit_code == 2
    assert f"{tmp_path}: no session in this directory" in out.output
    assert "Traceback" not in out.output


def test_checking_the_session_file_says_where_its_subagents_are(tmp_path: Path) -> None:
    project, session, _ = _project(tmp_path)
    out = CliRunner().invoke(main, ["check", str(session)])
    assert out.exit_code == 1
    assert out.output.rstrip().endswith(
        f"2 subagent transcripts beside this session: `sessionctx check "
        f"{project / CLAUDE.stem}` checks them with it")
    alone = CliRunner().invoke(main, ["check", str(CLAUDE)]).output
    assert "subagent" not in alone


def test_a_folder_of_mixed_agents_reads_each_file_in_its_own_format(tmp_path: Path) -> None:
    """One file of each agent sessionctx reads, side by side: each is read in its format."""
    kinds = {
        "claude-code": CLAUDE, "codex": CODEX,
        "pi": FIXTURES / "pi" / "large-session.jsonl",
        "gemini-cli": FIXTURES / "gemini-cli" / "tool-result-cancelled.json",
        "gemini-cli-jsonl": FIXTURES / "gemini-cli-jsonl" / "chat.jsonl",
        "copilot-cli": FIXTURES / "copilot-cli" / "events.jsonl",
        "anthropic": FIXTURES / "cline" / "text-result.json",
        "openai-chat": FIXTURES / "swe-agent" / "function_calling_simple.traj",
        "aider": FIXTURES / "aider" / "chat-history.md",
        "goose": FIXTURES / "goose" / "session.jsonl",
        "opencode": FIXTURES / "opencode" / "export.json",
    }
    folder = tmp_path / "mixed"
    folder.mkdir()
    for fmt, source in kinds.items():
        name = ".aider.chat.history.md" if fmt == "aider" else f"{fmt}{source.suffix}"
        shutil.copy(source, folder / name)
    (folder / "README.md").write_text("# not a session\n")
    _, report = _check(str(folder))
    got = {Path(f["path"]).name: f["format"] for f in report["files"]}
    assert got == {(".aider.chat.history.md" if fmt == "aider" else f"{fmt}{src.suffix}"): fmt
                   for fmt, src in kinds.items()}
