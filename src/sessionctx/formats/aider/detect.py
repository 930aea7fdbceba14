"""Whether a file is an aider chat history: markdown, told from its text, never JSON."""

from __future__ import annotations

from typing import Any

HEADER = "# aider chat started at "


def text(raw: bytes) -> bool:
    """Its run header near the top, or a first line that is a user line."""
    if raw[:1] not in (b"\n", b"#"):
        return False
    head = raw[:65536].decode("utf-8", "replace")
    first = next((x for x in head.splitlines() if x.strip()), "")
    return HEADER in head or first.startswith("#### ")


def line(obj: dict[str, Any]) -> bool:
    return False


def document(doc: Any) -> bool:
    return False
