"""Whether a line or document is pi's."""

from __future__ import annotations

from typing import Any

from sessionctx.formats.common import is_in
from sessionctx.messages import MODEL_ROLES


def line(obj: dict[str, Any]) -> bool:
    otype = obj.get("type")
    return (otype == "session" and ("version" in obj or "cwd" in obj)) or (
        otype == "message" and "parentId" in obj)


def document(doc: Any) -> bool:
    """One pi message stored as a JSON object, or a one-line file."""
    return isinstance(doc, dict) and (is_in(doc.get("role"), MODEL_ROLES) or line(doc))
