"""Claude Code's own compaction: a `compact_boundary` system entry, then the `isCompactSummary`
user entry that holds the summary, then the kept entries.

Claude Code resumes a session on the `parentUuid` chain from its last entry. A boundary has no
`parentUuid` (its `logicalParentUuid` names the entry it follows), so the chain, and what the
model is given, starts there: the summary entry, then whatever follows it. The entries the plan
keeps are written again after the summary, each under a new `uuid` and linked in order, their
messages as stored but for a new `message.id` (one per original id, so the streamed lines of one
message stay one message, and no reader joins a copy to the line it was copied from); the lines
before the boundary stay as they were.
"""

from __future__ import annotations

import uuid
from typing import Any

from sessionctx.errors import CompactionError
from sessionctx.formats.common import object_lines

SUMMARY_INTRO = ("This session continues an earlier conversation that was compacted; its "
                 "summary follows.\n\n")
SHARED = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")


def compaction_lines(raw: bytes, *, kept_lines: list[int], summary: str, tokens_before: int,
                     at: str) -> list[dict[str, Any]]:
    """The lines to append to the Claude Code transcript `raw`: boundary, summary, then a copy
    of each conversation entry at `kept_lines`."""
    entries = object_lines(raw)
    chat = [e for e in entries.values() if e.get("type") in ("user", "assistant")
            and isinstance(e.get("uuid"), str)]
    main = [e for e in chat if e.get("isSidechain") is not True]
    chat = main or chat  # a subagent's own transcript is all sidechain
    if not chat:
        raise CompactionError("no Claude Code entry with a uuid to compact; nothing was written")
    last = chat[-1]
    shared = {k: last[k] for k in SHARED if k in last}
    shared["isSidechain"] = not main
    boundary_id, summary_id = str(uuid.uuid4()), str(uuid.uuid4())
    boundary = {"parentUuid": None, "logicalParentUuid": last["uuid"], **shared,
                "type": "system", "subtype": "compact_boundary",
                "content": "Conversation compacted", "isMeta": False, "timestamp": at,
                "uuid": boundary_id, "level": "info",
                "compactMetadata": {"trigger": "manual", "preTokens": tokens_before}}
    summary_entry = {"parentUuid": boundary_id, **shared, "type": "user",
                     "message": {"role": "user", "content": SUMMARY_INTRO + summary},
                     "isVisibleInTranscriptOnly": True, "isCompactSummary": True,
                     "uuid": summary_id, "timestamp": at}
    out = [boundary, summary_entry]
    parent = summary_id
    new_ids: dict[str, str] = {}
    for number in sorted(set(kept_lines)):
        entry = entries.get(number)
        if entry is None or entry.get("type") not in ("user", "assistant"):
            continue
        copy = {k: v for k, v in entry.items() if k not in ("logicalParentUuid",)}
        copy.update(parentUuid=parent, uuid=str(uuid.uuid4()), **shared)
        message = copy.get("message")
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            old = message["id"]
            new_ids.setdefault(old, f"msg_{uuid.uuid4().hex[:24]}")
            copy["message"] = {**message, "id": new_ids[old]}
        out.append(copy)
        parent = copy["uuid"]
    return out
