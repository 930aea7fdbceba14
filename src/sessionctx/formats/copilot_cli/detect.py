"""Whether a line is a Copilot CLI event: a dotted event type with its data object."""

from __future__ import annotations

from typing import Any

_FAMILIES = ("session.", "user.", "assistant.", "tool.")


def line(obj: dict[str, Any]) -> bool:
    kind = obj.get("type")
    return isinstance(kind, str) and kind.startswith(_FAMILIES) and isinstance(
        obj.get("data"), dict)


def document(doc: Any) -> bool:
    return False
