"""Repair: write a broken session back in its own agent's format, so the agent can resume it.

`repair(path)` reads the session, finds what the context would have to drop (unanswered
calls, orphan and duplicate results, unreadable lines), takes exactly that out of the file in
the agent's terms and replaces the file atomically, after keeping the original as a backup.
Lines that need no repair are written back byte for byte; no result is ever made up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from sessionctx.context import PendingCall
from sessionctx.errors import SessionChanged
from sessionctx.files import create_new, write_atomically
from sessionctx.formats.registry import BY_NAME
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
    advice: str = ""  # what the format's agent does with a repaired file, when it matters
    before: bytes = field(default=b"", repr=False)
    after: bytes = field(default=b"", repr=False)

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
                "remaining": self.remaining, "advice": self.advice}


def default_backup(path: str, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{path}.bak-{stamp}"


def repair(path: str, fmt: str = "auto", *, leaf: str | None = None, dry_run: bool = False,
           note_unpaired: bool = False, backup: str | bool = True) -> RepairResult:
    """Repair the session file at `path` in place.

    `backup`: True keeps the original at `PATH.bak-<UTC timestamp>`, a string names the
    backup file, False keeps none. An existing file is never overwritten by a backup. Raises
    `SessionChanged` when the file changes between reading and replacing (nothing written),
    `RepairError` when it cannot be read or repaired, `OSError` when it cannot be written.
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise RepairError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    plan = plan_repair(raw, path, fmt, leaf=leaf, note_unpaired=note_unpaired)
    advice = BY_NAME[plan.format].after_repair if plan.changed else ""
    out = RepairResult(path, plan.format, plan.fixes, False, None, plan.pending_calls,
                       plan.remaining, advice, plan.before, plan.after)
    if dry_run or not plan.changed:
        return out

    def unchanged() -> None:
        try:
            with open(path, "rb") as f:
                now = f.read()
        except OSError:
            now = b""
        if now != raw:
            raise SessionChanged(f"{path} changed while it was being repaired (is its agent "
                                 "still running?); nothing was written")

    unchanged()
    if backup is not False:
        out.backup = _keep(path, raw, backup if isinstance(backup, str) else None)
    try:
        write_atomically(path, plan.after, check=unchanged)
    except SessionChanged:
        if out.backup is not None and not isinstance(backup, str):
            os.unlink(out.backup)  # it would only copy a state the file has already left
            out.backup = None
        raise
    out.written = True
    return out


def _keep(path: str, raw: bytes, named: str | None) -> str:
    """Write the original to the backup file (owner-only), never over an existing file."""
    if named is not None:
        create_new(named, raw)
        return named
    base = default_backup(path)
    for attempt in range(1000):
        candidate = base if attempt == 0 else f"{base}-{attempt}"
        try:
            create_new(candidate, raw)
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"no free backup name beside {path}")
