"""What a Claude Code line is: one description read by detection, the reader and the writer.

Lines are chained by `uuid`/`parentUuid`; user and assistant entries are the conversation, the
rest (summary, progress, file-history-snapshot, queue-operation, system lines) bookkeeping.
Content sits under `message.content`. A subagent's own transcript, every entry of which is a
sidechain entry, is that agent's conversation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sessionctx.formats.common import is_in

TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot",
                   "queue-operation", "progress"})
CONVERSATION = frozenset({"user", "assistant"})
ID, PARENT, OTHER_PARENTS = "uuid", "parentUuid", ("logicalParentUuid",)  # the chain's links
CONTENT = ("message", "content")


def own_side(entries: Iterable[dict[str, Any]]) -> bool:
    """Whether the file is a subagent's own transcript (`subagents/agent-*.jsonl`): every
    user and assistant entry in it is a sidechain entry, and that chain is its conversation."""
    chat = [o for o in entries if is_in(o.get("type"), CONVERSATION)]
    return bool(chat) and all(o.get("isSidechain") is True for o in chat)


def of_this_agent(entry: dict[str, Any], own: bool) -> bool:
    """Whether an entry belongs to the file's own agent (not a subagent's sidechain turn)."""
    return own or not entry.get("isSidechain")

