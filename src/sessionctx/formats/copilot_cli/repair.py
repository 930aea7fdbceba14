"""A Copilot CLI `events.jsonl` written back repaired, event by event.

An unanswered call leaves the `toolRequests` of its `assistant.message`; an event left with
nothing to say, a result that answers no call and an unreadable line go. Events form a chain
(`parentId` names the event before): the event after one that goes names that one's parent
instead. Every other line is written back byte for byte; a note on an interrupted call is a
`user.message` event in the chain after the message that lost it and the results of its other
calls.

A call that reuses an earlier call's id gets the new id in its `toolRequests`, and so do the
events that point at that call (`_rename_reused`).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.formats.common import is_in
from sessionctx.records import ReadResult
from sessionctx.writeback import spans
from sessionctx.writeback.common import delete_members, last, remove_result_lines
from sessionctx.writeback.edits import REMOVED_EMPTY, REMOVED_INVALID, Fix, Lines
from sessionctx.writeback.links import LinkKeys, Links
from sessionctx.writeback.notes import NoteMaker
from sessionctx.writeback.wanted import REUSED_REASON, Reused, Wanted

KEYS = LinkKeys("id", "parentId")  # the same keys as pi's
Obj = dict[str, Any]


def plan(lines: Lines, result: ReadResult, wanted: Wanted, notes: NoteMaker | None
         ) -> list[Fix]:
    fixes = _rename_reused(lines, wanted.reused)
    for (n, call_id), changes in wanted.unpaired.items():
        obj = lines.obj(n)
        data = obj.get("data") if obj is not None else None
        requests = data.get("toolRequests") if isinstance(data, dict) else None
        if not isinstance(requests, list):
            continue
        held = [i for i, r in enumerate(requests)
                if isinstance(r, dict) and r.get("toolCallId") == call_id]
        gone = last(held, len(changes))
        if not gone:
            continue
        names = [requests[i].get("name") for i in gone]
        delete_members(lines, n, ["data", "toolRequests"], gone)
        fixes += [Fix(changes[0].kind, changes[0].reason, line=n,
                      detail={"tool_call_id": call_id, "name": name}) for name in names]
        if _empty(lines.obj(n)):
            lines.remove(n)
            fixes.append(Fix(REMOVED_EMPTY, "nothing is left in the message", line=n,
                             action="removed"))
        if notes is not None:
            kept = {r["toolCallId"] for i, r in enumerate(requests) if i not in gone
                    and isinstance(r, dict) and isinstance(r.get("toolCallId"), str)}
            notes.after(_last_result(lines, n, kept), changes)
    fixes += remove_result_lines(lines, wanted)
    for n, change in [*wanted.empty.items(), *wanted.invalid.items()]:
        if n not in lines.removed and lines.obj(n) is not None:
            lines.remove(n)
            kind = REMOVED_INVALID if n in wanted.invalid else REMOVED_EMPTY
            fixes.append(Fix(kind, change.reason, line=n, action="removed"))
    removed = set(lines.removed)
    if notes is not None:
        fixes += notes.write(lines, KEYS)
    return fixes + Links(lines, removed, KEYS).relink()


def _rename_reused(lines: Lines, reused: list[Reused]) -> list[Fix]:
    """The request gets the new id, and so does every event that points at that call: the
    ones that started and completed it, and, when it is the message's only request with
    that id, every other event up to the next turn that names it (`toolCallId` of its
    sub-agent's `subagent.*` events, progress and permission events; `parentToolCallId` of
    each event of that sub-agent). Two requests of one message with one id leave those
    others alone: which call each one names cannot be told."""
    fixes = []
    for r in reused:
        n = r.call_at
        obj = lines.obj(n)
        data = obj.get("data") if obj is not None else None
        requests = data.get("toolRequests") if isinstance(data, dict) else None
        held = [i for i, q in enumerate(requests) if isinstance(q, dict) and q.get(
            "toolCallId") == r.old] if isinstance(requests, list) else []
        if r.call_nth >= len(held):
            continue
        edits: dict[int, tuple[list[Path], str]] = {
            n: ([["data", "toolRequests", held[r.call_nth], "toolCallId"]], REUSED_REASON)}
        if len(held) == 1:
            for m, places in _pointing(lines, n, r.old):
                why = ("the result answers the renamed call" if m == r.result_at else
                       "the event names the renamed call")
                edits[m] = (places, why)
        else:
            starts = [m for m, places in _pointing(lines, n, r.old) if _kind(lines, m) ==
                      "tool.execution_start" and places == [["data", "toolCallId"]]]
            if r.call_nth < len(starts):
                edits[starts[r.call_nth]] = ([["data", "toolCallId"]],
                                             "the event names the renamed call")
        if r.result_at is not None:
            edits.setdefault(r.result_at, ([["data", "toolCallId"]],
                                           "the result answers the renamed call"))
        for at, (places, why) in sorted(edits.items()):
            text = lines.text(at)
            for place in places:
                text = spans.replace(text, place, r.new)
            lines.put(at, text)
            fixes.append(Fix(ChangeKind.DUPLICATE_ID_RENAMED, why, line=at,
                             detail={"old": r.old, "new": r.new}))
    return fixes


Path = list[str | int]
# where an event names a call of the main agent: the call it is about, the call whose
# sub-agent wrote it, the call a permission prompt was raised for
_POINTERS: tuple[Path, ...] = (["data", "toolCallId"], ["data", "parentToolCallId"],
                               ["data", "permissionRequest", "toolCallId"])


def _pointing(lines: Lines, n: int, call_id: str) -> list[tuple[int, list[Path]]]:
    """The events after the message at line `n`, up to the main agent's next message, that
    name `call_id`, each with where it names it."""
    out = []
    for m in range(n + 1, len(lines) + 1):
        obj = lines.obj(m)
        data = obj.get("data") if obj is not None else None
        if obj is None or not isinstance(data, dict):
            continue
        sub = "agentId" in obj or "parentToolCallId" in data
        if not sub and obj.get("type") in ("user.message", "assistant.message"):
            break
        places = [p for p in _POINTERS if _at(obj, p) == call_id]
        if places:
            out.append((m, places))
    return out


def _at(obj: Any, path: Path) -> Any:
    for step in path:
        obj = obj.get(step) if isinstance(obj, dict) and isinstance(step, str) else None
    return obj


def _kind(lines: Lines, n: int) -> Any:
    obj = lines.obj(n)
    return obj.get("type") if obj is not None else None


def _last_result(lines: Lines, n: int, calls: set[str]) -> int:
    """The line a note goes after: the last result of the message's other calls, so those
    results still follow their calls, else the message itself."""
    at = n
    for m in range(n + 1, len(lines) + 1):
        obj = lines.obj(m)
        data = obj.get("data") if obj is not None else None
        kind = obj.get("type") if obj is not None else None
        if kind in ("user.message", "assistant.message") and not (
                isinstance(data, dict) and "parentToolCallId" in data) and "agentId" not in (
                obj or {}):
            break  # the next turn
        if kind == "tool.execution_complete" and isinstance(data, dict) and is_in(
                data.get("toolCallId"), calls):
            at = m
    return at


def _empty(obj: Obj | None) -> bool:
    data = obj.get("data") if obj is not None else None
    return isinstance(data, dict) and not data.get("toolRequests") and not (
        isinstance(data.get("content"), str) and data["content"].strip()) and not data.get(
        "reasoningText")


def note(anchor: Obj, parent: str | None, text: str) -> tuple[Obj, str | None]:
    """A user.message event in the chain, as Copilot CLI writes one."""
    own = str(uuid.uuid4())
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {"type": "user.message", "data": {"content": text}, "id": own,
            "timestamp": stamp, "parentId": parent}, own
