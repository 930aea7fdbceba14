"""What a repair has to change, read off the context's change log.

The context already decided, by the one pairing rule, which calls have no result and which
results answer nothing; a writer only has to find those things in its own format. Changes are
grouped by the line that holds them and the call id, with how many of each there are: pairing
answers the earliest open call first, so the ones left over are always the last ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sessionctx.changes import Change, ChangeKind
from sessionctx.context import Context

Key = tuple[int, "str | None"]  # (line or item of the original, call id)


@dataclass(slots=True)
class Wanted:
    unpaired: dict[Key, list[Change]] = field(default_factory=dict)
    results: dict[Key, list[Change]] = field(default_factory=dict)  # orphans and duplicates
    empty: dict[int, Change] = field(default_factory=dict)  # messages with nothing in them
    invalid: dict[int, Change] = field(default_factory=dict)
    unplaced: list[Change] = field(default_factory=list)  # inside a checkpoint, or nowhere


def _where(change: Change, by_line: bool) -> int | None:
    src = change.record
    if src is None or src.part is not None or src.seq is not None:
        return None
    return src.line if by_line else src.index


def wanted(ctx: Context, by_line: bool = True) -> Wanted:
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
    return out
