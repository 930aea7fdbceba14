"""Whether a file is opencode's: its opencode.db, a session file of its storage folder, or
the document `opencode export` writes."""

from __future__ import annotations

from typing import Any

SQLITE = b"SQLite format 3\x00"
TABLES = {"session": {"id"}, "message": {"id", "session_id", "data"},
          "part": {"id", "message_id", "session_id", "data"}}


def text(raw: bytes) -> bool:
    if not raw.startswith(SQLITE):
        return False
    from sessionctx.formats.sqlite_db import has_tables

    return has_tables(raw, TABLES)


def line(obj: dict[str, Any]) -> bool:
    return False


def session_info(doc: Any) -> bool:
    """A session's info: a `ses_` id, its project and its times."""
    return isinstance(doc, dict) and isinstance(doc.get("id"), str) and doc["id"].startswith(
        "ses") and isinstance(doc.get("projectID"), str) and isinstance(doc.get("time"), dict)


def document(doc: Any) -> bool:
    if session_info(doc):
        return True
    return isinstance(doc, dict) and session_info(doc.get("info")) and isinstance(
        doc.get("messages"), list)
