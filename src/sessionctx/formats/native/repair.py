"""pi sessions and sessionctx's own records written back repaired, as lines or one document.

An unanswered call leaves its message (a `toolCall` block, or an item of a `tool_calls`
array); a message left with nothing to say goes, and so does an orphan or duplicate result, or
a record no reader can use. In a pi tree the children of an entry that goes hang from its
parent, and a compaction that kept from it keeps from its child.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sessionctx import decoding
from sessionctx.changes import Change, ChangeKind
from sessionctx.formats.pi.lines import ID, PARENT, entry
from sessionctx.messages import ID_KEYS, RESULT_ID_KEYS, Call, calls, has_substance, user_text
from sessionctx.records import ReadResult, message_view
from sessionctx.writeback import spans
from sessionctx.writeback.common import delete_members, last, remove_result_lines, remove_unreadable
from sessionctx.writeback.documents import DocumentFormat, Item
from sessionctx.writeback.documents import plan as plan_items
from sessionctx.writeback.edits import RELINKED, REMOVED_EMPTY, REMOVED_INVALID, Fix, Lines
from sessionctx.writeback.links import LinkKeys, Links
from sessionctx.writeback.notes import NoteMaker
from sessionctx.writeback.wanted import REUSED_REASON, Reused, Wanted

__all__ = ["KEYS", "note", "plan", "plan_document"]
DUPLICATE_ID_RENAMED = ChangeKind.DUPLICATE_ID_RENAMED
KEYS = LinkKeys(ID, PARENT)


def _prefix(obj: dict[str, Any]) -> list[str | int]:
    """Where the message sits in the line: under `message` in a pi entry, else the line."""
    return ["message"] if message_view(obj) is not obj else []


def _rename_reused(lines: Lines, reused: list[Reused]) -> list[Fix]:
    """A call that reuses an earlier call's id, and the result answering it, get a new id, so
    both pairs stay. Left alone: pi's '<call_id>|<item id>' ids, which `build` splits."""
    fixes = []
    for r in reused:
        obj = lines.obj(r.call_at)
        if obj is None or "|" in r.old:
            continue
        message, prefix = message_view(obj), _prefix(obj)
        held = [c for c in calls(message) if c.id == r.old]
        if r.call_nth >= len(held):
            continue
        place, i = held[r.call_nth].where
        item = message[place][i]
        key = next(k for k in ID_KEYS if item.get(k) == r.old)
        lines.put(r.call_at, spans.replace(lines.text(r.call_at), [*prefix, place, i, key],
                                           r.new))
        fixes.append(Fix(DUPLICATE_ID_RENAMED, REUSED_REASON, line=r.call_at,
                         detail={"old": r.old, "new": r.new}))
        answer = lines.obj(r.result_at) if r.result_at is not None else None
        if answer is None or r.result_at is None:
            continue
        view = message_view(answer)
        key = next((k for k in RESULT_ID_KEYS if view.get(k) == r.old), "")
        if key:
            lines.put(r.result_at, spans.replace(lines.text(r.result_at),
                                                 [*_prefix(answer), key], r.new))
            fixes.append(Fix(DUPLICATE_ID_RENAMED, "the result answers the renamed call",
                             line=r.result_at, detail={"old": r.old, "new": r.new}))
    return fixes


def _is_tree(lines: Lines) -> bool:
    return any((o := lines.obj(n)) is not None and "parentId" in o and isinstance(
        o.get("id"), str) for n in lines.numbers())


def plan(lines: Lines, result: ReadResult, wanted: Wanted, notes: NoteMaker | None
         ) -> list[Fix]:
    fixes = remove_unreadable(lines, result.problems)
    fixes.extend(_rename_reused(lines, wanted.reused))
    # a message's unanswered calls are found in one read of it and cut in one edit: one
    # message with thousands of them would otherwise be decoded and re-cut per call
    by_line: dict[int, list[tuple[str | None, list[Change]]]] = {}
    for (n, call_id), changes in wanted.unpaired.items():
        by_line.setdefault(n, []).append((call_id, changes))
    for n, wanted_calls in by_line.items():
        obj = lines.obj(n)
        if obj is None:
            continue
        held: dict[str | None, list[Call]] = {}
        for c in calls(message_view(obj)):
            held.setdefault(c.id, []).append(c)
        prefix = _prefix(obj)
        lost = [(last(held.get(call_id, []), len(changes)), changes)
                for call_id, changes in wanted_calls]
        for place in ("content", "tool_calls"):
            indexes = [c.where[1] for gone, _ in lost for c in gone if c.where[0] == place]
            if indexes:
                delete_members(lines, n, [*prefix, place], indexes)
        after = lines.obj(n) or {}
        if isinstance(message_view(after).get("tool_calls"), list) and not message_view(
                after)["tool_calls"]:
            lines.put(n, spans.delete(lines.text(n), prefix, _key_index(lines, n, prefix,
                                                                        "tool_calls")))
        for gone, changes in lost:
            fixes += [Fix(changes[0].kind, changes[0].reason, line=n,
                          detail={"tool_call_id": c.id, "name": c.name}) for c in gone]
        if not has_substance(message_view(lines.obj(n) or {})):
            lines.remove(n)
            fixes.append(Fix(REMOVED_EMPTY, "nothing is left in the message", line=n,
                             action="removed"))
        if notes is not None:
            for gone, changes in lost:
                if gone:
                    notes.after(n, changes)
    fixes.extend(remove_result_lines(lines, wanted))
    for n, change in [*wanted.empty.items(), *wanted.invalid.items()]:
        if n not in lines.removed and lines.obj(n) is not None:
            lines.remove(n)
            kind = REMOVED_INVALID if n in wanted.invalid else REMOVED_EMPTY
            fixes.append(Fix(kind, change.reason, line=n, action="removed"))
    if not _is_tree(lines):
        if notes is not None:
            fixes.extend(notes.write(lines, None))
        return fixes + _kept_index(lines)
    removed = set(lines.removed)
    if notes is not None:
        fixes.extend(notes.write(lines, KEYS))
    links = Links(lines, removed, KEYS)
    fixes.extend(_kept_from(lines, links))
    fixes.extend(links.relink())
    return fixes


def _key_index(lines: Lines, n: int, prefix: list[str | int], key: str) -> int:
    return next(i for i, (k, _, _) in enumerate(spans.members(lines.text(n), prefix))
                if k == key)


def _kept_from(lines: Lines, links: Links) -> list[Fix]:
    """A compaction whose first kept entry goes keeps from that entry's first child."""
    fixes = []
    for n in list(lines.kept()):
        obj = lines.obj(n)
        first = obj.get("firstKeptEntryId") if obj is not None else None
        if not isinstance(first, str) or first not in links.parent_of:
            continue
        child = next((c for c in _descendants(lines, links, first)), None)
        fixes.append(links.point(n, "firstKeptEntryId", child,
                                 f"its first kept entry {first} was taken out; now {child}"))
    return fixes


def _kept_index(lines: Lines) -> list[Fix]:
    """A version 1 compaction names its first kept entry by its index among the entries a
    reader can parse: entries taken out before it move it down."""
    compactions = [n for n in lines.kept() if isinstance(
        (lines.obj(n) or {}).get("firstKeptEntryIndex"), int)]
    if not compactions:
        return []
    readable = [n for n in lines.numbers() if not lines.is_blank(n) and _parses(lines, n)]
    fixes = []
    for n in compactions:
        obj = lines.obj(n)
        index = obj.get("firstKeptEntryIndex") if obj is not None else None
        if not isinstance(index, int) or isinstance(index, bool) or not (
                0 <= index < len(readable)):
            continue
        target = readable[index]
        new = sum(1 for m in readable if m < target and m not in lines.removed)
        if new != index:
            lines.put(n, spans.replace(lines.text(n), ["firstKeptEntryIndex"], new))
            fixes.append(Fix(RELINKED, f"entries before its first kept entry were taken out; "
                             f"firstKeptEntryIndex {index} is now {new}", line=n,
                             detail={"field": "firstKeptEntryIndex", "from": index,
                                     "to": new}))
    return fixes


def _parses(lines: Lines, n: int) -> bool:
    try:
        decoding.decode(lines.original[n - 1])
    except decoding.Malformed:
        return False
    return True


def _descendants(lines: Lines, links: Links, uid: str) -> list[str]:
    """The kept entries that hang from `uid` once removed entries are skipped, in file order."""
    out = []
    for n in lines.kept():
        obj = lines.obj(n)
        parent = obj.get("parentId") if obj is not None else None
        own = obj.get("id") if obj is not None else None
        if not isinstance(own, str) or not isinstance(parent, str):
            continue
        chain: str | None = parent
        seen: set[str] = set()
        while chain is not None and chain != uid and chain in links.parent_of and (
                chain not in seen):
            seen.add(chain)
            chain = links.parent_of[chain]
        if chain == uid:
            out.append(own)
    return out


def note(anchor: dict[str, Any], parent: str | None, text: str
         ) -> tuple[dict[str, Any], str | None]:
    """The note after `anchor`: a pi message entry in a pi file, a bare message in
    sessionctx's own records."""
    inner = anchor.get("message") if anchor.get("type") == "message" else anchor
    stamp = inner.get("timestamp") if isinstance(inner, dict) else None
    message = {"role": "user", "content": [{"type": "text", "text": text}],
               "timestamp": stamp if isinstance(stamp, int) and not isinstance(stamp, bool)
               else int(datetime.now(UTC).timestamp() * 1000)}
    if anchor.get("type") != "message":  # sessionctx's own records: a bare message
        return message, None
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return entry(anchor, parent, message, now)


def _cut(item: dict[str, Any], edits: Item, call_id: str | None,
         count: int) -> list[dict[str, Any]]:
    view = message_view(item)
    gone = last([c for c in calls(view) if c.id == call_id], count)
    for c in gone:
        edits.cut.setdefault(c.where[0], set()).add(c.where[1])
    tool_calls = view.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls and len(edits.cut.get(
            "tool_calls", ())) == len(tool_calls) and "tool_calls" not in edits.drop_keys:
        edits.drop_keys.append("tool_calls")
    return [{"id": c.id, "name": c.name} for c in gone]


def _left(item: dict[str, Any], edits: Item) -> bool:
    view = dict(message_view(item))
    for key, indexes in edits.cut.items():
        members = view.get(key)
        if isinstance(members, list):
            view[key] = [m for i, m in enumerate(members) if i not in indexes]
    return has_substance(view)


DOCUMENT = DocumentFormat(_cut, _left, user_text)


def plan_document(raw: bytes, document: Any, wanted: Wanted, note_unpaired: bool
                  ) -> tuple[bytes, list[Fix]]:
    return plan_items(raw, document, DOCUMENT, wanted, note_unpaired)
