"""What every line writer does the same way: unreadable lines out, blocks out of a line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from sessionctx.records import Problem
from sessionctx.writeback import spans
from sessionctx.writeback.edits import REMOVED_UNREADABLE, Fix, Lines
from sessionctx.writeback.wanted import Wanted

T = TypeVar("T")


def remove_unreadable(lines: Lines, problems: Sequence[Problem]) -> list[Fix]:
    """Take out every non-blank line that holds no JSON object; the backup keeps it."""
    said = {p.line: p.message for p in problems if p.line is not None}
    fixes = []
    last = len(lines)
    for n in lines.numbers():
        if lines.obj(n) is not None or lines.is_blank(n):
            continue
        torn = n == last and not lines.terminated
        reason = said.get(n) or ("a torn last line (a write cut off)" if torn
                                 else "the line holds no JSON object")
        lines.remove(n)
        fixes.append(Fix(REMOVED_UNREADABLE, f"unreadable line taken out: {reason}", line=n,
                         action="removed"))
    return fixes


def remove_result_lines(lines: Lines, wanted: Wanted) -> list[Fix]:
    """Take out the lines of orphan and duplicate results, where a result is a line alone."""
    fixes = []
    for (n, call_id), changes in wanted.results.items():
        lines.remove(n)
        fixes.append(Fix(changes[0].kind, changes[0].reason, line=n, action="removed",
                         detail={"tool_call_id": call_id}))
    return fixes


def last(items: Sequence[T], count: int) -> list[T]:
    """The last `count` items: pairing answers the earliest open call (or result) first, so
    those left unanswered are the last ones."""
    return list(items[len(items) - count:]) if count > 0 else []


def delete_members(lines: Lines, n: int, path: Sequence[str | int],
                   indexes: Sequence[int]) -> None:
    """Take the given members of the array at `path` out of line `n`, bytes around kept."""
    lines.put(n, spans.without(lines.text(n), path, indexes))


def dig(obj: Any, path: Sequence[str | int]) -> Any:
    for step in path:
        if isinstance(step, str) and isinstance(obj, dict):
            obj = obj.get(step)
        elif isinstance(step, int) and isinstance(obj, list) and 0 <= step < len(obj):
            obj = obj[step]
        else:
            return None
    return obj
