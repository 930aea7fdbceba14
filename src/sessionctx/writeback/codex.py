"""Responses items one a line, written back repaired: Codex rollouts and Responses item JSONL.

A call (of any kind) with no output after it leaves with its line; so does an output that
answers no earlier call, or a second one. Reasoning that taking out a call leaves with no item
of the model after it leaves too, as the API refuses reasoning without its following item.
"""

from __future__ import annotations

from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.importers.openai_responses import is_item
from sessionctx.importers.responses_items import CALLS, joins_turn, lone_reasoning, native_call_id
from sessionctx.records import ReadResult
from sessionctx.writeback.common import last, remove_result_lines, remove_unreadable
from sessionctx.writeback.edits import Fix, Lines
from sessionctx.writeback.notes import NoteMaker
from sessionctx.writeback.wanted import Wanted


def item_of(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    """The Responses item a line holds: a rollout's `response_item` payload, or the line
    itself (an early rollout's bare items, a Responses JSONL)."""
    if obj is None:
        return None
    if obj.get("type") == "response_item" and isinstance(obj.get("payload"), dict):
        payload: dict[str, Any] = obj["payload"]
        return payload
    if "payload" not in obj and is_item(obj):
        return obj
    return None


def _continues_turn(item: dict[str, Any] | None) -> bool:
    if item is None:
        return True  # session_meta, turn_context, event_msg lines sit between items
    return joins_turn(item)


def plan(lines: Lines, result: ReadResult, wanted: Wanted, notes: NoteMaker | None
         ) -> list[Fix]:
    fixes = remove_unreadable(lines, result.problems)
    lone_before = set(_lone_reasoning(lines, set()))
    for (n, call_id), changes in wanted.unpaired.items():
        held = []
        turn_end = n
        for m in range(n, len(lines) + 1):
            item = item_of(lines.obj(m))
            if m > n and not _continues_turn(item):
                break
            if item is not None:
                turn_end = m
            if item is not None and item.get("type") in CALLS and native_call_id(
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
    for m in _lone_reasoning(lines, set(notes.anchors) if notes is not None else set()):
        if m not in lone_before:
            lines.remove(m)
            fixes.append(Fix(ChangeKind.DROPPED_LONE_REASONING, "reasoning left with no item "
                             "of the model after it: the API refuses it", line=m,
                             action="removed"))
    if notes is not None:
        fixes.extend(notes.write(lines, None))
    return fixes


def _lone_reasoning(lines: Lines, notes_after: set[int]) -> list[int]:
    """The lines of reasoning items no kept model item follows (a note, a user message,
    stands after each line of `notes_after`)."""
    numbered: list[tuple[int | None, dict[str, Any]]] = []
    for n in lines.numbers():
        item = item_of(lines.obj(n)) if n not in lines.removed else None
        if item is not None:
            numbered.append((n, item))
        if n in notes_after:
            numbered.append((None, _NOTE))
    lone = lone_reasoning([item for _, item in numbered], [True] * len(numbered))
    return [m for i in lone if (m := numbered[i][0]) is not None]


_NOTE: dict[str, Any] = {"type": "message", "role": "user", "content": []}
