"""The report's data: every stored record beside what a person sees and what the model gets.

Pure: records, problems and a built context in; plain JSON-able rows out. Values are the stored
objects themselves, never copies, so the page embeds the session's text once; a context message
that differs from its record is given as the record's blocks marked kept, removed or new.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.context import Context, display_messages, is_displayed
from sessionctx.explain import QUIET_CHANGES, QUIET_KINDS
from sessionctx.messages import Message
from sessionctx.records import (
    CHECKPOINT,
    EXTENSION_MESSAGE,
    MESSAGE,
    Problem,
    Record,
    message_view,
    owner_keys,
)

Key = tuple[int | None, int | None, int | None]  # Source.key

_NO_KEY: Key = (None, None, None)  # a record with no line, index or seq

# How a context message relates to its record, as the page reads it.
SAME = "="  # the record's own message, unchanged


@dataclass(slots=True)
class Page:
    """Everything the page shows, in the order it shows it."""

    meta: dict[str, Any]
    rows: list[dict[str, Any]]
    changes: Sequence[dict[str, Any]]
    pending: list[dict[str, Any]]
    turns: list[dict[str, Any]] = field(default_factory=list)


def stored_of(data: dict[str, Any], view: dict[str, Any]) -> tuple[Any, Any]:
    """What was stored for a record, and how the page finds the record's own fields in it.

    An imported record keeps its source object(s) under `raw`: that is what the agent wrote,
    and its converted fields go beside it. A native record is itself what was stored; a pi
    entry wraps its message under `message`.
    """
    if "importedFrom" in data and "raw" in data:
        return data["raw"], view
    return data, SAME if view is data else "message"


def page_model(records: Sequence[Record], ctx: Context, *, problems: Iterable[Problem] = (),
               off_branch: Iterable[Record] = (), meta: Mapping[str, Any] | None = None
               ) -> Page:
    """The rows of the page: one per stored record (and per unreadable line), in file order."""
    changes = ctx.changes
    # which record holds a line: only a record gathered from several lines makes it another
    # record's (a file of tiny records would otherwise map each key to itself)
    owner = owner_keys(records) if any(r.source.block_lines for r in records) else {}
    by_key: dict[Key, list[int]] = {}
    for i, change in enumerate(changes):
        if change.record is not None:
            k = change.record.key()
            by_key.setdefault(owner.get(k, k), []).append(i)
    to_context: dict[Key, list[int]] = {}
    for j, source in enumerate(ctx.sources):
        to_context.setdefault(source.key(), []).append(j)
    added = {c.message_index for c in changes
             if c.kind == ChangeKind.INTERRUPTED_NOTE_ADDED and c.message_index is not None}

    rows: list[dict[str, Any]] = []
    row_of: dict[Key, int] = {}
    messages = ctx.messages
    empty: list[int] = []
    for item in _in_file_order(records, off_branch, problems):
        if isinstance(item, Problem):
            rows.append({"s": f"line {item.line}" if item.line is not None else "input",
                         "k": "unreadable", "r": None, "sh": 0, "st": None, "vw": None,
                         "cx": [], "cs": [], "why": item.message, "pb": 1})
            continue
        src = item.source
        k = (src.line, src.index, src.seq)
        if k in row_of and k != _NO_KEY:
            continue  # a stored record the reader split (a message per result): one row holds
            # it whole, with every context message it became
        row_of[k] = len(rows)
        targets = to_context.get(k, empty)
        # taken out as its one row takes it, so the key is held once (records with no key
        # share theirs)
        mine = by_key.pop(k, empty) if k != _NO_KEY else by_key.get(k, empty)
        if item.kind == MESSAGE and not mine and len(targets) == 1:
            data = item.data
            view = message_view(data)
            if messages[targets[0]] is view:
                # the common row: a message that reaches the model as it was stored
                role = view.get("role")
                stored, view_ref = stored_of(data, view)
                rows.append({"s": src.span_label(), "k": MESSAGE,
                             "r": role if isinstance(role, str) else None, "sh": 1,
                             "st": stored, "vw": view_ref, "cs": mine,
                             "cx": [{"j": targets[0], "m": SAME}]})
                continue
        rows.append(_row(item, ctx, targets, mine, changes, added))

    pending = [{"id": p.id, "name": p.name, "arguments": p.arguments,
                "s": p.record.label(), "row": _row_of(p.record, row_of, owner),
                "by": p.written_by} for p in ctx.pending_calls]
    for p in pending:  # a record holding a call whose outcome is unknown is a problem too
        if p["row"] is not None:
            rows[p["row"]]["pb"] = 1
    return Page(meta=dict(meta or {}), rows=rows, changes=PageChanges(changes, row_of, owner),
                pending=pending)


class PageChanges(Sequence[dict[str, Any]]):
    """The page's changes, each made only when it is read: the page writes them a batch at a
    time, so a log of a change per record is never held as a dict per change."""

    def __init__(self, changes: Sequence[Change], row_of: Mapping[Key, int],
                 owner: Mapping[Key, Key]) -> None:
        self._changes = changes
        self._row_of = row_of
        self._owner = owner

    def __len__(self) -> int:
        return len(self._changes)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [_change(c, self._row_of, self._owner) for c in self._changes[index]]
        return _change(self._changes[index], self._row_of, self._owner)


def _row_of(src: Source, row_of: Mapping[Key, int], owner: Mapping[Key, Key]) -> int | None:
    """The row of the record that holds what `src` names."""
    k = src.key()
    return row_of.get(owner.get(k, k))


def _in_file_order(records: Sequence[Record], off_branch: Iterable[Record],
                   problems: Iterable[Problem]) -> Iterable[Record | Problem]:
    """Records, entries off the selected branch and unreadable lines, as the file had them."""
    others: list[Record | Problem] = [*off_branch, *problems]
    if not others:
        return records
    entries: list[tuple[int, int, Record | Problem]] = []
    for order, item in enumerate([*records, *others]):
        where = item.source.position() if isinstance(item, Record) else item.line or 0
        entries.append((where, order, item))
    entries.sort(key=lambda e: (e[0], e[1]))
    return [item for _, _, item in entries]


def _change(change: Change, row_of: Mapping[Key, int], owner: Mapping[Key, Key]
            ) -> dict[str, Any]:
    src = change.record
    out: dict[str, Any] = {"kind": change.kind, "reason": change.reason,
                           "s": src.label() if src is not None else None,
                           "row": _row_of(src, row_of, owner) if src is not None else None,
                           "j": change.message_index, "repair": change.is_repair,
                           "quiet": change.kind in QUIET_CHANGES}
    if change.detail:
        out["detail"] = change.detail
    return out


NO_CONTEXT: list[dict[str, Any]] = []
"""The `cx` of every row that reaches the model in no message: one empty list shared, not one
per row (a file of skipped records makes a row per record). Nothing modifies a row's `cx`."""


def _row(record: Record, ctx: Context, targets: list[int], mine: list[int],
         changes: Sequence[Change], added: set[int]) -> dict[str, Any]:
    view = record.view
    stored, view_ref = stored_of(record.data, view)
    role = view.get("role")
    row: dict[str, Any] = {
        "s": record.source.span_label(), "k": record.kind,
        "r": role if isinstance(role, str) else None, "sh": int(is_displayed(record)),
        "st": stored, "vw": view_ref, "cs": mine,
        "cx": [_context_entry(record, ctx, j, changes, mine, j in added) for j in targets]
        if targets else NO_CONTEXT}
    if any(changes[i].is_repair for i in mine):
        row["pb"] = 1  # the page lists it first
    elif record.kind in QUIET_KINDS and not targets and all(
            changes[i].kind in QUIET_CHANGES for i in mine):
        row["q"] = 1  # bookkeeping that never reaches the model: folded with its neighbours
    if record.kind == EXTENSION_MESSAGE and row["sh"]:
        row["dx"] = display_messages([record])[0]
    if record.problem is not None:
        row["why"] = record.problem
    if record.kind == CHECKPOINT:
        row["cp"] = _checkpoint_summary(view)
    return row


def _context_entry(record: Record, ctx: Context, j: int, changes: Sequence[Change],
                   mine: list[int], is_note: bool) -> dict[str, Any]:
    """How context message j came from this record: as it is, or its blocks diffed."""
    message = ctx.messages[j]
    part = ctx.sources[j].part
    base: Message | None
    if part is not None:
        msgs = record.view.get("messages")
        base = msgs[part] if isinstance(msgs, list) and part < len(msgs) else None
        ref: Any = {"p": part}
    else:
        base = record.view if record.kind == MESSAGE else None
        ref = SAME
    if base is not None and message is base:
        return {"j": j, "m": ref}
    if is_note or base is None or message.get("role") != base.get("role"):
        return {"j": j, "new": message}
    out: dict[str, Any] = {"j": j, "base": ref, "role": message.get("role")}
    why = [changes[i] for i in mine]
    for name in ("content", "tool_calls"):
        before, after = base.get(name), message.get(name)
        if before is after:
            continue
        if isinstance(before, list) and isinstance(after, list):
            out[name] = diff_blocks(before, after, why)
        else:
            out[name] = [["n", after]]
    return out


def diff_blocks(before: list[Any], after: list[Any], why: Sequence[Change]) -> list[list[Any]]:
    """`after` read against `before`: ["k", i] kept, ["x", i, reason] removed, ["r", i, block,
    reason] replaced in place, ["n", block] new. Blocks are compared by identity, since a
    changed message keeps the very blocks it did not change."""
    out: list[list[Any]] = []
    at = 0
    removals = _Removals(why)
    index = {id(b): i for i, b in enumerate(before)}
    kept = {id(b) for b in after}
    for block in after:
        k = index.get(id(block))
        if k is None and not _is_image(block):  # a note in place of an image?
            k = next((m for m in range(at, len(before))
                      if _is_image(before[m]) and id(before[m]) not in kept), None)
            replaced = k is not None
        else:
            replaced = False
        if k is None or k < at:
            out.append(["n", block])
            continue
        out.extend(["x", i, removals.of(before[i])] for i in range(at, k))
        out.append(["r", k, block, _why_kind(why, ChangeKind.SCREENSHOT_OMITTED)] if replaced
                   else ["k", k])
        at = k + 1
    out.extend(["x", i, removals.of(before[i])] for i in range(at, len(before)))
    return out


def _is_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "image"


def _why_kind(why: Sequence[Change], kind: str) -> str:
    for change in why:
        if change.kind == kind:
            return f"{change.kind}: {change.reason}"
    return kind


class _Removals:
    """Why a block was removed: its call's change, else the first repair of the record. Looked
    up by call id, so a message that lost thousands of calls is not read through per block."""

    def __init__(self, why: Sequence[Change]) -> None:
        self.by_call: dict[Any, str] = {}
        self.first_repair = "removed"
        for change in reversed(why):  # the first change of each call id wins
            text = f"{change.kind}: {change.reason}"
            if change.kind == ChangeKind.DROPPED_UNPAIRED_CALL:
                cid = change.detail.get("tool_call_id")
                if isinstance(cid, (str, int, float)):
                    self.by_call[cid] = text
            if change.is_repair:
                self.first_repair = text

    def of(self, block: Any) -> str:
        if isinstance(block, dict):
            cid = block.get("id") if isinstance(block.get("id"), str) else block.get(
                "toolCallId")
            if isinstance(cid, (str, int, float)) and cid in self.by_call:
                return self.by_call[cid]
        return self.first_repair


def _checkpoint_summary(view: Mapping[str, Any]) -> dict[str, Any]:
    summary = view.get("summary")
    text = summary if isinstance(summary, str) else ""
    messages = view.get("messages")
    return {"at": view.get("at"), "first": next((ln for ln in text.splitlines() if ln.strip()),
                                                ""),
            "messages": len(messages) if isinstance(messages, list) else 0,
            "before": view.get("tokensBefore"), "after": view.get("tokensAfter"),
            "by": view.get("summaryModelRef")}


def header(records: Sequence[Record], ctx: Context, page: Page, *, label: str,
           fmt: str | None) -> dict[str, Any]:
    """The figures at the top of the page."""
    from sessionctx.compaction.tokens import estimate_message

    tokens: dict[int, int] = {}
    for r in records:  # what the records hold: messages, and the messages a checkpoint gives
        if r.kind == MESSAGE:
            view = message_view(r.data)
            tokens[id(view)] = estimate_message(view)
        elif r.kind == CHECKPOINT and r.problem is None:
            for m in r.view["messages"]:
                tokens[id(m)] = estimate_message(m)
    before = sum(tokens.values())
    after = 0
    for m in ctx.messages:  # most are the stored messages themselves, counted above
        known = tokens.get(id(m))
        after += known if known is not None else estimate_message(m)
    kinds = Counter(c.kind for c in ctx.changes)
    compactions = [{"row": i, "s": row["s"], **row["cp"],
                    "applied": any(ctx.changes[c].kind == ChangeKind.CHECKPOINT_APPLIED
                                   for c in row["cs"])}
                   for i, row in enumerate(page.rows) if "cp" in row]
    roles = sorted({r for row in page.rows if isinstance(r := row["r"], str)})
    return {"label": label, "format": fmt, "records": len(records), "roles": roles,
            "messages": len(ctx.messages),
            "tokens_before": before, "tokens_after": after,
            "kinds": dict(sorted(kinds.items())),
            "repairs": sorted({c.kind for c in ctx.changes if c.is_repair}),
            "problem_rows": [i for i, row in enumerate(page.rows) if row.get("pb")],
            "problems": sum(1 for c in ctx.changes if c.is_repair) + sum(
                1 for row in page.rows if row["k"] == "unreadable"),
            "compactions": compactions, "pending": len(ctx.pending_calls)}

