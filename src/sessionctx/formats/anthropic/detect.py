"""Whether a document is a list of Anthropic messages (it is never a file of lines). Tried
before Responses lists: Roo Code keeps Responses reasoning items beside its messages."""

from __future__ import annotations

from typing import Any


def line(obj: dict[str, Any]) -> bool:
    return False


def document(doc: Any) -> bool:
    from sessionctx.formats.anthropic.read import messages_of

    return messages_of(doc) is not None
