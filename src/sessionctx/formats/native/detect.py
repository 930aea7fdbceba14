"""Whether a line or document is sessionctx's own: what detection falls back to."""

from __future__ import annotations

from typing import Any


def line(obj: dict[str, Any]) -> bool:
    otype = obj.get("type")
    return "role" in obj or obj.get("kind") == "context" or otype in ("compaction", "custom")


def envelope(doc: Any) -> bool:
    """An xopc transcript envelope: native whatever its messages look like."""
    return isinstance(doc, dict) and doc.get("type") == "xopc_session_transcript"


def document(doc: Any) -> bool:
    return True  # tried last: what no other format claims is read as native records
