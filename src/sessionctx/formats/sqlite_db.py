"""SQLite session stores (Goose's sessions.db, opencode's opencode.db), opened read-only.

Both agents keep their store in WAL mode. While the agent has it open, its `-wal` and `-shm`
files lie beside it and hold the newest rows: the store is then opened by its path with a
`mode=ro` URI, which reads them and writes nothing. Otherwise the bytes already read are the
whole store and are opened from memory: opening a WAL store by path, even read-only, would
leave new `-wal` and `-shm` files beside it. sqlite3 is imported only when a store is read.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

HEADER = b"SQLite format 3\x00"


def is_sqlite(raw: bytes) -> bool:
    return raw.startswith(HEADER)


@contextmanager
def opened(raw: bytes, path: str | None) -> Iterator[sqlite3.Connection]:
    """The store read-only; sqlite3.Error when it cannot be read as one."""
    if path is not None and all(os.path.isfile(path + s) for s in ("", "-wal", "-shm")):
        conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True)
    else:
        conn = sqlite3.connect(":memory:")
        conn.deserialize(_rollback_journal(raw))
    try:
        conn.execute("PRAGMA query_only = ON")
        yield conn
    finally:
        conn.close()


def _rollback_journal(raw: bytes) -> bytes:
    """The store's bytes marked as a rollback-journal database (header bytes 18 and 19), the
    only kind SQLite opens from memory; the pages are the same."""
    if len(raw) > 20 and raw[18:20] == b"\x02\x02":
        return raw[:18] + b"\x01\x01" + raw[20:]
    return raw


def columns(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """Each table of the store with its column names."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {t: {r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')} for t in tables}


def has_tables(raw: bytes, wanted: dict[str, set[str]]) -> bool:
    """Whether `raw` is a SQLite store holding each wanted table with those columns."""
    if not is_sqlite(raw):
        return False
    try:
        with opened(raw, None) as conn:
            have = columns(conn)
    except sqlite3.Error:
        return False
    return all(t in have and cols <= have[t] for t, cols in wanted.items())


def rows(conn: sqlite3.Connection, sql: str, *args: Any) -> list[dict[str, Any]]:
    cur = conn.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
