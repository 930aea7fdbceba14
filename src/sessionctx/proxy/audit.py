"""What the proxy repaired, kept in a sessionctx store: one record per repaired request in the
session `proxy-audit` (SQLite by default, a PostgreSQL URL for a team), and counted in the
totals `sessionctx run` prints. No header is kept, so no credential is; the bodies only when
asked (`--log-bodies`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sessionctx.render import counted
from sessionctx.store import Store, open_store

if TYPE_CHECKING:
    from sessionctx.providers.wire import RepairedRequest

SESSION = "proxy-audit"
KIND = "sessionctx-proxy-repair"


@dataclass(slots=True)
class Totals:
    """What the proxy did since it started (the summary `sessionctx run` prints)."""

    requests: int = 0
    repaired: int = 0
    retried: int = 0
    changes: int = 0
    pending: int = 0
    unanswered: int = 0  # repaired requests the upstream never answered in full
    errors: int = 0

    def line(self) -> str:
        requests = counted(self.requests, "request")
        if not self.repaired and not self.retried:
            return f"sessionctx: {requests}, none needed a repair"
        unanswered = f", {self.unanswered} not answered" if self.unanswered else ""
        return (f"sessionctx: {requests}, {self.repaired} repaired "
                f"({self.retried} after a refusal{unanswered}), "
                f"{counted(self.changes, 'change')}, "
                f"{counted(self.pending, 'pending call')} removed "
                "(sessionctx proxy log shows them)")


def record(fixed: RepairedRequest, sent: datetime, session: str | None, path: str,
           model: str | None, *, reactive: bool, status: int | None, outcome: str,
           overhead: float, body: bool) -> dict[str, Any]:
    """The audit record of one repaired request (`line` prints it)."""
    entry: dict[str, Any] = {
        "time": sent.isoformat(timespec="milliseconds"), "session_id": session,
        "api": fixed.api, "path": path, "model": model or fixed.body.get("model"),
        "reactive": reactive, "status": status, "outcome": outcome,
        "overhead_ms": round(overhead * 1000, 2), **fixed.summary()}
    if body:
        entry["body"] = fixed.body
    return entry


class Audit:
    """The store the proxy writes to, opened on first use and written from one thread at a
    time (the server writes off its event loop)."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self._store: Store | None = None
        self._lock = threading.Lock()

    def write(self, entry: dict[str, Any]) -> None:
        with self._lock:
            if self._store is None:
                self._store = open_store(self.url)
            self._store.append(SESSION, {"type": KIND, **entry})

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


def entries(url: str | None) -> Iterator[dict[str, Any]]:
    """Every entry the proxy recorded in the store at `url`, oldest first."""
    store = open_store(url)
    try:
        if not any(s.id == SESSION for s in store.sessions()):
            return
        for record in store.records(SESSION):
            if record.data.get("type") == KIND:
                yield {k: v for k, v in record.data.items() if k != "type"}
    finally:
        store.close()


def line(entry: dict[str, Any]) -> str:
    """One entry as a line of `sessionctx proxy log`: when, which agent session, API and
    model, what was changed and when, the calls taken out, and what became of the request."""
    kinds: dict[str, int] = {}
    for change in entry.get("changes", []):
        kinds[change.get("kind", "?")] = kinds.get(change.get("kind", "?"), 0) + 1
    what = ", ".join(f"{k} x{n}" if n > 1 else k for k, n in kinds.items()) or "no change"
    how = "after a refusal" if entry.get("reactive") else "before sending"
    pending = ", ".join(f"{p.get('name')} ({p.get('id')})"
                        for p in entry.get("pending_calls", [])) or "none"
    return (f"{entry.get('time', '?')}  session {entry.get('session_id') or '-'}  "
            f"{entry.get('api', '?')} {entry.get('model') or '-'}  {how}: {what}  "
            f"pending: {pending}  -> {_outcome(entry)}")


def _outcome(entry: dict[str, Any]) -> str:
    """What became of the request (entries written before outcomes were kept: the status)."""
    found = entry.get("outcome")
    if isinstance(found, str) and found:
        return found
    status = entry.get("status")
    return f"upstream answered {status}" if status is not None else "?"
