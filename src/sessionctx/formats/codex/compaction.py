"""Codex's own compaction: a `compacted` line whose `replacement_history` is the history from
there on.

On resume Codex replaces everything before a `compacted` line with its `replacement_history`
and adds the items that follow. sessionctx writes the summary as the first item of that history
(a user message, as Codex gives its own summary to the model) and then the kept items as the
rollout holds them, so nothing before the line is rewritten. A rollout whose lines carry an
`ordinal` (Codex 0.171 and later) gets the next one.
"""

from __future__ import annotations

from typing import Any

from sessionctx.errors import CompactionError
from sessionctx.formats.common import object_lines

SUMMARY_INTRO = ("This session continues an earlier conversation that was compacted; its "
                 "summary follows.\n\n")


def compaction_lines(raw: bytes, *, kept_lines: list[int], summary: str, tokens_before: int,
                     at: str) -> list[dict[str, Any]]:
    """The one `compacted` line to append to the rollout `raw`."""
    entries = object_lines(raw)
    if not entries:
        raise CompactionError("the rollout holds no line to compact; nothing was written")
    kept = [entries[n]["payload"] for n in sorted(set(kept_lines))
            if n in entries and entries[n].get("type") == "response_item"
            and isinstance(entries[n].get("payload"), dict)]
    first = {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": SUMMARY_INTRO + summary}]}
    line: dict[str, Any] = {"timestamp": at, "type": "compacted",
                            "payload": {"message": summary,
                                        "replacement_history": [first, *kept]}}
    ordinals = [e["ordinal"] for e in entries.values() if isinstance(e.get("ordinal"), int)]
    if ordinals:
        line = {"ordinal": max(ordinals) + 1, **line}
    return [line]
