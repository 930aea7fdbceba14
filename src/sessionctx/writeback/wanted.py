"""What a repair has to change, read off the context's change log.

The context already decided, by the one pairing rule, which calls have no result and which
results answer nothing; a writer only has to find those things in its own format. Changes are
grouped by the line that holds them and the call id, with how many of each there are: pairing
answers the earliest open call first, so the ones left over are always the last ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import NamedTuple

from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.context import Context
from sessionctx.messages import result_id
from sessionctx.pairing import context_ids, renamed_id, repeated_calls

Key = tuple[int, "str | None"]  # (line or item of the original, call id)
REUSED_REASON = "tool_use ids must be unique: an earlier call already has this id"


class Reused(NamedTuple):
    """A call that reuses an earlier call's id, to be renamed with the result answering it:
    where each is (line or item), which of the blocks with that id there it is (the
    `nth`), and the id both get. `call_item`: which message of its line holds the call, for
    a line that holds many (a Gemini CLI `$set` of the conversation), else None."""

    call_at: int
    call_nth: int
    result_at: int | None
    result_nth: int
    old: str
    new: str
    call_item: int | None = None


@dataclass(slots=True)
class Wanted:
    unpaired: dict[Key, list[Change]] = field(default_factory=dict)
    results: dict[Key, list[Change]] = field(default_factory=dict)  # orphans and duplicates
    empty: dict[int, Change] = field(default_factory=dict)  # messages with nothing in them
    invalid: dict[int, Change] = field(default_factory=dict)
    unplaced: list[Change] = field(default_factory=list)  # inside a checkpoint, or nowhere
    reused: list[Reused] = field(default_factory=list)


def _where(change: Change, by_line: bool) -> int | None:
    src = change.record
    if src is None or src.part is not None or src.seq is not None:
        return None
    return src.line if by_line else src.index


def wanted(ctx: Context, by_line: bool = True, raw: bytes = b"") -> Wanted:
    """What the context drops, and the calls to rename; `raw`: the file, whose every string
    (on any branch or sidechain) a new id also avoids."""
    out = Wanted()
    lost_at: set[int] = set()
    for change in ctx.changes:
        kind = change.kind
        if kind not in (ChangeKind.DROPPED_UNPAIRED_CALL, ChangeKind.DROPPED_ORPHAN_RESULT,
                        ChangeKind.DROPPED_DUPLICATE_RESULT, ChangeKind.DROPPED_EMPTY_MESSAGE,
                        ChangeKind.SKIPPED_INVALID):
            continue
        where = _where(change, by_line)
        if where is None:
            out.unplaced.append(change)
            continue
        call_id = change.detail.get("tool_call_id")
        call_id = call_id if isinstance(call_id, str) else None
        if kind == ChangeKind.DROPPED_UNPAIRED_CALL:
            out.unpaired.setdefault((where, call_id), []).append(change)
            lost_at.add(where)
        elif kind == ChangeKind.SKIPPED_INVALID:
            out.invalid[where] = change
        elif kind == ChangeKind.DROPPED_EMPTY_MESSAGE:
            out.empty[where] = change
        else:
            out.results.setdefault((where, call_id), []).append(change)
    for where in lost_at:  # emptied by losing its calls: the writer sees that for itself
        out.empty.pop(where, None)
    out.reused = reused(ctx, by_line, raw)
    return out


def _at(source: Source, by_line: bool) -> int | None:
    if source.part is not None or source.seq is not None:
        return None
    return source.line if by_line else source.index


def reused(ctx: Context, by_line: bool = True, raw: bytes = b"") -> list[Reused]:
    """The calls of the context that reuse an earlier call's id, each with a new id: the old
    one and `_2`, `_3`... (as `build` names it), distinct from every id of the context and
    from every JSON string of `raw`."""
    found = repeated_calls(ctx.messages)
    if not found:
        return []
    taken = context_ids(ctx.messages)

    def refused(new: str) -> bool:
        return new in taken or json.dumps(new).encode() in raw

    out: list[Reused] = []
    for r in found:
        call_src = ctx.sources[r.call_slot]
        call_at = _at(call_src, by_line)
        if call_at is None:
            continue
        result_at, result_nth = None, 0
        if r.result_slot is not None:
            src = ctx.sources[r.result_slot]
            result_at = _at(src, by_line)
            if result_at is None:
                continue
            s = r.result_slot - 1  # the results of one line or item are neighbours
            while s >= 0 and _at(ctx.sources[s], by_line) == result_at:
                result_nth += result_id(ctx.messages[s]) == r.call_id
                s -= 1
        new = renamed_id(r.call_id, refused)
        taken.add(new)
        out.append(Reused(call_at, r.call_nth, result_at, result_nth, r.call_id, new,
                          call_src.index if by_line else None))
    return out
