"""A rule a request body breaks, with where in the body it breaks it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Violation:
    path: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "message": self.message}


def nothing_sent(items: list[Any], path: str) -> list[Violation]:
    """Every provider refuses a request that holds no message (Anthropic: "messages: at least
    one message is required")."""
    if items:
        return []
    return [Violation(path, f"{path}: at least one message is required")]
