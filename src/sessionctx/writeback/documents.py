"""Sessions stored as one JSON document, written back repaired: the walk every document
format shares, given the format's `DocumentFormat` (its `repair.py` `DOCUMENT`).

The unit is an item of the document's message array: an item a repair does not name keeps its
bytes, and so does everything around the array. A call with no result leaves its message; a
result that answers nothing leaves the array (or, where results are blocks of a message, its
message's content); so does a message left with nothing to say.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.messages import ID_KEYS, RESULT_ID_KEYS, calls
from sessionctx.pairing import interrupted_note
from sessionctx.records import message_view
from sessionctx.writeback import spans
from sessionctx.writeback.common import last
from sessionctx.writeback.edits import REMOVED_EMPTY, REMOVED_INVALID, Fix
from sessionctx.writeback.wanted import REUSED_REASON, Reused, Wanted

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
class Item:
    """The edits one item gets: members taken out of its arrays, whether it goes, its note."""

    cut: dict[str, set[int]] = field(default_factory=dict)  # array key -> indexes
    # array key -> its members' indexes by call id (None: an id that is not a string)
    by_id: dict[tuple[str, str], dict[str | None, list[int]]] = field(default_factory=dict)
    drop_keys: list[str] = field(default_factory=list)  # keys left empty and taken out
    remove: bool = False
    note: dict[str, Any] | None = None
    note_after: int | None = None  # the item the note follows, when not this one
    renamed: list[tuple[Path, str]] = field(default_factory=list)  # id strings -> new id


# (the item, its edits so far, the call id, how many to take out) -> the calls taken out
CallCutter = Callable[[dict[str, Any], Item, "str | None", int], list[dict[str, Any]]]


def cut_members(item: dict[str, Any], edits: Item, key: str, count: int,
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


def _members_by_id(edits: Item, members: list[Any], key: str, id_key: str
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


def has_id(call_id: str | None, key: str = "id") -> Callable[[dict[str, Any]], bool]:
    """Whether a member is the one `call_id` names (None: one without an id)."""
    def match(member: dict[str, Any]) -> bool:
        found = member.get(key)
        return found == call_id or (call_id is None and not isinstance(found, str))
    return match


# (the item, a call id, which of the calls or results with it in the item) -> where the id
# strings to rename sit in the item
IdPlaces = Callable[[dict[str, Any], str, int], list[Path]]


def _prefix(item: dict[str, Any]) -> Path:
    """Where the message sits in the item: under `message` in an entry, else the item."""
    return ["message"] if message_view(item) is not item else []


def call_id_places(item: dict[str, Any], call_id: str, nth: int) -> list[Path]:
    """The id of the `nth` call with `call_id` of a message, wherever `calls` finds it."""
    view = message_view(item)
    held = [c for c in calls(view) if c.id == call_id]
    if nth >= len(held):
        return []
    place, i = held[nth].where
    key = next(k for k in ID_KEYS if view[place][i].get(k) == call_id)
    return [[*_prefix(item), place, i, key]]


def result_id_places(item: dict[str, Any], call_id: str, nth: int) -> list[Path]:
    """The id of the `nth` result with `call_id`: a result message's own, or that of a
    `tool_result` block of its content."""
    view, prefix = message_view(item), _prefix(item)
    key = next((k for k in RESULT_ID_KEYS if view.get(k) == call_id), None)
    if key is not None:
        return [[*prefix, key]] if nth == 0 else []
    content = view.get("content")
    blocks = [j for j, b in enumerate(content) if isinstance(b, dict) and b.get(
        "type") == "tool_result" and b.get("tool_use_id") == call_id] if isinstance(
        content, list) else []
    return [[*prefix, "content", blocks[nth], "tool_use_id"]] if nth < len(blocks) else []


@dataclass(frozen=True, slots=True)
class DocumentFormat:
    cut: CallCutter
    left: Callable[[dict[str, Any], Item], bool]
    note: Callable[[str], dict[str, Any]]
    # results and empty parts held as blocks of a message (None: a result is its own item)
    cut_result: CallCutter | None = None
    cut_empty: Callable[[dict[str, Any], Item], None] | None = None
    results_in_calls: bool = False  # a result sits in its call, never an item of its own
    call_ids: IdPlaces = call_id_places
    result_ids: IdPlaces = result_id_places


def plan(raw: bytes, document: Any, shape: DocumentFormat, wanted: Wanted,
         note_unpaired: bool) -> tuple[bytes, list[Fix]]:
    """The repaired document and the fixes, items named by their index."""
    where = items_path(document)
    items: list[Any] = [document] if where is None else _dig(document, where)
    edits: dict[int, Item] = {}
    fixes: list[Fix] = []

    def item(i: int) -> dict[str, Any] | None:
        value = items[i] if 0 <= i < len(items) else None
        return value if isinstance(value, dict) else None

    for r in wanted.reused:
        fixes.extend(_rename(r, item, edits, shape))
    for (i, call_id), changes in wanted.unpaired.items():
        obj = item(i)
        if obj is None:
            continue
        mine = edits.setdefault(i, Item())
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
            if obj is not None and not shape.results_in_calls:
                mine = edits.setdefault(i, Item())
                if shape.cut_result is not None:
                    shape.cut_result(obj, mine, call_id, len(changes))
                mine.remove = mine.remove or shape.cut_result is None or not shape.left(
                    obj, mine)
                fixes.append(Fix(changes[0].kind, changes[0].reason, index=i,
                                 action="removed", detail={"tool_call_id": call_id}))
        for i, change in [*wanted.empty.items(), *wanted.invalid.items()]:
            mine = edits.setdefault(i, Item())
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
        if mine.cut or mine.renamed:
            array.values[i] = _edit_item(array.values[i], item(i) or {}, mine)
        if mine.note is not None:
            array.insert_after(i if mine.note_after is None else mine.note_after, mine.note)
        if mine.remove:
            array.delete(i)
    return array.render(), sorted(fixes, key=lambda f: (f.index or 0, f.action == "inserted"))


def _rename(r: Reused, item: Callable[[int], dict[str, Any] | None], edits: dict[int, Item],
            shape: DocumentFormat) -> list[Fix]:
    """A call that reuses an earlier call's id, and the result answering it, get the new id
    the context chose, so both pairs stay."""
    call = item(r.call_at)
    places = shape.call_ids(call, r.old, r.call_nth) if call is not None else []
    if not places:
        return []
    edits.setdefault(r.call_at, Item()).renamed.extend((p, r.new) for p in places)
    detail = {"old": r.old, "new": r.new}
    fixes = [Fix(ChangeKind.DUPLICATE_ID_RENAMED, REUSED_REASON, index=r.call_at,
                 detail=detail)]
    answer = item(r.result_at) if r.result_at is not None else None
    places = shape.result_ids(answer, r.old, r.result_nth) if answer is not None else []
    if places and r.result_at is not None:
        edits.setdefault(r.result_at, Item()).renamed.extend((p, r.new) for p in places)
        fixes.append(Fix(ChangeKind.DUPLICATE_ID_RENAMED, "the result answers the renamed call",
                         index=r.result_at, detail=dict(detail)))
    return fixes


def _notes_after_results(items: list[Any], edits: dict[int, Item]) -> None:
    """A note goes after the message holding the results of its message's other calls, so
    those results still come right after their calls."""
    for i, mine in edits.items():
        nxt = items[i + 1] if mine.note is not None and i + 1 < len(items) else None
        if isinstance(nxt, dict) and not edits.get(i + 1, Item()).remove and any(
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


def _edit_item(text: bytes, obj: dict[str, Any], edits: Item) -> bytes:
    """The item's own JSON text with its renamed ids and the members its edits name taken
    out (a rename changes no index a cut names)."""
    for place, new in edits.renamed:
        text = spans.replace(text, place, new)
    prefix = _prefix(obj)
    for key, indexes in edits.cut.items():
        if key in edits.drop_keys:
            names = [k for k, _, _ in spans.members(text, prefix)]
            text = spans.delete(text, prefix, names.index(key))
            continue
        text = spans.without(text, [*prefix, key], indexes)
    return text
