"""A Gemini CLI JSONL chat written back repaired, row by row.

An unanswered call leaves the row that holds its message as Gemini CLI loads it (the last row
with that message's id, or the `$set` row that wrote the whole conversation): its entry in
`toolCalls`, or its `functionCall` part. The message itself stays, and so does every earlier
row of it (taking a row out would bring an earlier version of the message back), unless
nothing is left in it: then every row of it goes. Every other row is written back byte for
byte. A note on the interrupted call is a new user message row right after the row that lost
the call.

A call that reuses an earlier call's id is renamed with the responses that answer it, in
every row that writes its message (`_rename_reused`).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.records import ReadResult
from sessionctx.writeback import spans
from sessionctx.writeback.common import delete_members, last, remove_unreadable
from sessionctx.writeback.edits import REMOVED_EMPTY, Fix, Lines
from sessionctx.writeback.notes import NoteMaker
from sessionctx.writeback.wanted import REUSED_REASON, Reused, Wanted

Obj = dict[str, Any]
Path = list[str | int]
# (line, where the message sits in that line's object, the message)
Sequence = list[tuple[int, Path, Obj]]
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
    """A reused call gets the new id in every copy of the message that holds it (each row of
    it, and each `$set` or header that wrote the whole conversation), so whichever row Gemini
    CLI loads holds the same ids; so do the responses that answer it, in its `toolCalls`
    entry and as `functionResponse` parts of the user messages right after it (Gemini CLI
    records them both ways)."""
    if not reused:
        return []
    sequences = _sequences(lines)
    fixes = []
    for r in reused:
        loaded = _message_of(lines.obj(r.call_at), r.call_item)
        if loaded is None:
            continue
        calls: dict[int, list[Path]] = {}
        answers: dict[int, list[Path]] = {}
        for seq in sequences:
            for k, (n, prefix, message) in enumerate(seq):
                if message.get("id") != loaded["id"] or message.get("type") != "gemini":
                    continue
                call, inside = _call_places(message, r.old, r.call_nth)
                if not call:
                    continue
                calls.setdefault(n, []).extend([*prefix, *p] for p in call)
                answers.setdefault(n, []).extend([*prefix, *p] for p in inside)
                for m, after_prefix, after in _users_after(seq, k):
                    held = [j for j, part in enumerate(_list(after, "content"))
                            if _part_response_id(part) == r.old]
                    if r.call_nth < len(held):
                        answers.setdefault(m, []).append(
                            [*after_prefix, "content", held[r.call_nth], "functionResponse",
                             "id"])
        detail = {"old": r.old, "new": r.new}
        for n in sorted(calls.keys() | answers.keys()):
            text = lines.text(n)
            for place in calls.get(n, []) + answers.get(n, []):
                text = spans.replace(text, place, r.new)
            lines.put(n, text)
            if calls.get(n):
                why = REUSED_REASON if n == r.call_at else (
                    "a copy of the message in another row gets the same id")
                fixes.append(Fix(ChangeKind.DUPLICATE_ID_RENAMED, why, line=n,
                                 detail=dict(detail)))
            if answers.get(n):
                fixes.append(Fix(ChangeKind.DUPLICATE_ID_RENAMED, "the responses it holds "
                                 "answer the renamed call", line=n, detail=dict(detail)))
    return fixes


def _sequences(lines: Lines) -> list[Sequence]:
    """The conversations the file writes: its message rows in order, and the messages of
    each `$set` or header that holds the whole conversation."""
    rows: Sequence = []
    out = [rows]
    for n in lines.kept():
        obj = lines.obj(n)
        if obj is None:
            continue
        if isinstance(obj.get("id"), str) and "$set" not in obj:
            rows.append((n, [], obj))
            continue
        for prefix in (["$set", "messages"], ["messages"]):
            held = _dig(obj, list(prefix))
            if isinstance(held, list):
                out.append([(n, [*prefix, k], m) for k, m in enumerate(held)
                            if isinstance(m, dict)])
    return out


def _message_of(obj: Obj | None, index: int | None) -> Obj | None:
    """The message a row holds: the row itself, or the `index`th of the conversation it
    writes."""
    if obj is None:
        return None
    if index is None:
        return obj if isinstance(obj.get("id"), str) else None
    for prefix in (["$set", "messages"], ["messages"]):
        message = _dig(obj, [*prefix, index])
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            return message
    return None


def _call_places(message: Obj, call_id: str, nth: int) -> tuple[list[Path], list[Path]]:
    """Where the `nth` call with `call_id` of a gemini message has its id (its `toolCalls`
    entry, and a `functionCall` part that repeats it), and the ids of the responses that
    entry holds."""
    calls = _list(message, "toolCalls")
    entries = [i for i, c in enumerate(calls) if _call_id(c) == call_id]
    parts = [j for j, p in enumerate(_list(message, "content")) if _part_call_id(p) == call_id]
    places: list[Path] = []
    inside: list[Path] = []
    if nth < len(entries):
        i = entries[nth]
        places.append(["toolCalls", i, "id"])
        inside = [["toolCalls", i, "result", j, "functionResponse", "id"]
                  for j, part in enumerate(_list(calls[i], "result"))
                  if _part_response_id(part) == call_id]
    if nth < len(parts) and (places or not entries):
        places.append(["content", parts[nth], "functionCall", "id"])
    return places, inside


def _users_after(seq: Sequence, k: int) -> Sequence:
    """The user messages after the `k`th of the conversation, up to its next gemini message:
    where the responses to its calls are sent from."""
    out: Sequence = []
    for entry in seq[k + 1:]:
        kind = entry[2].get("type")
        if kind == "gemini":
            break
        if kind == "user":
            out.append(entry)
    return out


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


def _part_response_id(part: Any) -> str | None:
    fr = part.get("functionResponse") if isinstance(part, dict) else None
    return fr.get("id") if isinstance(fr, dict) else None


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
