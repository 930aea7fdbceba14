"""A rule a request body breaks, with where in the body it breaks it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionctx import decoding


@dataclass(frozen=True, slots=True)
class Violation:
    path: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "message": self.message}


def history(body: dict[str, Any], key: str,
            kind: str = "a list") -> tuple[list[Any] | None, list[Violation]]:
    """The body's history under `key` and what is wrong with its shape: None with the
    violation when it is not a list (nothing else of the body is checked then), or the list
    with the violation of an empty one."""
    items = body.get(key)
    if not isinstance(items, list):
        return None, [Violation(key, f"{key} must be {kind}")]
    return items, nothing_sent(items, key)


def nothing_sent(items: list[Any], path: str) -> list[Violation]:
    """Every provider refuses a request that holds no message (Anthropic: "messages: at least
    one message is required")."""
    if items:
        return []
    return [Violation(path, f"{path}: at least one message is required")]


def arguments_problem(args: Any) -> str | None:
    """What is wrong with a call's arguments as the OpenAI APIs take them (the JSON text of an
    object), or None."""
    try:
        if isinstance(args, str) and isinstance(decoding.parse_text(args), dict):
            return None
        why = ""
    except decoding.Malformed as exc:
        why = f" ({exc.reason})"
    return f"arguments must be a JSON object string{why}"
