"""Responses items written back repaired, one item a line (Codex rollouts, Responses JSONL) or
as the members of a JSON list (Responses item lists and request logs).

The item is the unit: a call (of any kind) with no output after it leaves with its item; so
does an output that answers no earlier call, or a second one. Reasoning that this leaves with
no item of the model after it leaves too, as the API refuses reasoning without its following
item. A note on the interrupted calls goes after the turn that lost them.
"""

from __future__ import annotations

import bisect
from datetime import UTC, datetime
from typing import Any

from sessionctx.changes import Change, ChangeKind
from sessionctx.formats.codex.lines import item_of, wrap
from sessionctx.formats.openai_responses.items import (
    CALLS,
    joins_turn,
    lone_reasoning,
    native_call_id,
)
from sessionctx.formats.openai_responses.read import is_item
from sessionctx.pairing import interrupted_note
from sessionctx.records import ReadResult
from sessionctx.writeback import spans
from sessionctx.writeback.common import last, remove_unreadable
from sessionctx.writeback.edits import REMOVED_EMPTY, REMOVED_INVALID, Fix, Lines
from sessionctx.writeback.notes import NoteMaker
from sessionctx.writeback.wanted import REUSED_REASON, Reused, Wanted

Item = dict[str, Any]
Numbered = list[tuple[int, "Item | None"]]  # (line or index, the item there or None)
_NOTE: Item = {"type": "message", "role": "user", "content": []}  # where a note will stand
KEYS = None  # items are in file order, linked by nothing


def note(anchor: Item, parent: str | None, text: str) -> tuple[Item, str | None]:
    """A user message item after `anchor`, wrapped as its line is (a Codex rollout's
    `response_item`, or bare)."""
    item = {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return wrap(item, anchor, stamp), None


class _Turns:
    """Where the turn that goes on from each item ends, and where each call id is called:
    worked out in one pass, so a turn of thousands of calls is not read once per call."""

    def __init__(self, numbered: Numbered) -> None:
        self.numbered = numbered
        count = len(numbered)
        self.order = {n: k for k, (n, _) in enumerate(numbered)}
        # the first item after position k that starts a new turn; lines that hold no item
        # (rollout bookkeeping) sit inside turns
        self.stop = [count] * count
        following = count
        for k in range(count - 1, -1, -1):
            self.stop[k] = following
            item = numbered[k][1]
            if item is not None and not joins_turn(item):
                following = k
        self.last_item = [-1] * count  # the last position at or before k holding an item
        self.calls: dict[str, list[int]] = {}  # call id -> positions of its call items
        latest = -1
        for k, (_, item) in enumerate(numbered):
            if item is not None:
                latest = k
                if item.get("type") in CALLS:
                    self.calls.setdefault(native_call_id(item), []).append(k)
            self.last_item[k] = latest

    def item(self, n: int) -> Item | None:
        """The item at line or index `n`, if it holds one."""
        k = self.order.get(n)
        return self.numbered[k][1] if k is not None else None

    def calls_after(self, n: int, call_id: str | None) -> tuple[list[int], int]:
        """The lines of the calls of `call_id` from line `n` to the end of its turn, and the
        turn's last line holding an item (`n` when there is none)."""
        start = self.order.get(n, len(self.numbered))
        if start >= len(self.numbered):
            return [], n
        stop = self.stop[start]
        at = self.calls.get(call_id, []) if call_id is not None else []
        held = [self.numbered[k][0] for k in at[bisect.bisect_left(at, start):
                                                bisect.bisect_left(at, stop)]]
        last_item = self.last_item[stop - 1]
        return held, self.numbered[last_item][0] if last_item >= start else n


class _Edits:
    """Which items go and which turns get a note, by line or index (`at`)."""

    def __init__(self, numbered: Numbered, at: str) -> None:
        self.numbered = numbered
        self.at = at
        self.removed: set[int] = set()
        self.fixes: list[Fix] = []
        self.notes: dict[int, list[Change]] = {}  # the last item of a turn -> its lost calls

    def remove(self, n: int, kind: str, reason: str, **detail: Any) -> None:
        self.removed.add(n)
        self.fixes.append(Fix(kind, reason, action="removed", detail=detail, **{self.at: n}))

    def plan(self, wanted: Wanted, with_notes: bool) -> None:
        lone_before = set(self._lone())
        turns = _Turns(self.numbered) if wanted.unpaired else None  # read only when needed
        for (n, call_id), changes in wanted.unpaired.items():
            held, end = turns.calls_after(n, call_id) if turns is not None else ([], n)
            gone = last(held, len(changes))
            for m in gone:
                self.remove(m, changes[0].kind, changes[0].reason, tool_call_id=call_id,
                            name=changes[0].detail.get("name"))
            if with_notes and gone:
                self.notes.setdefault(end, []).extend(changes)
        for (n, call_id), changes in wanted.results.items():
            self.remove(n, changes[0].kind, changes[0].reason, tool_call_id=call_id)
        for m in self._lone():
            if m not in lone_before:
                self.remove(m, ChangeKind.DROPPED_LONE_REASONING, "reasoning left with no item "
                            "of the model after it: the API refuses it")

    def _lone(self) -> list[int]:
        """The reasoning items no kept model item follows, notes counted as user items."""
        kept: list[tuple[int | None, Item]] = []
        for n, item in self.numbered:
            if item is not None and n not in self.removed:
                kept.append((n, item))
            if n in self.notes:
                kept.append((None, _NOTE))
        lone = lone_reasoning([item for _, item in kept], [True] * len(kept))
        return [m for i in lone if (m := kept[i][0]) is not None]


def plan(lines: Lines, result: ReadResult, wanted: Wanted, notes: NoteMaker | None
         ) -> list[Fix]:
    """The line writer: items one a line."""
    fixes = remove_unreadable(lines, result.problems)
    if wanted.reused:
        numbered = [(n, item_of(lines.obj(n)) if n not in lines.removed else None)
                    for n in lines.numbers()]
        fixes.extend(_rename_reused(lines, _Turns(numbered), wanted.reused))
    edits = _Edits([(n, item_of(lines.obj(n)) if n not in lines.removed else None)
                    for n in lines.numbers()], "line")
    edits.plan(wanted, notes is not None)
    for n in edits.removed:
        lines.remove(n)
    fixes.extend(edits.fixes)
    if notes is not None:
        for end, changes in edits.notes.items():
            notes.after(end, changes)
        fixes.extend(notes.write(lines, None))
    return fixes


def _rename_reused(lines: Lines, turns: _Turns, reused: list[Reused]) -> list[Fix]:
    """The line writer's renames: each item's line gets its new `call_id`."""
    fixes = []
    for n, new, why in _renames(turns, reused):
        obj = lines.obj(n)
        if obj is None:
            continue
        lines.put(n, spans.replace(lines.text(n), [*_where(obj), "call_id"], new.new))
        fixes.append(Fix(ChangeKind.DUPLICATE_ID_RENAMED, why, line=n,
                         detail={"old": new.old, "new": new.new}))
    return fixes


def _renames(turns: _Turns, reused: list[Reused]) -> list[tuple[int, Reused, str]]:
    """Where a call item whose `call_id` an earlier call already used, and the output
    answering it, get the new `call_id`, so both pairs stay: (line or index, the rename,
    why). Left alone: a call whose item id differs from its call_id (its id is
    '<call_id>|<item id>' to the reader) or equals it."""
    out = []
    for r in reused:
        held, _ = turns.calls_after(r.call_at, r.old)
        if "|" in r.old or r.call_nth >= len(held):
            continue
        m = held[r.call_nth]
        item = turns.item(m)
        if item is None or item.get("call_id") != r.old or "id" in item:
            continue
        out.append((m, r, REUSED_REASON))
        output = turns.item(r.result_at) if r.result_at is not None else None
        if output is not None and r.result_at is not None and output.get("call_id") == r.old:
            out.append((r.result_at, r, "the output answers the renamed call"))
    return out


def _where(obj: Item) -> list[str | int]:
    """Where the item sits in its line: a rollout's `payload`, or the line itself."""
    return ["payload"] if obj.get("type") == "response_item" else []


def plan_document(raw: bytes, document: Any, wanted: Wanted, note_unpaired: bool
                  ) -> tuple[bytes, list[Fix]]:
    """The document writer: the items of a list, or of a request's `input`; the bytes of
    every item no fix names, and of everything around the list, are kept."""
    where: list[str | int] = [] if isinstance(document, list) else ["input"]
    items = document if isinstance(document, list) else document.get("input")
    if not isinstance(items, list):
        return raw, []  # a request whose input is one string: nothing to take out
    numbered: Numbered = [(i, item if is_item(item) else None) for i, item in enumerate(items)]
    renames = _renames(_Turns(numbered), wanted.reused) if wanted.reused else []
    edits = _Edits(numbered, "index")
    edits.plan(wanted, note_unpaired)
    for i, change in [*wanted.empty.items(), *wanted.invalid.items()]:
        if i not in edits.removed and 0 <= i < len(items):
            kind = REMOVED_INVALID if i in wanted.invalid else REMOVED_EMPTY
            edits.remove(i, kind, change.reason)
    fixes = edits.fixes + [Fix(ChangeKind.DUPLICATE_ID_RENAMED, why, index=i,
                               detail={"old": r.old, "new": r.new}) for i, r, why in renames]
    array = spans.ArrayText(raw, where)
    for i, r, _ in renames:
        array.values[i] = spans.replace(array.values[i], ["call_id"], r.new)
    for i in sorted(edits.removed | set(edits.notes), reverse=True):
        if i in edits.notes:
            lost = edits.notes[i]
            array.insert_after(i, {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text":
                    interrupted_note([(c.detail.get("name"), c.detail.get("tool_call_id"))
                                      for c in lost])}]})
            fixes.append(Fix(ChangeKind.INTERRUPTED_NOTE_ADDED, "told the model the call was "
                             "interrupted, outcome unknown", index=i, action="inserted",
                             detail={"tool_call_ids": [c.detail.get("tool_call_id")
                                                       for c in lost]}))
        if i in edits.removed:
            array.delete(i)
    return array.render(), sorted(fixes, key=lambda f: (f.index or 0, f.action == "inserted"))
