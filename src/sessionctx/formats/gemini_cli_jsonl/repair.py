"""A Gemini CLI JSONL chat written back repaired, row by row.

An unanswered call leaves the row that holds its message as Gemini CLI loads it (the last row
with that message's id, or the `$set` row that wrote the whole conversation): its entry in
`toolCalls`, or its `functionCall` part. The message itself stays, and so does every earlier
row of it (taking a row out would bring an earlier version of the message back), unless
nothing is left in it: then every row of it goes. Every other row is written back byte for
byte. A note on the interrupted call is a new user message row right after the row that lost
the call.

A call that reuses an earlier call's id, in the `toolCalls` of a message row, is renamed in
that row (the one Gemini CLI loads) with the responses it holds, as in the JSON format.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.formats.gemini_cli.repair import DOCUMENT as STORED_AS_JSON
from sessionctx.records import ReadResult
from sessionctx.writeback import spans
from sessionctx.writeback.common import delete_members, last, remove_unreadable
from sessionctx.writeback.edits import REMOVED_EMPTY, Fix, Lines
from sessionctx.writeback.notes import NoteMaker
from sessionctx.writeback.wanted import REUSED_REASON, Reused, Wanted

Obj = dict[str, Any]
KEYS = None  # rows are not chained: a message row is found by its id


def plan(lines: Lines, result: ReadResult, wanted: Wanted, notes: NoteMaker | None
         ) -> list[Fix]:
    fixes = remove_unreadable(lines, result.problems)
    fixes += _rename_reused(lines, wanted.reused)
    for (n, call_id), changes in wanted.unpaired.items():
        obj = lines.obj(n)
        if obj is None:
            continue
        prefix = _holder(obj, call_id)
        if prefix is None:
            continue
        message = _dig(obj, prefix)
        if not isinstance(message, dict):
            continue
        for key, id_of in (("toolCalls", _call_id), ("content", _part_call_id)):
            members = message.get(key)
            if not isinstance(members, list):
                continue
            held = [i for i, m in enumerate(members) if id_of(m) == call_id and not (
                key == "toolCalls" and isinstance(m, dict) and m.get("result"))]
            gone = last(held, len(changes))
            if gone:
                names = [_name(members[i]) for i in gone]
                delete_members(lines, n, [*prefix, key], gone)
                fixes += [Fix(changes[0].kind, changes[0].reason, line=n,
                              detail={"tool_call_id": call_id, "name": name})
                          for name in names]
                break
        if not prefix and _empty(lines.obj(n)):
            fixes += _remove_message(lines, str(obj["id"]))
        if notes is not None:
            notes.after(n, changes)
    if notes is not None:
        fixes += notes.write(lines, None)
    return fixes


def _rename_reused(lines: Lines, reused: list[Reused]) -> list[Fix]:
    """The reused call of a message row and the responses it holds get the new id. Left
    alone (and named as remaining): calls held as `functionCall` parts, or in a `$set` row."""
    fixes = []
    for r in reused:
        n = r.call_at
        obj = lines.obj(n)
        if obj is None or _holder(obj, r.old) != [] or any(
                _part_call_id(p) == r.old for p in _list(obj, "content")):
            continue
        places = STORED_AS_JSON.call_ids(obj, r.old, r.call_nth)
        if not places:
            continue
        answers = STORED_AS_JSON.result_ids(obj, r.old, r.result_nth) if (
            r.result_at == n) else []
        text = lines.text(n)
        for place in places + answers:
            text = spans.replace(text, place, r.new)
        lines.put(n, text)
        detail = {"old": r.old, "new": r.new}
        fixes.append(Fix(ChangeKind.DUPLICATE_ID_RENAMED, REUSED_REASON, line=n, detail=detail))
        if answers:
            fixes.append(Fix(ChangeKind.DUPLICATE_ID_RENAMED, "the responses it holds answer "
                             "the renamed call", line=n, detail=dict(detail)))
    return fixes


def _empty(message: Obj | None) -> bool:
    """A gemini message left with nothing to send."""
    if message is None:
        return False
    content = message.get("content")
    return not message.get("toolCalls") and not message.get("thoughts") and (
        not content.strip() if isinstance(content, str) else not content)


def _remove_message(lines: Lines, mid: str) -> list[Fix]:
    """Every row of a message left empty: a row of it that stayed would bring it back."""
    fixes = []
    for n in lines.kept():
        obj = lines.obj(n)
        if obj is not None and obj.get("id") == mid and "$set" not in obj:
            lines.remove(n)
            fixes.append(Fix(REMOVED_EMPTY, "nothing is left in the message (each row of it "
                             "goes)", line=n, action="removed"))
    return fixes


def _holder(obj: Obj, call_id: str | None) -> list[str | int] | None:
    """Where in the row the message holding the call sits."""
    if isinstance(obj.get("id"), str) and "$set" not in obj:
        return []
    prefixes: list[list[str | int]] = [["$set", "messages"], ["messages"]]
    for prefix in prefixes:
        messages = _dig(obj, prefix)
        if isinstance(messages, list):
            for k, m in enumerate(messages):
                if any(_call_id(c) == call_id for c in _list(m, "toolCalls")) or any(
                        _part_call_id(p) == call_id for p in _list(m, "content")):
                    return [*prefix, k]
    return None


def _list(message: Any, key: str) -> list[Any]:
    value = message.get(key) if isinstance(message, dict) else None
    return value if isinstance(value, list) else []


def _dig(obj: Any, path: list[str | int]) -> Any:
    for step in path:
        if isinstance(obj, dict) and isinstance(step, str):
            obj = obj.get(step)
        elif isinstance(obj, list) and isinstance(step, int) and 0 <= step < len(obj):
            obj = obj[step]
        else:
            return None
    return obj


def _call_id(call: Any) -> str | None:
    return call.get("id") if isinstance(call, dict) else None


def _part_call_id(part: Any) -> str | None:
    fc = part.get("functionCall") if isinstance(part, dict) else None
    return fc.get("id") if isinstance(fc, dict) else None


def _name(member: Any) -> str | None:
    if not isinstance(member, dict):
        return None
    inner = member.get("functionCall")
    name = (inner if isinstance(inner, dict) else member).get("name")
    return name if isinstance(name, str) else None


def note(anchor: Obj, parent: str | None, text: str) -> tuple[Obj, str | None]:
    """A user message row, as Gemini CLI records one."""
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {"id": str(uuid.uuid4()), "timestamp": stamp, "type": "user",
            "content": [{"text": text}]}, None
