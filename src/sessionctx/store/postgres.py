"""The PostgreSQL store: many workers on many machines sharing one database (psycopg 3).

Each write is one transaction that locks the session's counter row (`SELECT ... FOR UPDATE`),
so concurrent writers queue per session and seqs stay unique and gap-free; a commit returns
only once PostgreSQL has made it durable. psycopg is imported only when this store is opened.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

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

if TYPE_CHECKING:
    import psycopg

APP = "sessionctx"
SCHEMA_VERSION = 1
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

MIGRATIONS: tuple[tuple[str, ...], ...] = ((
    """CREATE TABLE {s}.sessions (
        id TEXT PRIMARY KEY, last_seq BIGINT NOT NULL, record_count BIGINT NOT NULL,
        first_append TIMESTAMPTZ NOT NULL, last_append TIMESTAMPTZ NOT NULL)""",
    """CREATE TABLE {s}.records (
        session TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL,
        is_checkpoint BOOLEAN NOT NULL, appended_at TIMESTAMPTZ NOT NULL, data TEXT NOT NULL,
        PRIMARY KEY (session, seq))""",
    "CREATE INDEX records_checkpoints ON {s}.records (session, seq) WHERE is_checkpoint",
),)



def split_url(url: str) -> tuple[str, str]:
    """The connection URL without sessionctx's own `schema=` parameter, and that schema."""
    parsed = urlparse(url)
    query = parse_qsl(parsed.query)
    schema = next((v for k, v in query if k == "schema"), "sessionctx")
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    if not _NAME.fullmatch(schema):  # fullmatch: `$` would let a trailing newline through
        raise StoreError(f"schema {schema!r} must be a lowercase SQL identifier")
    return urlunparse(parsed._replace(query=rest)), schema


class PostgresStore(SqlReads):
    """Sessions in a PostgreSQL schema (default `sessionctx`, or `?schema=NAME` in the URL)."""

    PARAM = "%s"
    TRUE = "TRUE"

    def __init__(self, url: str, *, lock_timeout_ms: int = 30000, create: bool = True) -> None:
        """`create`: make the schema and its tables when missing; a command that only reads
        passes False, and a missing store then reads as one without sessions."""
        self._create, self._absent = create, False
        try:
            import psycopg
        except ImportError:
            raise StoreError("the PostgreSQL store needs psycopg: pip install "
                             "'sessionctx[postgres]'") from None
        self._psycopg = psycopg
        conninfo, self.schema = split_url(url)
        host = urlparse(conninfo).hostname or "localhost"
        self.where = f"postgresql://{host} schema {self.schema}"
        try:
            self._db: psycopg.Connection[Any] = psycopg.connect(conninfo, autocommit=False)
            self._db.execute(f"SET lock_timeout = {int(lock_timeout_ms)}")
            self._db.commit()
            self._setup()
        except psycopg.Error as exc:
            raise self._error(exc) from None

    def _sql(self, text: str) -> str:
        return text.replace("{s}", self.schema)

    def _setup(self) -> None:
        db = self._db
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                       (f"sessionctx:{self.schema}",))
            tables = {r[0] for r in db.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (self.schema,))}
            if tables and "sessionctx_meta" not in tables:
                raise NotASessionStore(f"{self.where}: schema holds tables "
                                       f"{', '.join(sorted(tables))} but is not a sessionctx "
                                       "store")
            if not tables and not self._create:
                self._absent = True  # nothing is made by a command that only reads
                return
            db.execute(self._sql("CREATE SCHEMA IF NOT EXISTS {s}"))
            version = 0
            if tables:
                row = db.execute(self._sql(
                    "SELECT value FROM {s}.sessionctx_meta WHERE key = 'schema_version'"
                )).fetchone()
                version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(f"{self.where}: schema version {version} was written by a "
                                   f"newer sessionctx (this one knows up to {SCHEMA_VERSION})")
            if not tables:
                db.execute(self._sql("CREATE TABLE {s}.sessionctx_meta "
                                     "(key TEXT PRIMARY KEY, value TEXT NOT NULL)"))
                db.execute(self._sql("INSERT INTO {s}.sessionctx_meta VALUES ('app', %s)"),
                           (APP,))
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    db.execute(self._sql(statement))
            if version < SCHEMA_VERSION:
                db.execute(self._sql(
                    "INSERT INTO {s}.sessionctx_meta VALUES ('schema_version', %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
                    (str(SCHEMA_VERSION),))

    def _error(self, exc: Exception) -> StoreError:
        if isinstance(exc, StoreError):
            return exc
        errors = self._psycopg.errors
        if isinstance(exc, errors.LockNotAvailable):
            return StoreLocked(f"{self.where}: a session row stayed locked past the timeout")
        if isinstance(exc, errors.ReadOnlySqlTransaction | errors.InsufficientPrivilege):
            return ReadOnlyStore(f"{self.where}: store is read-only ({exc})")
        return StoreError(f"{self.where}: {str(exc).strip()}")

    # -- writing -------------------------------------------------------------------------

    def _insert(self, session: str, rows: list[bytes], kinds: list[tuple[str, bool]],
                expected_last_seq: int | None = None) -> list[int]:
        if self._absent:
            raise StoreError(f"{self.where}: opened for reading, and holds no sessionctx store")
        db = self._db
        with db.transaction():
            db.execute(self._sql(
                "INSERT INTO {s}.sessions VALUES (%s, 0, 0, now(), now()) "
                "ON CONFLICT (id) DO NOTHING"), (session,))
            found = db.execute(self._sql(
                "SELECT last_seq FROM {s}.sessions WHERE id = %s FOR UPDATE"),
                (session,)).fetchone()
            last = int(found[0]) if found else 0
            if expected_last_seq is not None and last != expected_last_seq:
                raise SessionChanged(
                    f"session {session!r} changed while the checkpoint was made: its last seq "
                    f"is {last}, the checkpoint was made from {expected_last_seq}; make it "
                    "again from the current records")
            seqs = list(range(last + 1, last + 1 + len(rows)))
            with db.cursor() as cur:
                cur.executemany(self._sql(
                    "INSERT INTO {s}.records VALUES (%s, %s, %s, %s, now(), %s)"),
                    [(session, seq, kind, valid, data.decode())
                     for seq, data, (kind, valid) in zip(seqs, rows, kinds, strict=True)])
            db.execute(self._sql(
                "UPDATE {s}.sessions SET last_seq = %s, record_count = record_count + %s, "
                "last_append = now() WHERE id = %s"), (seqs[-1], len(rows), session))
        return seqs

    def append(self, session: str, record: dict[str, Any]) -> int:
        return self.append_many(session, [record])[0]

    def append_many(self, session: str, records: list[dict[str, Any]]) -> list[int]:
        check_session(session)
        if not records:
            return []
        rows = [encode(r) for r in records]
        try:
            return self._insert(session, rows, [kind_of(r) for r in records])
        except self._psycopg.Error as exc:
            raise self._error(exc) from None

    def append_checkpoint(self, session: str, checkpoint: dict[str, Any], *,
                          expected_last_seq: int) -> int:
        check_session(session)
        require_checkpoint(checkpoint)
        try:
            return self._insert(session, [encode(checkpoint)], [kind_of(checkpoint)],
                                expected_last_seq)[0]
        except self._psycopg.Error as exc:
            raise self._error(exc) from None

    def import_records(self, session: str, records: list[Record]) -> list[int]:
        return self.append_many(session, [r.data for r in records])

    # -- reading -------------------------------------------------------------------------

    def _tables(self) -> dict[str, str]:
        return {"records": f"{self.schema}.records", "sessions": f"{self.schema}.sessions"}

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        for arg in args:
            if isinstance(arg, str):
                check_session(arg)
        if self._absent:
            return []
        try:
            with self._db.transaction():
                return self._db.execute(self._sql(sql), args).fetchall()
        except self._psycopg.Error as exc:
            raise self._error(exc) from None

    def drop(self) -> None:
        """Remove the whole schema (for tests and benchmarks that made their own)."""
        with self._db.transaction():
            self._db.execute(self._sql("DROP SCHEMA IF EXISTS {s} CASCADE"))

    def close(self) -> None:
        self._db.close()
