"""sessionctx: stored agent session records -> the context a model should see -> a request body."""

from typing import TYPE_CHECKING

from sessionctx.changes import Change, Source
from sessionctx.context import (
    BuildOptions,
    Context,
    ContextBuilder,
    PendingCall,
    build_context,
    display_messages,
)
from sessionctx.errors import SessionChanged, SessionctxError
from sessionctx.records import Problem, ReadResult, Record, read_bytes, read_path, select_branch
from sessionctx.store import open_store

if TYPE_CHECKING:
    from sessionctx.writeback import RepairResult

__all__ = [
    "BuildOptions",
    "Change",
    "Context",
    "ContextBuilder",
    "PendingCall",
    "Problem",
    "ReadResult",
    "Record",
    "SessionChanged",
    "SessionctxError",
    "Source",
    "build_context",
    "display_messages",
    "open_store",
    "read_bytes",
    "read_path",
    "repair",
    "select_branch",
]

__version__ = "0.1.0"


def repair(path: str, fmt: str = "auto", *, leaf: str | None = None, dry_run: bool = False,
           note_unpaired: bool = False, backup: str | bool = True) -> "RepairResult":
    """Repair the session file at `path` in place, in its own format, so its agent can resume
    it; the original is kept as `PATH.bak-<UTC timestamp>` unless `backup` says otherwise.
    See `sessionctx.writeback.repair` (imported on first use, so `import sessionctx` stays
    light)."""
    from sessionctx.writeback import repair as write_back

    return write_back(path, fmt, leaf=leaf, dry_run=dry_run, note_unpaired=note_unpaired,
                      backup=backup)
