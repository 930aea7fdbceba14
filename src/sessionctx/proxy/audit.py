"""What the proxy repaired, kept in a sessionctx store: one record per repaired request in the
session `proxy-audit` (SQLite by default, a PostgreSQL URL for a team). No header is kept, so no
credential is; the bodies only when asked (`--log-bodies`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from sessionctx.store import Store, open_store

SESSION = "proxy-audit"
KIND = "sessionctx-proxy-repair"


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
