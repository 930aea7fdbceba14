"""Sessions stored as one JSON document, written back repaired: Gemini CLI sessions, OpenAI chat
message lists (SWE-agent `.traj`, OpenHands), Anthropic Messages lists, sessionctx's own arrays
and xopc envelopes.

The unit is an item of the document's message array: an item a repair does not name keeps its
bytes, and so does everything around the array. A Gemini CLI call with no response leaves its
message's `toolCalls`; an OpenAI chat call leaves `tool_calls`; a result that answers nothing
leaves the array; so does a message left with nothing to say. An Anthropic message holds calls
and results as content blocks: a `tool_use` or `tool_result` block leaves its `content`, and
the message goes only when nothing else is left in it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.context import interrupted_note
from sessionctx.messages import calls, has_substance, user_text
from sessionctx.records import message_view
from sessionctx.writeback import spans
from sessionctx.writeback.common import last
from sessionctx.writeback.edits import REMOVED_EMPTY, REMOVED_INVALID, Fix
from sessionctx.writeback.wanted import Wanted

Path = list[str | int]


def items_path(document: Any) -> Path | None:
    """Where the message array sits in the document; None for a single message object."""
    if isinstance(document, list):
        return []
    if isinstance(document, dict):
        for key in ("messages", "history"):
            if isinstance(document.get(key), list):
                return [key]
    return None


@dataclass(slots=True)
class _Item:
    """The edits one item gets: members taken out of its arrays, whether it goes, its note."""

    cut: dict[str, set[int]] = field(default_factory=dict)  # array key -> indexes
    # array key -> its members' indexes by call id (None: an id that is not a string)
    by_id: dict[tuple[str, str], dict[str | None, list[int]]] = field(default_factory=dict)
    drop_keys: list[str] = field(default_factory=list)  # keys left empty and taken out
    remove: bool = False
    note: dict[str, Any] | None = None
    note_after: int | None = None  # the item the note follows, when not this one


# (the item, its edits so far, the call id, how many to take out) -> the calls taken out
CallCutter = Callable[[dict[str, Any], _Item, "str | None", int], list[dict[str, Any]]]


def _cut_members(item: dict[str, Any], edits: _Item, key: str, count: int,
                 match: Callable[[dict[str, Any]], bool], keep_key: bool = False,
                 named: tuple[str | None, str] | None = None) -> list[dict[str, Any]]:
    """Take out the last `count` members of `item[key]` that `match`. `named`: (call id, the
    member's id key) that every match holds; the members are then looked up by it, so a
    message with thousands of calls is not read through once per call."""
    members = item.get(key)
    if not isinstance(members, list):
        return []
    if named is None:
        candidates: Iterable[int] = range(len(members))
    else:
        call_id, id_key = named
        candidates = _members_by_id(edits, members, key, id_key).get(call_id, ())
    held = [(i, m) for i in candidates if isinstance(m := members[i], dict) and match(m)]
    gone = last(held, count)
    edits.cut.setdefault(key, set()).update(i for i, _ in gone)
    if len(edits.cut[key]) == len(members) and key not in edits.drop_keys and not keep_key:
        edits.drop_keys.append(key)
    return [m for _, m in gone]


def _members_by_id(edits: _Item, members: list[Any], key: str, id_key: str
                   ) -> dict[str | None, list[int]]:
    """The indexes of the object members of `members` by their `id_key` (None: not a
    string), made once per item and array."""
    index = edits.by_id.get((key, id_key))
    if index is None:
        index = edits.by_id[(key, id_key)] = {}
        for i, m in enumerate(members):
            if isinstance(m, dict):
                found = m.get(id_key)
                index.setdefault(found if isinstance(found, str) else None, []).append(i)
    return index


def _has_id(call_id: str | None, key: str = "id") -> Callable[[dict[str, Any]], bool]:
    """Whether a member is the one `call_id` names (None: one without an id)."""
    def match(member: dict[str, Any]) -> bool:
        found = member.get(key)
        return found == call_id or (call_id is None and not isinstance(found, str))
    return match


def _gemini_cut(item: dict[str, Any], edits: _Item, call_id: str | None,
                count: int) -> list[dict[str, Any]]:
    def unanswered(call: dict[str, Any]) -> bool:
        has_response = isinstance(call.get("result"), list) and bool(call["result"])
        return _has_id(call_id)(call) and not has_response

    return _cut_members(item, edits, "toolCalls", count, unanswered, named=(call_id, "id"))


def _chat_cut(item: dict[str, Any], edits: _Item, call_id: str | None,
              count: int) -> list[dict[str, Any]]:
    return _cut_members(item, edits, "tool_calls", count, _has_id(call_id),
                        named=(call_id, "id"))


def _anthropic_block(btype: str, call_id: str | None, key: str
                     ) -> Callable[[dict[str, Any]], bool]:
    return lambda b: b.get("type") == btype and _has_id(call_id, key)(b)


def _anthropic_cut(item: dict[str, Any], edits: _Item, call_id: str | None,
                   count: int) -> list[dict[str, Any]]:
    return _cut_members(item, edits, "content", count,
                        _anthropic_block("tool_use", call_id, "id"), keep_key=True,
                        named=(call_id, "id"))


def _anthropic_cut_result(item: dict[str, Any], edits: _Item, call_id: str | None,
                          count: int) -> list[dict[str, Any]]:
    return _cut_members(item, edits, "content", count,
                        _anthropic_block("tool_result", call_id, "tool_use_id"), keep_key=True,
                        named=(call_id, "tool_use_id"))


def _anthropic_cut_empty(item: dict[str, Any], edits: _Item) -> None:
    """The blocks of a message that gave nothing to send (blank text), its results kept."""
    _cut_members(item, edits, "content", len(item.get("content") or []),
                 lambda b: b.get("type") != "tool_result", keep_key=True)


def _native_cut(item: dict[str, Any], edits: _Item, call_id: str | None,
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


def _gemini_left(item: dict[str, Any], edits: _Item) -> bool:
    kept_calls = len(item.get("toolCalls") or []) - len(edits.cut.get("toolCalls", ()))
    content = item.get("content")
    return kept_calls > 0 or bool(item.get("thoughts")) or (
        bool(content) if not isinstance(content, str) else bool(content.strip()))


def _chat_left(item: dict[str, Any], edits: _Item) -> bool:
    kept = len(item.get("tool_calls") or []) - len(edits.cut.get("tool_calls", ()))
    content = item.get("content")
    return kept > 0 or (bool(content.strip()) if isinstance(content, str) else bool(content))


def _anthropic_left(item: dict[str, Any], edits: _Item) -> bool:
    content = item.get("content")
    if not isinstance(content, list):
        return isinstance(content, str) and bool(content.strip())
    gone = edits.cut.get("content", set())
    return has_substance({"content": [b for i, b in enumerate(content) if i not in gone]})


def _native_left(item: dict[str, Any], edits: _Item) -> bool:
    view = dict(message_view(item))
    for key, indexes in edits.cut.items():
        members = view.get(key)
        if isinstance(members, list):
            view[key] = [m for i, m in enumerate(members) if i not in indexes]
    return has_substance(view)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _gemini_note(text: str) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "timestamp": _now(), "type": "user",
            "content": [{"text": text}]}


def _chat_note(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


@dataclass(frozen=True, slots=True)
class DocumentFormat:
    cut: CallCutter
    left: Callable[[dict[str, Any], _Item], bool]
    note: Callable[[str], dict[str, Any]]
    # results and empty parts held as blocks of a message (None: a result is its own item)
    cut_result: CallCutter | None = None
    cut_empty: Callable[[dict[str, Any], _Item], None] | None = None


FORMATS = {
    "anthropic": DocumentFormat(_anthropic_cut, _anthropic_left, user_text,
                                _anthropic_cut_result, _anthropic_cut_empty),
    "gemini-cli": DocumentFormat(_gemini_cut, _gemini_left, _gemini_note),
    "openai-chat": DocumentFormat(_chat_cut, _chat_left, _chat_note),
    "native": DocumentFormat(_native_cut, _native_left, user_text),
    "pi": DocumentFormat(_native_cut, _native_left, user_text),
}


def plan(raw: bytes, document: Any, fmt: str, wanted: Wanted, note_unpaired: bool
         ) -> tuple[bytes, list[Fix]]:
    """The repaired document and the fixes, items named by their index."""
    shape = FORMATS[fmt]
    where = items_path(document)
    items: list[Any] = [document] if where is None else _dig(document, where)
    edits: dict[int, _Item] = {}
    fixes: list[Fix] = []

    def item(i: int) -> dict[str, Any] | None:
        value = items[i] if 0 <= i < len(items) else None
        return value if isinstance(value, dict) else None

    for (i, call_id), changes in wanted.unpaired.items():
        obj = item(i)
        if obj is None:
            continue
        mine = edits.setdefault(i, _Item())
        gone = shape.cut(obj, mine, call_id, len(changes))
        named = [(_name(g), g.get("id") if isinstance(g.get("id"), str) else None)
                 for g in gone]
        fixes.extend(Fix(ChangeKind.DROPPED_UNPAIRED_CALL, changes[0].reason, index=i,
                         detail={"tool_call_id": cid, "name": name}) for name, cid in named)
        if gone and not shape.left(obj, mine) and where is not None:
            mine.remove = True
            fixes.append(Fix(REMOVED_EMPTY, "nothing is left in the message", index=i,
                             action="removed"))
        if gone and note_unpaired:
            mine.note = shape.note(interrupted_note(named))
            fixes.append(Fix(ChangeKind.INTERRUPTED_NOTE_ADDED, "told the model the call was "
                             "interrupted, outcome unknown", index=i, action="inserted",
                             detail={"tool_call_ids": [cid for _, cid in named]}))
    if where is not None:
        for (i, call_id), changes in wanted.results.items():
            obj = item(i)
            if obj is not None and fmt != "gemini-cli":
                mine = edits.setdefault(i, _Item())
                if shape.cut_result is not None:
                    shape.cut_result(obj, mine, call_id, len(changes))
                mine.remove = mine.remove or shape.cut_result is None or not shape.left(
                    obj, mine)
                fixes.append(Fix(changes[0].kind, changes[0].reason, index=i,
                                 action="removed", detail={"tool_call_id": call_id}))
        for i, change in [*wanted.empty.items(), *wanted.invalid.items()]:
            mine = edits.setdefault(i, _Item())
            obj = item(i)
            if not mine.remove and obj is not None:
                if shape.cut_empty is not None and i in wanted.empty:
                    shape.cut_empty(obj, mine)
                mine.remove = shape.cut_empty is None or i in wanted.invalid or not shape.left(
                    obj, mine)
                kind = REMOVED_INVALID if i in wanted.invalid else REMOVED_EMPTY
                fixes.append(Fix(kind, change.reason, index=i, action="removed"))
        if shape.cut_result is not None:
            _notes_after_results(items, edits)
    if where is None:  # a single message
        text = _edit_item(raw, item(0) or {}, edits[0]) if 0 in edits else raw
        return text, sorted(fixes, key=lambda f: (f.index or 0, f.action == "inserted"))
    array = spans.ArrayText(raw, where)
    for i in sorted(edits, reverse=True):  # later items first: an item's index still holds
        mine = edits[i]
        if mine.cut:
            array.values[i] = _edit_item(array.values[i], item(i) or {}, mine)
        if mine.note is not None:
            array.insert_after(i if mine.note_after is None else mine.note_after, mine.note)
        if mine.remove:
            array.delete(i)
    return array.render(), sorted(fixes, key=lambda f: (f.index or 0, f.action == "inserted"))


def _notes_after_results(items: list[Any], edits: dict[int, _Item]) -> None:
    """A note goes after the message holding the results of its message's other calls, so
    those results still come right after their calls."""
    for i, mine in edits.items():
        nxt = items[i + 1] if mine.note is not None and i + 1 < len(items) else None
        if isinstance(nxt, dict) and not edits.get(i + 1, _Item()).remove and any(
                isinstance(b, dict) and b.get("type") == "tool_result"
                for b in nxt.get("content") or [] if isinstance(nxt.get("content"), list)):
            mine.note_after = i + 1


def _name(call: dict[str, Any]) -> str | None:
    function = call.get("function")
    name = function.get("name") if isinstance(function, dict) else call.get("name")
    return name if isinstance(name, str) else None


def _dig(document: Any, path: Path) -> list[Any]:
    for step in path:
        document = document[step]
    return document  # type: ignore[no-any-return]


def _edit_item(text: bytes, obj: dict[str, Any], edits: _Item) -> bytes:
    """The item's own JSON text with the members its edits name taken out."""
    prefix: Path = ["message"] if message_view(obj) is not obj else []
    for key, indexes in edits.cut.items():
        if key in edits.drop_keys:
            names = [k for k, _, _ in spans.members(text, prefix)]
            text = spans.delete(text, prefix, names.index(key))
            continue
        text = spans.without(text, [*prefix, key], indexes)
    return text
