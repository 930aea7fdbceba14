"""SQLite: a lock is waited out for the whole timeout, on every path (opening, writing,
committing), not only where SQLite's own busy handler runs."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from sessionctx.store import StoreLocked
from sessionctx.store.sqlite import SqliteStore


class _Flaky:
    """A connection that answers 'database is locked' at once (as during the recovery of a
    database whose writer was killed) the first `fails` times `statement` starts."""

    def __init__(self, db: sqlite3.Connection, statement: str, fails: int) -> None:
        self._db, self._statement, self.fails = db, statement, fails

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith(self._statement) and self.fails:
            self.fails -= 1
            raise sqlite3.OperationalError("database is locked")
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def _flaky(monkeypatch: pytest.MonkeyPatch, statement: str, fails: int) -> list[_Flaky]:
    made: list[_Flaky] = []
    connect = sqlite3.connect

    def flaky_connect(*args: Any, **kwargs: Any) -> _Flaky:
        left = made[-1].fails if made else fails
        made.append(_Flaky(connect(*args, **kwargs), statement, left))
        return made[-1]

    monkeypatch.setattr(sqlite3, "connect", flaky_connect)
    return made


@pytest.mark.parametrize("statement", ["SELECT name FROM sqlite_master", "BEGIN IMMEDIATE",
                                       "COMMIT"])
def test_a_lock_that_lifts_within_the_timeout_is_waited_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, statement: str) -> None:
    made = _flaky(monkeypatch, statement, 5)
    store = SqliteStore(str(tmp_path / "s.db"), timeout=5)
    try:
        assert store.append("s", {"role": "user", "content": "hi"}) == 1
        assert [r.data["content"] for r in store.records("s")] == ["hi"]
    finally:
        store.close()
    assert made[-1].fails == 0


@pytest.mark.parametrize("statement", ["SELECT name FROM sqlite_master", "BEGIN IMMEDIATE"])
def test_store_locked_is_raised_only_past_the_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, statement: str) -> None:
    path = str(tmp_path / "s.db")
    SqliteStore(path).close()
    _flaky(monkeypatch, statement, 10**9)
    started = time.monotonic()
    with pytest.raises(StoreLocked, match="past the timeout"):
        store = SqliteStore(path, timeout=0.6)
        store.append("s", {"role": "user", "content": "hi"})
    assert time.monotonic() - started >= 0.6
