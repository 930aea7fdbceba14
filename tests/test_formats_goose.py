"""Goose sessions: its sessions.db store and the session JSONL of earlier releases, read,
checked and built for every provider. Counts are worked out here from the raw messages."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.formats.detect import detect
from sessionctx.inputs import read_input
from sessionctx.writeback import plan_repair
from sessionctx.writeback.plan import RepairError
from tests.conftest import FIXTURES
from tests.format_counts import accepted_bodies, context_counts, read_context

JSONL = FIXTURES / "goose" / "session.jsonl"
Obj = dict[str, Any]

# The store's tables as Goose creates them (crates/goose/src/session/session_manager.rs,
# schema version 5).
SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY,
    applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '', user_set_name BOOLEAN DEFAULT FALSE,
    session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER,
    output_tokens INTEGER, accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER,
    accumulated_output_tokens INTEGER, schedule_id TEXT, recipe_json TEXT,
    user_recipe_values_json TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
    content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);
"""


def messages(path: Path = JSONL) -> list[Obj]:
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [r for r in rows if "role" in r]


def counts(msgs: list[Obj]) -> dict[str, int]:
    seen = [m for m in msgs if m.get("metadata", {}).get("agentVisible", True)]
    items = [(m["role"], c) for m in seen for c in m["content"]]
    calls = [c["id"] for _, c in items if c["type"] in ("toolRequest", "frontendToolRequest")
             and c["toolCall"]["status"] == "success"]
    answered = {c["id"] for _, c in items if c["type"] == "toolResponse"}
    return {"calls": len(calls), "results": len(answered & set(calls)),
            "pending": len(set(calls) - answered),
            "texts": sum(c["type"] == "text" for _, c in items)}


def read_counts(path: Path) -> dict[str, int]:
    return context_counts(read_context(path, "goose"))


def store(tmp_path: Path, msgs: list[Obj]) -> Path:
    """A sessions.db as Goose writes it: the session read, an older one and a later
    sub-agent's session, which are not."""
    path = tmp_path / "sessions.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO schema_version (version) VALUES (5)")
    conn.execute("ALTER TABLE sessions ADD COLUMN provider_name TEXT")  # schema 6
    conn.execute("ALTER TABLE sessions ADD COLUMN model_config_json TEXT")
    for sid, kind, updated in (("20251204_1", "user", "2025-12-04 10:00:00"),
                               ("20251204_2", "user", "2025-12-04 11:00:00"),
                               ("20251204_3", "sub_agent", "2025-12-04 12:00:00")):
        conn.execute("INSERT INTO sessions (id, name, session_type, working_dir, updated_at, "
                     "provider_name, model_config_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (sid, sid, kind, "/home/user/project", updated, "anthropic",
                      json.dumps({"model_name": "claude-sonnet-4-5", "context_limit": None})))
    conn.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp) "
                 "VALUES ('20251204_1', 'user', ?, 1)",
                 (json.dumps([{"type": "text", "text": "an older session"}]),))
    for m in msgs:
        for sid in ("20251204_2", "20251204_3"):
            conn.execute("INSERT INTO messages (session_id, role, content_json, "
                         "created_timestamp, metadata_json) VALUES (?, ?, ?, ?, ?)",
                         (sid, m["role"], json.dumps(m["content"]), m["created"],
                          json.dumps(m["metadata"])))
    conn.commit()
    conn.close()
    return path


def test_the_legacy_jsonl_reads_with_independent_counts() -> None:
    want = counts(messages())
    assert want == {"calls": 4, "results": 3, "pending": 1, "texts": 4}
    assert read_counts(JSONL) == want
    assert detect(JSONL.read_bytes()) == "goose"


def test_the_store_reads_its_latest_user_session(tmp_path: Path) -> None:
    path = store(tmp_path, messages())
    before = path.read_bytes()
    assert detect(before) == "goose"
    assert read_counts(path) == counts(messages())
    result = read_input(str(path))
    assert "20251204_1" in json.dumps(result.records[0].data)  # the others are named
    replies = [m for m in build_context(result.records).messages if m["role"] == "assistant"]
    assert {(m["provider"], m["model"]) for m in replies} == {("anthropic", "claude-sonnet-4-5")}
    assert path.read_bytes() == before and not Path(f"{path}-journal").exists()


def test_the_interrupted_call_is_pending_and_the_hidden_message_unsent() -> None:
    ctx = build_context(read_input(str(JSONL)).records)
    assert [c.name for c in ctx.pending_calls] == ["developer__text_editor"]
    assert not any("Context compacted" in json.dumps(m) for m in ctx.messages)
    failed = next(m for m in ctx.messages if m.get("toolCallId") == "toolu_03Grep")
    assert failed["isError"] and "rg exited" in failed["content"][0]["text"]
    ran = next(m for m in ctx.messages if m.get("toolCallId") == "toolu_01RunTests")
    assert [b["text"] for b in ran["content"]] == ["1 failed: expected ')' at 3"]


@pytest.mark.parametrize("kind", ["jsonl", "store"])
def test_every_provider_takes_the_body(tmp_path: Path, kind: str) -> None:
    path = JSONL if kind == "jsonl" else store(tmp_path, messages())
    ctx = build_context(read_input(str(path)).records)
    accepted_bodies(ctx)


def test_repair_says_it_does_not_write_goose(tmp_path: Path) -> None:
    with pytest.raises(RepairError, match="repair does not write goose"):
        plan_repair(JSONL.read_bytes(), str(JSONL))
    path = store(tmp_path, messages())
    with pytest.raises(RepairError, match="repair does not write goose"):
        plan_repair(path.read_bytes(), str(path))


def test_check_auto_detects_the_store_and_a_folder_of_them(tmp_path: Path) -> None:
    path = store(tmp_path, messages())
    (tmp_path / "old.jsonl").write_bytes(JSONL.read_bytes())
    for target in (path, tmp_path):
        out = subprocess.run([sys.executable, "-m", "sessionctx", "check", str(target),
                              "--from", "auto", "--json"], capture_output=True, text=True)
        assert out.returncode == 1, out.stderr
        assert "goose" in out.stdout and "no known format" not in out.stdout
    plain = subprocess.run([sys.executable, "-m", "sessionctx", "check", str(path)],
                           capture_output=True, text=True)
    assert "pending call" in plain.stdout and "sessionctx repair" not in plain.stdout


def test_a_store_of_other_tables_is_not_goose(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER)")
    conn.commit()
    conn.close()
    assert detect(path.read_bytes()) != "goose"
    result = read_input(str(path), "goose")
    assert result.fatal and "not a goose file" in result.problems[0].message


def test_a_wal_store_is_read_whole_and_left_alone(tmp_path: Path) -> None:
    """Goose keeps its store in WAL mode: read with nothing created beside it, and while the
    agent holds it open, with the rows still in its write-ahead log."""
    path = store(tmp_path, messages()[:3])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions.db"]
    assert read_counts(path)["calls"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions.db"]
    live = sqlite3.connect(path)  # the agent, still writing
    live.execute("PRAGMA wal_autocheckpoint=0")
    for m in messages()[3:]:
        live.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp, "
                     "metadata_json) VALUES ('20251204_2', ?, ?, ?, ?)",
                     (m["role"], json.dumps(m["content"]), m["created"],
                      json.dumps(m["metadata"])))
    live.commit()
    try:
        assert read_counts(path) == counts(messages())
    finally:
        live.close()


@pytest.mark.parametrize("fmt", ["goose", "opencode", "auto"])
def test_a_damaged_store_is_a_clear_error(tmp_path: Path, fmt: str) -> None:
    good = store(tmp_path, messages()).read_bytes()
    path = tmp_path / "broken.db"
    path.write_bytes(good[:100] + b"\xff" * 3000)
    result = read_input(str(path), fmt)
    assert result.fatal
    assert ("no known format" if fmt == "auto" else f"{fmt} file: expected") in \
        result.problems[0].message
