"""Whether a line or document is Claude Code's."""

from __future__ import annotations

from typing import Any

from sessionctx.formats.claude_code.lines import TYPES
from sessionctx.formats.common import is_in


def line(obj: dict[str, Any]) -> bool:
    return is_in(obj.get("type"), TYPES) and ("uuid" in obj or "sessionId" in obj
                                               or "leafUuid" in obj or "messageId" in obj)


def document(doc: Any) -> bool:
    return isinstance(doc, dict) and line(doc)  # a one-line file
