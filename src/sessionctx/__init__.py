"""sessionctx: stored agent session records -> the context a model should see -> a request body."""

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
    "select_branch",
]

__version__ = "0.1.0"
