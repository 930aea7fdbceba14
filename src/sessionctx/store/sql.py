"""What the SQL stores share: the read methods, written once over a dialect.

SQLite and PostgreSQL keep the same two tables (records: session, seq, kind, is_checkpoint,
appended_at, data; sessions: id, last_seq, record_count, first_append, last_append). A dialect
says how a query names them and its parameters, runs a query (`_read`), and turns a stored
time into ISO text; everything read from them is read here.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from sessionctx.context import BuildOptions, Context
from sessionctx.records import Record
from sessionctx.store.base import SessionInfo, StoreError, context_from, stored_record, write_jsonl

_decoder = msgspec.json.Decoder(dict[str, Any])


class SqlReads:
    """The reading half of a SQL store. Queries name `{records}`, `{sessions}`, a parameter
    `{p}` and `{true}`; the dialect fills them in."""

    PARAM: ClassVar[str]
    TRUE: ClassVar[str]

    where: str  # the store as messages name it: a path, or a database and schema

    def _tables(self) -> dict[str, str]:
        return {"records": "records", "sessions": "sessions"}

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        raise NotImplementedError

    @staticmethod
    def _iso(value: Any) -> str | None:
        return value if value is None or isinstance(value, str) else str(value.isoformat())

    def _query(self, template: str, args: tuple[Any, ...] = ()) -> list[Any]:
        sql = template.format(p=self.PARAM, true=self.TRUE, **self._tables())
        return self._read(sql, args)

    def records(self, session: str, after: int = 0) -> list[Record]:
        rows = self._query("SELECT seq, data FROM {records} WHERE session = {p} AND seq > {p} "
                           "ORDER BY seq", (session, after))
        return [stored_record(_decoder.decode(data), int(seq)) for seq, data in rows]

    def last_seq(self, session: str) -> int:
        rows = self._query("SELECT last_seq FROM {sessions} WHERE id = {p}", (session,))
        return int(rows[0][0]) if rows else 0

    def latest_checkpoint(self, session: str) -> int:
        """The seq of the session's latest valid checkpoint, 0 when it has none."""
        rows = self._query("SELECT max(seq) FROM {records} WHERE session = {p} AND "
                           "is_checkpoint = {true}", (session,))
        return int(rows[0][0] or 0)

    def context_records(self, session: str) -> list[Record]:
        """The records context loading reads: from the latest valid checkpoint on."""
        return self.records(session, max(self.latest_checkpoint(session) - 1, 0))

    def context(self, session: str, options: BuildOptions | None = None) -> Context:
        """The context from the latest valid checkpoint on: what comes before it is replaced."""
        return context_from(self.context_records(session), options)

    def sessions(self) -> list[SessionInfo]:
        rows = self._query("SELECT id, record_count, last_seq, first_append, last_append "
                           "FROM {sessions} ORDER BY last_append DESC, id")
        return [SessionInfo(r[0], int(r[1]), int(r[2]), self._iso(r[3]), self._iso(r[4]))
                for r in rows]

    def export(self, session: str, path: str) -> int:
        rows = self._query("SELECT data FROM {records} WHERE session = {p} ORDER BY seq",
                           (session,))
        if not rows:
            raise StoreError(f"{self.where}: no session {session!r}")
        return write_jsonl(path, [r[0].encode() for r in rows])
