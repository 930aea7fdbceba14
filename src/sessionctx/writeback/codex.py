"""Codex rollouts written back repaired: one item per line, so a repair takes out lines.

A `function_call` (or custom or local-shell call) with no output after it leaves with its
line; so does a `function_call_output` that answers no earlier call, or a second one.
"""

from __future__ import annotations

from typing import Any

from sessionctx.importers.codex import ITEM_TYPES
from sessionctx.importers.responses_items import native_call_id
from sessionctx.records import ReadResult
from sessionctx.writeback.common import last, remove_result_lines, remove_unreadable
from sessionctx.writeback.edits import Fix, Lines
from sessionctx.writeback.notes import NoteMaker
from sessionctx.writeback.wanted import Wanted

_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_TURN = frozenset({"reasoning", *_CALLS})  # items that keep an assistant turn open


def item_of(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    """The Responses item a rollout line holds, in either the current or the early format."""
    if obj is None:
        return None
    if obj.get("type") == "response_item" and isinstance(obj.get("payload"), dict):
        payload: dict[str, Any] = obj["payload"]
        return payload
    if "payload" not in obj and obj.get("type") in ITEM_TYPES:
        return obj
    return None


def _continues_turn(item: dict[str, Any] | None) -> bool:
    if item is None:
        return True  # session_meta, turn_context, event_msg lines sit between items
    return item.get("type") in _TURN or (item.get("type") == "message"
                                          and item.get("role") == "assistant")


def plan(lines: Lines, result: ReadResult, wanted: Wanted, notes: NoteMaker | None
         ) -> list[Fix]:
    fixes = remove_unreadable(lines, result.problems)
    for (n, call_id), changes in wanted.unpaired.items():
        held = []
        turn_end = n
        for m in range(n, len(lines) + 1):
            item = item_of(lines.obj(m))
            if m > n and not _continues_turn(item):
                break
            if item is not None:
                turn_end = m
            if item is not None and item.get("type") in _CALLS and native_call_id(
                    item) == call_id:
                held.append(m)
        gone = last(held, len(changes))
        for m in gone:
            lines.remove(m)
            fixes.append(Fix(changes[0].kind, changes[0].reason, line=m, action="removed",
                             detail={"tool_call_id": call_id,
                                     "name": changes[0].detail.get("name")}))
        if notes is not None and gone:
            notes.after(turn_end, changes)
    fixes.extend(remove_result_lines(lines, wanted))
    if notes is not None:
        fixes.extend(notes.write(lines, None))
    return fixes
