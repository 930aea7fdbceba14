"""Plain-text renderings of messages, changes and records for a terminal."""

from __future__ import annotations

from typing import Any

from sessionctx.changes import Change, Source
from sessionctx.messages import calls, image_count, result_id, text_of


def one_line(text: str, width: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def summarize_message(message: dict[str, Any], width: int = 72) -> str:
    """A one-line summary: role-specific text, calls, images."""
    parts = []
    text = text_of(message.get("content"))
    if message.get("role") == "bashExecution":
        text = f"$ {message.get('command', '')}"
    elif message.get("role") in ("branchSummary", "compactionSummary"):
        text = str(message.get("summary", ""))
    rid = result_id(message)
    if rid is not None:
        name = message.get("toolName")
        parts.append(f"result for {name + ' ' if isinstance(name, str) else ''}({rid})")
    if text.strip():
        parts.append(repr(one_line(text, width)))
    for call in calls(message):
        parts.append(f"call {call.name or '?'} ({call.id or 'no id'})")
    images = image_count(message.get("content"))
    if images:
        parts.append(counted(images, "image"))
    return ", ".join(parts) if parts else "(empty)"


def format_message(index: int, message: dict[str, Any], source: Source | None) -> str:
    where = f"[{source.label()}]" if source is not None else ""
    return f"#{index:<4} {message.get('role', '?')!s:<11} {where:<14} " \
           f"{summarize_message(message)}"


def format_change(change: Change) -> str:
    where = change.record.label() if change.record is not None else "-"
    target = f" -> #{change.message_index}" if change.message_index is not None else ""
    return f"  {where:<16} {change.kind:<28}{target} {change.reason}"


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """'1 call', '2 calls': a count with its noun in the number it takes."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"
