"""The SQLite store: concurrency, crashes, checkpoints, round trips and clear errors."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path

import msgspec
import pytest

from sessionctx.inputs import read_input
from sessionctx.store import (
    NotASessionStore,
    ReadOnlyStore,
    SchemaTooNew,
    SessionChanged,
    StoreError,
    StoreLocked,
    open_store,
)
from sessionctx.store.sqlite import SqliteStore
from tests.conftest import FIXTURES
from tests.store_helpers import (
    CTX,
    checkpoint,
    kill_writer_at_random,
    msg,
    reported,
    run_writers,
)


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/s.db"


def test_append_read_and_list(url: str) -> None:
    store = open_store(url)
    assert store.last_seq("a") == 0
    assert store.append("a", msg(0, extra={"kept": True})) == 1
    assert store.append_many("a", [msg(1), msg(2)]) == [2, 3]
    assert store.append("b", msg(0)) == 1
    got = store.records("a", after=1)
    assert [r.source.seq for r in got] == [2, 3]
    assert store.records("a")[0].data["extra"] == {"kept": True}
    infos = {s.id: s for s in store.sessions()}
    assert infos["a"].records == 3 and infos["a"].last_seq == 3
    assert infos["b"].first_append is not None
    store.close()


def test_default_url_honours_env_and_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SESSIONCTX_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    open_store().close()
    assert (tmp_path / "data" / "sessionctx" / "sessions.db").exists()
    monkeypatch.setenv("SESSIONCTX_STORE", f"sqlite:///{tmp_path}/env.db")
    open_store().close()
    assert (tmp_path / "env.db").exists()


def test_pragmas(url: str, tmp_path: Path) -> None:
    open_store(url).close()
    db = sqlite3.connect(tmp_path / "s.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT value FROM sessionctx_meta WHERE key='schema_version'"
                      ).fetchone()[0] == "1"


def test_eight_processes_append_without_loss_or_duplicates(url: str) -> None:
    run_writers(url, "s", writers=8, count=1000)
    store = open_store(url)
    got = store.records("s")
    assert [r.source.seq for r in got] == list(range(1, 8001))
    per_writer = [sum(1 for r in got if r.data["writer"] == w) for w in range(8)]
    assert per_writer == [1000] * 8
    assert store.last_seq("s") == 8000


def test_sigkill_loses_no_returned_append(url: str, tmp_path: Path) -> None:
    rng = random.Random(4)
    for round_ in range(5):
        report = str(tmp_path / f"report{round_}")
        before = open_store(url).last_seq("s")
        kill_writer_at_random(url, "s", report, rng.uniform(0.05, 0.3))
        store = open_store(url)
        seqs = [r.source.seq for r in store.records("s")]
        assert seqs == list(range(1, len(seqs) + 1))  # nothing half-written, no gap
        assert set(reported(report)) <= set(seqs)
        assert all(s > before for s in reported(report))
        assert store.append("s", msg(-1)) == len(seqs) + 1  # appending continues
        store.close()


def _append_while(url: str, n: int) -> None:
    store = open_store(url)
    for i in range(n):
        store.append("s", msg(i))


def test_checkpoint_refused_when_session_moved(url: str) -> None:
    store = open_store(url)
    store.append_many("s", [msg(i) for i in range(10)])
    made_from = store.last_seq("s")
    p = CTX.Process(target=_append_while, args=(url, 50))
    p.start()
    p.join()
    with pytest.raises(SessionChanged, match="last seq is 60"):
        store.append_checkpoint("s", checkpoint(made_from), expected_last_seq=made_from)
    assert store.last_seq("s") == 60
    assert len(store.records("s")) == 60
    seq = store.append_checkpoint("s", checkpoint(60), expected_last_seq=60)
    assert seq == 61


def test_context_starts_at_latest_valid_checkpoint(url: str) -> None:
    store = open_store(url)
    store.append_many("s", [msg(i) for i in range(5)])
    store.append_checkpoint("s", checkpoint(5, "first"), expected_last_seq=5)
    store.append("s", {"type": "compaction", "summary": "broken"})  # not a valid checkpoint
    store.append_many("s", [msg(i) for i in range(7, 9)])
    store.append_checkpoint("s", checkpoint(9, "second"), expected_last_seq=9)
    store.append("s", msg(11))
    ctx = store.context("s")
    texts = [m["content"][0]["text"] for m in ctx.messages]
    assert texts == ["second", "m11"]
    assert ctx.sources[0].seq == 10
    with pytest.raises(StoreError, match="invalid checkpoint"):
        store.append_checkpoint("s", {"type": "compaction"}, expected_last_seq=11)


def test_round_trip_keeps_every_record(url: str, tmp_path: Path) -> None:
    source = FIXTURES / "pi" / "large-session.jsonl"
    result = read_input(str(source))
    store = open_store(url)
    seqs = store.import_records("big", result.records)
    assert seqs == list(range(1, len(result.records) + 1))
    out = tmp_path / "out.jsonl"
    assert store.export("big", str(out)) == len(result.records)
    original = [msgspec.json.decode(line) for line in source.read_bytes().splitlines()
                if line.strip()]
    exported = [msgspec.json.decode(line) for line in out.read_bytes().splitlines()]
    assert exported == original


def test_not_a_sessionctx_database(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE users (id INTEGER)")
    db.commit()
    db.close()
    with pytest.raises(NotASessionStore, match="not a sessionctx store"):
        open_store(f"sqlite:///{path}")


def test_not_a_database_at_all(tmp_path: Path) -> None:
    path = tmp_path / "text.db"
    path.write_text("hello, this is not sqlite\n" * 100)
    with pytest.raises(NotASessionStore, match="damaged"):
        open_store(f"sqlite:///{path}")


def test_truncated_database(url: str, tmp_path: Path) -> None:
    store = open_store(url)
    store.append_many("s", [msg(i, pad="y" * 2000) for i in range(300)])
    store.close()
    path = tmp_path / "s.db"
    for extra in ("-wal", "-shm"):
        if os.path.exists(f"{path}{extra}"):
            os.remove(f"{path}{extra}")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(StoreError):
        again = open_store(url)
        again.records("s")


def test_newer_schema(url: str, tmp_path: Path) -> None:
    open_store(url).close()
    db = sqlite3.connect(tmp_path / "s.db")
    db.execute("UPDATE sessionctx_meta SET value = '99' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(SchemaTooNew, match="99"):
        open_store(url)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_file(url: str, tmp_path: Path) -> None:
    store = open_store(url)
    store.append("s", msg(0))
    store.close()
    path = tmp_path / "s.db"
    os.chmod(path, 0o444)
    try:
        with pytest.raises(ReadOnlyStore):
            ro = open_store(url)
            ro.append("s", msg(1))
    finally:
        os.chmod(path, 0o644)


def test_lock_timeout(url: str, tmp_path: Path) -> None:
    open_store(url).close()
    holder = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        store = SqliteStore(str(tmp_path / "s.db"), timeout=0.2)
        with pytest.raises(StoreLocked, match="locked"):
            store.append("s", msg(0))
    finally:
        holder.execute("ROLLBACK")
    assert store.append("s", msg(0)) == 1


def test_unknown_url() -> None:
    with pytest.raises(StoreError, match="unknown store URL"):
        open_store("ftp://x")


def test_open_store_is_exported(url: str) -> None:
    import sessionctx
    from sessionctx.store.sqlite import SqliteStore

    store = sessionctx.open_store(url)
    try:
        assert isinstance(store, SqliteStore)
        store.append_many("s", [{"role": "user", "content": "hi"}])
        assert [r.data for r in store.records("s")] == [{"role": "user", "content": "hi"}]
    finally:
        store.close()
