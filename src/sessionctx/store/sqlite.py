"""The SQLite store: one file, WAL, full sync, one `BEGIN IMMEDIATE` transaction per write.

The next seq of a session is read from its `sessions` row inside the write transaction, so
concurrent writers (other processes included) queue on SQLite's write lock and never share or
skip a seq. A partial index over valid checkpoints finds where context loading starts.
"""

from __future__ import annotations

import errno
import itertools
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sessionctx.files import create_private, make_dirs
from sessionctx.records import Record
from sessionctx.store.base import (
    NotASessionStore,
    ReadOnlyStore,
    SchemaTooNew,
    SessionChanged,
    StoreError,
    StoreLocked,
    check_session,
    encode,
    kind_of,
    require_checkpoint,
)
from sessionctx.store.sql import SqlReads

APP = "sessionctx"
SCHEMA_VERSION = 1
DEFAULT_TIMEOUT = 30.0

# Each entry upgrades the schema from version i to i + 1.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        last_seq INTEGER NOT NULL,
        record_count INTEGER NOT NULL,
        first_append TEXT NOT NULL,
        last_append TEXT NOT NULL
    );
    CREATE TABLE records (
        session TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        is_checkpoint INTEGER NOT NULL,
        appended_at TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session, seq)
    ) WITHOUT ROWID;
    CREATE INDEX records_checkpoints ON records (session, seq) WHERE is_checkpoint = 1;
    """,
)



def _create_private(path: str) -> None:
    """Create a missing database file owner-only; SQLite gives its -wal and -shm files the
    permissions of the database file."""
    if path == ":memory:" or os.path.lexists(path):
        return
    try:
        os.close(create_private(path))
    except FileExistsError:
        pass
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return  # SQLite reports it as a read-only store
        raise StoreError(f"{path}: cannot create: {exc.strerror or exc}") from None


def _busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _wait(exc: sqlite3.Error, deadline: float, attempt: int) -> bool:
    """Sleep before another try when `exc` is a lock and time is left; False otherwise."""
    left = deadline - time.monotonic()
    if not _busy(exc) or left <= 0:
        return False
    time.sleep(min(left, 0.01 * 2 ** min(attempt, 5)))
    return True


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class SqliteStore(SqlReads):
    """Sessions in one SQLite file; safe for many processes on one machine."""

    PARAM = "?"
    TRUE = "1"

    def __init__(self, path: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.path = self.where = path
        if os.path.isdir(path):
            raise NotASessionStore(f"{path}: is a directory, not a sessionctx database")
        parent = os.path.dirname(os.path.abspath(path))
        try:
            make_dirs(parent)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create {parent}: {exc.strerror or exc}") from None
        _create_private(path)
        self._timeout = timeout
        deadline = time.monotonic() + timeout
        for attempt in itertools.count():
            try:
                self._db = sqlite3.connect(path, timeout=timeout, isolation_level=None,
                                           check_same_thread=False)
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            try:
                self._setup()
                break
            except sqlite3.Error as exc:
                self._db.close()
                if not _wait(exc, deadline, attempt):
                    raise self._error(exc) from None
            except StoreError:
                self._db.close()
                raise

    # -- setup ---------------------------------------------------------------------------

    def _setup(self) -> None:
        db = self._db
        db.execute("PRAGMA foreign_keys = ON")
        tables = {r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "sessionctx_meta" not in tables:
            raise NotASessionStore(f"{self.path}: is an SQLite database but not a sessionctx "
                                   f"store (it has tables {', '.join(sorted(tables))})")
        version = self._version() if tables else 0
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(f"{self.path}: schema version {version} was written by a newer "
                               f"sessionctx (this one knows up to {SCHEMA_VERSION}); upgrade "
                               "sessionctx")
        if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal" and not tables:
                raise StoreError(f"{self.path}: cannot switch the database to WAL mode")
        db.execute("PRAGMA synchronous = FULL")
        if version < SCHEMA_VERSION:
            self._migrate(version)

    def _version(self) -> int:
        row = self._db.execute(
            "SELECT value FROM sessionctx_meta WHERE key = 'schema_version'").fetchone()
        app = self._db.execute(
            "SELECT value FROM sessionctx_meta WHERE key = 'app'").fetchone()
        if row is None or app is None or app[0] != APP:
            raise NotASessionStore(f"{self.path}: has a sessionctx_meta table without a "
                                   "sessionctx schema version")
        try:
            return int(row[0])
        except ValueError:
            raise NotASessionStore(f"{self.path}: schema version {row[0]!r} is not a "
                                   "number") from None

    def _migrate(self, version: int) -> None:
        with self._write() as db:
            db.execute("CREATE TABLE IF NOT EXISTS sessionctx_meta "
                       "(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = db.execute(
                "SELECT value FROM sessionctx_meta WHERE key = 'schema_version'").fetchone()
            current = int(row[0]) if row else 0  # another process may have migrated meanwhile
            for step in range(current, SCHEMA_VERSION):
                for statement in MIGRATIONS[step].split(";"):
                    if statement.strip():
                        db.execute(statement)
            db.execute("INSERT OR REPLACE INTO sessionctx_meta VALUES ('app', ?)", (APP,))
            db.execute("INSERT OR REPLACE INTO sessionctx_meta VALUES ('schema_version', ?)",
                       (str(SCHEMA_VERSION),))

    def _error(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        low = text.lower()
        if "locked" in low or "busy" in low:
            return StoreLocked(f"{self.path}: database is locked by another process past the "
                               "timeout; retry, or find the process holding it")
        if "readonly" in low or "read-only" in low:
            return ReadOnlyStore(f"{self.path}: store is read-only ({text})")
        if "not a database" in low or "malformed" in low or "corrupt" in low:
            return NotASessionStore(f"{self.path}: not a sessionctx database, or the file is "
                                    f"truncated or damaged ({text})")
        if "unable to open" in low:
            if os.path.exists(self.path) and not os.access(self.path, os.W_OK):
                return ReadOnlyStore(f"{self.path}: store is read-only ({text})")
            return StoreError(f"{self.path}: cannot open the database ({text})")
        return StoreError(f"{self.path}: {text}")

    def _until_free(self, statement: str) -> None:
        """Run `statement`, waiting out a lock for the whole timeout: SQLite's own busy
        handler is not called on every path (a database whose last writer was killed is
        recovered under a lock others are told about at once)."""
        deadline = time.monotonic() + self._timeout
        for attempt in itertools.count():
            try:
                self._db.execute(statement)
                return
            except sqlite3.Error as exc:
                if not _wait(exc, deadline, attempt):
                    raise self._error(exc) from None

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        db = self._db
        self._until_free("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        try:
            self._until_free("COMMIT")
        except StoreError:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        for arg in args:
            if isinstance(arg, str):
                check_session(arg)
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    # -- writing -------------------------------------------------------------------------

    def _insert(self, db: sqlite3.Connection, session: str, rows: list[bytes],
                kinds: list[tuple[str, bool]]) -> list[int]:
        now = _now()
        row = db.execute("SELECT last_seq FROM sessions WHERE id = ?", (session,)).fetchone()
        last = row[0] if row else 0
        seqs = list(range(last + 1, last + 1 + len(rows)))
        db.executemany(
            "INSERT INTO records (session, seq, kind, is_checkpoint, appended_at, data) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(session, seq, kind, int(valid), now, data.decode())
             for seq, data, (kind, valid) in zip(seqs, rows, kinds, strict=True)])
        if row is None:
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)",
                       (session, seqs[-1], len(rows), now, now))
        else:
            db.execute("UPDATE sessions SET last_seq = ?, record_count = record_count + ?, "
                       "last_append = ? WHERE id = ?", (seqs[-1], len(rows), now, session))
        return seqs

    def append(self, session: str, record: dict[str, Any]) -> int:
        return self.append_many(session, [record])[0]

    def append_many(self, session: str, records: list[dict[str, Any]]) -> list[int]:
        check_session(session)
        if not records:
            return []
        rows = [encode(r) for r in records]
        kinds = [kind_of(r) for r in records]
        try:
            with self._write() as db:
                return self._insert(db, session, rows, kinds)
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def append_checkpoint(self, session: str, checkpoint: dict[str, Any], *,
                          expected_last_seq: int) -> int:
        check_session(session)
        require_checkpoint(checkpoint)
        row = encode(checkpoint)
        try:
            with self._write() as db:
                found = db.execute("SELECT last_seq FROM sessions WHERE id = ?",
                                   (session,)).fetchone()
                last = found[0] if found else 0
                if last != expected_last_seq:
                    raise SessionChanged(
                        f"session {session!r} changed while the checkpoint was made: its last "
                        f"seq is {last}, the checkpoint was made from {expected_last_seq}; "
                        "make it again from the current records")
                return self._insert(db, session, [row], [kind_of(checkpoint)])[0]
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def import_records(self, session: str, records: list[Record]) -> list[int]:
        return self.append_many(session, [r.data for r in records])

    # -- reading -------------------------------------------------------------------------

    def close(self) -> None:
        self._db.close()
