"""Whether a file is Goose's: its sessions.db, or a session JSONL of the releases before it."""

from __future__ import annotations

from typing import Any

SQLITE = b"SQLite format 3\x00"
TABLES = {"sessions": {"id", "working_dir"},
          "messages": {"session_id", "role", "content_json", "created_timestamp"}}
KINDS = frozenset({"text", "image", "toolRequest", "toolResponse", "toolConfirmationRequest",
                   "actionRequired", "frontendToolRequest", "thinking", "redactedThinking",
                   "systemNotification", "summarizationRequested", "contextLengthExceeded",
                   "conversationCompacted", "reasoning"})


def text(raw: bytes) -> bool:
    if not raw.startswith(SQLITE):
        return False
    from sessionctx.formats.sqlite_db import has_tables

    return has_tables(raw, TABLES)


def line(obj: dict[str, Any]) -> bool:
    """The session header line (`working_dir`, `message_count`), or a message line: a role, a
    `created` time in seconds and typed content Goose writes."""
    if isinstance(obj.get("working_dir"), str) and "message_count" in obj:
        return True
    content = obj.get("content")
    if _metadata(obj):
        return True
    return obj.get("role") in ("user", "assistant") and isinstance(obj.get("created"), int) \
        and isinstance(content, list) and bool(content) and all(
            isinstance(c, dict) and c.get("type") in KINDS for c in content) and any(
            c.get("type") != "text" for c in content)


def _metadata(obj: dict[str, Any]) -> bool:
    meta = obj.get("metadata")
    return isinstance(meta, dict) and "agentVisible" in meta and isinstance(
        obj.get("content"), list) and isinstance(obj.get("created"), int)


def document(doc: Any) -> bool:
    return False
