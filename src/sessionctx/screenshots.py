"""Browser screenshots: only the latest browser results that hold images keep them.

Older browser results keep their text observation; each of their images becomes a short note.
User images and other tools' images are never touched here.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import msgspec

from sessionctx.messages import Message

DEFAULT_BROWSER_TOOLS = frozenset({"browser_use"})
OMITTED_NOTE = "[Earlier browser screenshot omitted; its text observation is kept.]"


def has_images(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "image" for b in content)


def without_images(message: Message) -> tuple[Message, int]:
    """A copy with each image block replaced by the note, and how many were replaced."""
    content = message.get("content")
    if not isinstance(content, list):
        return message, 0
    replaced = 0
    blocks: list[Any] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "image":
            blocks.append({"type": "text", "text": OMITTED_NOTE})
            replaced += 1
        else:
            blocks.append(block)
    if not replaced:
        return message, 0
    out = dict(message)
    out["content"] = blocks
    return out, replaced


class ScreenshotWindow(msgspec.Struct):
    """The slots of the latest `keep` browser results with images; older ones are returned
    as they fall out of the window, so a caller can mark them once."""

    keep: int = 1
    _latest: deque[int] = msgspec.field(default_factory=deque)

    def push(self, slot: int) -> int | None:
        self._latest.append(slot)
        if len(self._latest) > self.keep:
            return self._latest.popleft()
        return None
