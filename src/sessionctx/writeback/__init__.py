"""Repair: write a broken session back in its own agent's format, so the agent can resume it.

`repair(path)` reads the session, finds what the context would have to drop (unanswered
calls, orphan and duplicate results, unreadable lines), takes exactly that out of the file in
the agent's terms and replaces the file atomically, after keeping the original as a backup.
Lines that need no repair are written back byte for byte; no result is ever made up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from sessionctx import limits
from sessionctx.context import PendingCall
from sessionctx.errors import SessionChanged
from sessionctx.formats.registry import BY_NAME
from sessionctx.formats.sqlite_db import is_sqlite
from sessionctx.live_writers import unfinished_tail
from sessionctx.replace import Fingerprint, fingerprint, replace
from sessionctx.writeback.edits import Fix, unified_diff
from sessionctx.writeback.plan import Plan, RepairError, plan_repair

__all__ = [
    "Fix",
    "Plan",
    "RepairError",
    "RepairResult",
    "SessionChanged",
    "plan_repair",
    "repair",
]


@dataclass
class RepairResult:
    """What a repair changed, whether it wrote the file, and where the original is kept."""

    path: str
    format: str
    fixes: list[Fix]
    written: bool
    backup: str | None
    pending_calls: list[PendingCall]
    remaining: list[str] = field(default_factory=list)
    note: str = ""  # why there is nothing to repair, when the format says so
    advice: str = ""  # what the format's agent does with a repaired file, when it matters
    before: bytes = field(default=b"", repr=False)
    after: bytes = field(default=b"", repr=False)
    late: str | None = None  # lines a writer appended to the original after the swap
    unfinished: str | None = None  # a last line still being written, left as it is

    @cached_property
    def diff(self) -> str:
        """The lines that change, as a unified diff: made when asked for, since on a large
        session it costs as much as a read."""
        return unified_diff(self.before, self.after, self.path) if self.after != self.before \
            else ""

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "format": self.format, "written": self.written,
                "backup": self.backup, "changes": [f.to_json() for f in self.fixes],
                "pending_calls": [p.to_json() for p in self.pending_calls],
                "remaining": self.remaining, **({"note": self.note} if self.note else {}),
                "advice": self.advice, "late": self.late, "unfinished": self.unfinished}


def repair(path: str, fmt: str = "auto", *, leaf: str | None = None, dry_run: bool = False,
           note_unpaired: bool = False, backup: str | bool = True,
           force: bool = False) -> RepairResult:
    """Repair the session file at `path` in place.

    `backup`: True keeps the original at `PATH.bak-<UTC timestamp>`, a string names the
    backup file, False keeps none. An existing file is never overwritten by a backup. Raises
    `SessionChanged` when the file changes between reading and replacing (nothing written),
    `LiveWriter` when another process holds it open for writing (unless `force`),
    `RepairError` when it cannot be read or repaired, `OSError` when it cannot be written.
    """
    raw, seen = read_session(path)
    start = -1 if is_sqlite(raw) else unfinished_tail(raw, seen[3])  # a store has no lines
    head, tail = (raw, b"") if start < 0 else (raw[:start], raw[start:])
    if start == 0:
        raise RepairError(f"{path}: its only line has no newline yet (its agent may still be "
                          "writing it); nothing to repair")
    plan = plan_repair(head, path, fmt, leaf=leaf, note_unpaired=note_unpaired)
    advice = BY_NAME[plan.format].after_repair if plan.changed else ""
    out = RepairResult(path, plan.format, plan.fixes, False, None, plan.pending_calls,
                       plan.remaining, note=plan.note, advice=advice, before=raw,
                       after=plan.after + tail)
    if tail:
        line = head.count(b"\n") + 1
        out.unfinished = (f"line {line} has no newline yet and was written just now: left as "
                          "it is (its agent may still be writing it)")
    if dry_run or not plan.changed:
        return out
    done = replace(path, raw, seen, out.after, backup=backup, force=force)
    out.written, out.backup, out.late = True, done.backup, done.late_note(path)
    return out


def read_session(path: str) -> tuple[bytes, Fingerprint]:
    """The bytes of the session file and what it was when read."""
    try:
        raw, info = limits.read_file(path)
    except limits.Unreadable as exc:
        raise RepairError(str(exc)) from None
    except OSError as exc:
        raise RepairError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    return raw, fingerprint(info)
