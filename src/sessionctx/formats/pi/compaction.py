"""pi's own compaction entry, as pi's session manager appends one.

pi resumes a session on the branch ending at its last entry. There the last `compaction` entry
gives the model its `summary` first, then the entries from `firstKeptEntryId` up to the
compaction, then every entry after it. So sessionctx compacts a pi session by appending one such
entry as a child of that last entry, naming the entry where the kept part starts; no other line
changes, and pi's loader (and `sessionctx build`) resume from it.

A version 1 session (a list without ids, which pi gives ids each time it loads it) names the
first kept entry by its index among the file's entries, `firstKeptEntryIndex`, as pi's version 1
wrote it; pi's migration turns that into the id it gives the entry.
"""

from __future__ import annotations

import uuid
from typing import Any

from sessionctx.errors import CompactionError
from sessionctx.formats.common import object_lines


def _new_id(taken: set[str]) -> str:
    """An id as pi makes one (the first 8 characters of a random UUID), unused in the file."""
    for _ in range(100):
        candidate = str(uuid.uuid4())[:8]
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


def compaction_lines(raw: bytes, *, kept_lines: list[int], summary: str, tokens_before: int,
                     at: str) -> list[dict[str, Any]]:
    """The one line to append: pi's compaction entry, keeping from the first of `kept_lines`
    (the lines of the kept messages, in the context's order)."""
    return [compaction_entry(raw, first_kept_line=kept_lines[0], summary=summary,
                             tokens_before=tokens_before, at=at)]


def compaction_entry(raw: bytes, *, first_kept_line: int, summary: str, tokens_before: int,
                     at: str) -> dict[str, Any]:
    """The `compaction` entry to append to the pi session `raw`: its summary, the id of the
    entry at `first_kept_line` and, as parent, the session's last entry."""
    entries = list(object_lines(raw).items())
    header = next((e for _, e in entries if e.get("type") == "session"), {})
    if not isinstance(header.get("version"), int) or header["version"] < 2:
        index = next((i for i, (n, _) in enumerate(entries) if n == first_kept_line), None)
        if index is None:
            raise CompactionError(f"line {first_kept_line} holds no pi entry to keep from; "
                                  "nothing was written")
        return {"type": "compaction", "timestamp": at, "summary": summary,
                "firstKeptEntryIndex": index, "tokensBefore": tokens_before}
    ids = {e["id"] for _, e in entries if isinstance(e.get("id"), str)}
    leaf = next((e["id"] for _, e in reversed(entries)
                 if isinstance(e.get("id"), str) and e.get("type") != "session"), None)
    first = next((e.get("id") for n, e in entries if n == first_kept_line), None)
    if leaf is None or not isinstance(first, str):
        raise CompactionError(f"line {first_kept_line} holds no pi entry with an id to keep "
                              "from; nothing was written")
    return {"type": "compaction", "id": _new_id(ids), "parentId": leaf, "timestamp": at,
            "summary": summary, "firstKeptEntryId": first, "tokensBefore": tokens_before}
