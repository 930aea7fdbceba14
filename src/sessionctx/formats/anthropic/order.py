"""Where tool results stand in a user message of Anthropic content blocks (Messages lists,
Claude Code entries): the API takes a message's tool results before any other block."""

from __future__ import annotations

from typing import Any


def results_after_other_blocks(message: Any) -> bool:
    """Whether a user message holds a block other than a tool result before one of its tool
    results: Claude Code sends it as stored, and the API refuses a result that is not first."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return False
    other = False
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if other:
                return True
        else:
            other = True
    return False


def results_first(content: list[Any]) -> list[int]:
    """The order of `content` with its tool results first, each kind in its stored order."""
    results = [i for i, b in enumerate(content)
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    held = set(results)
    return results + [i for i in range(len(content)) if i not in held]
