"""`compact` on an agent's own file writes that agent's own compaction, which the agent's own
loader resumes from; formats without one are refused with the route that works; budget and the
dry run count what the agent loads (after its own last compaction)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from tests.conftest import FIXTURES
from tests.node_readers import read
from tests.test_compaction_checkpoint import write_summarizer


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def compact(path: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    script = write_summarizer(tmp_path)
    out = run("compact", str(path), "--summarizer", f"command:{sys.executable} {script}",
              "--json", *extra)
    assert out.exit_code == 0, out.output
    info: dict[str, Any] = json.loads(out.output)
    return info


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def budget_tokens(path: Path) -> int:
    out = run("budget", str(path), "--window", "1000000", "--json")
    tokens: int = json.loads(out.output)["tokens"]
    return tokens


def planned_tokens(path: Path) -> int:
    out = run("compact", "--dry-run", "--force", "--keep-tokens", "0", "--json", str(path))
    assert out.exit_code == 0, out.output
    tokens: int = json.loads(out.output)["plan"]["tokens_before"]
    return tokens


def every_call_answered(messages: list[dict[str, Any]]) -> bool:
    calls = [b["id"] for m in messages if m["role"] == "assistant"
             for b in m.get("content") or [] if b.get("type") == "toolCall"]
    results = {m["toolCallId"] for m in messages if m["role"] == "toolResult"}
    return all(c in results for c in calls)


def v3_session(turns: int) -> list[dict[str, Any]]:
    """A pi version 3 session (ids and parentIds) of `turns` tool-using turns."""
    out: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": "sess-1",
                                  "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}]
    parent = None

    def add(message: dict[str, Any]) -> None:
        nonlocal parent
        entry_id = f"e{len(out):07d}"
        out.append({"type": "message", "id": entry_id, "parentId": parent,
                    "timestamp": "2026-01-01T00:00:00.000Z", "message": message})
        parent = entry_id

    for t in range(turns):
        add({"role": "user", "content": [{"type": "text", "text": f"turn {t}: fix mod{t}.py"}],
             "timestamp": 1})
        add({"role": "assistant", "content": [
            {"type": "text", "text": "on it " + "x" * 400},
            {"type": "toolCall", "id": f"call_{t}", "name": "bash",
             "arguments": {"cmd": f"sed -i s/a/b/ mod{t}.py"}}],
             "api": "anthropic-messages", "provider": "anthropic", "model": "m",
             "usage": {}, "stopReason": "toolUse", "timestamp": 1})
        add({"role": "toolResult", "toolCallId": f"call_{t}", "toolName": "bash",
             "content": [{"type": "text", "text": f"edited mod{t}.py " + "y" * 2000}],
             "isError": False, "timestamp": 1})
        add({"role": "assistant", "content": [{"type": "text", "text": f"turn {t} done"}],
             "api": "anthropic-messages", "provider": "anthropic", "model": "m",
             "usage": {}, "stopReason": "stop", "timestamp": 1})
    return out


def test_pi_v3_session_gets_pis_own_compaction_entry_which_pi_resumes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    entries = v3_session(40)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    before = path.read_bytes()
    info = compact(path, tmp_path, "--keep-tokens", "3000")
    assert info["wrote"] == "compaction"
    assert path.read_bytes().startswith(before)  # nothing but one appended line
    last = lines(path)[-1]
    assert set(last) == {"type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId",
                         "tokensBefore"}
    assert last["parentId"] == entries[-1]["id"] and last["id"] == info["id"]
    kept = next(e for e in entries if e.get("id") == last["firstKeptEntryId"])
    assert kept["message"]["role"] == "user"

    loaded = read("pi", str(path))["messages"]
    assert loaded[0]["role"] == "compactionSummary"
    assert loaded[0]["summary"] == last["summary"]
    start = entries.index(kept)
    assert loaded[1:] == [e["message"] for e in entries[start:]]
    assert every_call_answered(loaded)
    # what sessionctx counts is what pi loads: budget and the next plan agree
    assert budget_tokens(path) == planned_tokens(path) < info["tokensBefore"]


def test_pi_v1_fixture_compacts_with_pis_version_1_entry(tmp_path: Path) -> None:
    path = tmp_path / "large-session.jsonl"
    shutil.copyfile(FIXTURES / "pi" / "large-session.jsonl", path)
    path.chmod(0o644)
    tokens = budget_tokens(path)
    assert planned_tokens(path) == tokens
    info = compact(path, tmp_path)
    last = lines(path)[-1]
    assert last["type"] == "compaction" and "messages" not in last  # not a sessionctx record
    assert isinstance(last["firstKeptEntryIndex"], int)
    assert last["tokensBefore"] == tokens == info["tokensBefore"]

    loaded = read("pi", str(path))["messages"]
    assert loaded[0]["role"] == "compactionSummary"
    first_kept = lines(path)[last["firstKeptEntryIndex"]]
    assert loaded[1] == first_kept["message"] and loaded[1]["role"] == "user"
    assert 1 < len(loaded) < 300  # pi had 900 before
    assert every_call_answered(loaded)
    after = budget_tokens(path)
    assert after == planned_tokens(path) < tokens // 4


def test_a_second_compaction_plans_over_what_pi_loads(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in v3_session(60)))
    compact(path, tmp_path, "--keep-tokens", "15000")
    loaded_before = read("pi", str(path))["messages"]
    counted = budget_tokens(path)
    second = compact(path, tmp_path, "--keep-tokens", "3000")
    assert second["tokensBefore"] == counted
    loaded = read("pi", str(path))["messages"]
    assert loaded[0]["role"] == "compactionSummary" and len(loaded) < len(loaded_before)
    assert every_call_answered(loaded)
    # the new summary carries the earlier one forward (it was summarized with it)
    assert lines(path)[-1]["firstKeptEntryId"] != lines(path)[-2]["firstKeptEntryId"]


def responses_jsonl(tmp_path: Path) -> Path:
    """Responses input items, one a line (as an Agents SDK session log holds them)."""
    request = json.loads((FIXTURES / "openai-responses" / "requests" /
                          "recorded-codex-0.171.0-resume.json").read_text())
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in request["input"]))
    return path


def gemini_document(tmp_path: Path) -> Path:
    path = tmp_path / "gemini.json"
    shutil.copyfile(FIXTURES / "gemini-cli" / "tool-result-cancelled.json", path)
    return path


@pytest.mark.parametrize(("make", "code"), [(responses_jsonl, 1), (gemini_document, 2)])
def test_formats_without_a_writer_are_refused_with_the_route(tmp_path: Path, make: Any,
                                                             code: int) -> None:
    path = make(tmp_path)
    before = path.read_bytes()
    script = write_summarizer(tmp_path)
    for args in (["--summarizer", f"command:{sys.executable} {script}"], ["--dry-run"]):
        out = run("compact", str(path), "--force", *args)
        assert out.exit_code == code, out.output
        assert "sessionctx import" in out.output and "compact --store URL --session ID" in \
            out.output
    assert path.read_bytes() == before


def test_restore_on_an_agent_file_is_refused_with_the_route(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in v3_session(40)))
    info = compact(path, tmp_path, "--keep-tokens", "3000")
    before = path.read_bytes()
    out = run("restore", str(path), "--before", info["id"])
    assert out.exit_code == 1 and "Import it into a store" in out.output
    assert path.read_bytes() == before


def test_claude_code_compaction_is_counted_as_claude_code_loads_it(tmp_path: Path) -> None:
    """Claude Code's own boundary, summary and kept copies: budget and the next plan count the
    summary and the kept turns only (the real CLI: tests/test_agent_clis_compact.py)."""
    from tests.test_agent_clis_compact import long_session

    path = tmp_path / "s.jsonl"
    original = long_session(30)
    path.write_text("".join(json.dumps(e) + "\n" for e in original))
    tokens = budget_tokens(path)
    info = compact(path, tmp_path, "--keep-tokens", "3000")
    assert info["tokensBefore"] == tokens and info["wrote"] == "compact_boundary"
    added = lines(path)[len(original):]
    kept_ids = [e["message"].get("id") for e in added[2:] if e["type"] == "assistant"]
    assert kept_ids and not set(kept_ids) & {e["message"].get("id") for e in original}
    assert [e["parentUuid"] for e in added[1:]] == [e["uuid"] for e in added[:-1]]
    after = budget_tokens(path)
    assert after == planned_tokens(path) < tokens // 2
    out = run("check", str(path))
    assert out.exit_code == 0, out.output
