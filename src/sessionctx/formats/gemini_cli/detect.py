"""Whether a document is a Gemini CLI session (it is never a file of lines)."""

from __future__ import annotations

from typing import Any


def line(obj: dict[str, Any]) -> bool:
    return False


def document(doc: Any) -> bool:
    from sessionctx.formats.gemini_cli.read import messages_of

    return messages_of(doc) is not None
