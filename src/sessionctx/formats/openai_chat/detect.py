"""Whether a document is an OpenAI chat message list (it is never a file of lines). A plain
list of role/content messages with nothing of chat's own is sessionctx's native array."""

from __future__ import annotations

from typing import Any


def line(obj: dict[str, Any]) -> bool:
    return False


def document(doc: Any) -> bool:
    from sessionctx.formats.openai_chat.read import is_chat_list, messages_of

    items = messages_of(doc)
    if items is None or not is_chat_list(items):
        return False
    return not (isinstance(doc, list) and _looks_native(items))


def _looks_native(items: list[Any]) -> bool:
    for item in items:
        if not isinstance(item, dict):
            continue
        if "tool_calls" in item or "function_call" in item or item.get("role") in (
                "tool", "function", "developer"):
            return False
        content = item.get("content")
        if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "image_url" for b in content):
            return False
    return True
