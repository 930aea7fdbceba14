"""sessionctx: stored agent session records -> the context a model should see -> a request body.

The names below are imported when first used, so a command pays only for what it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionctx.lazy import attributes

if TYPE_CHECKING:
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
    from sessionctx.inputs import read_session
    from sessionctx.providers.wire import RepairedRequest, repair_request
    from sessionctx.records import (
        Problem,
        ReadResult,
        Record,
        read_bytes,
        read_path,
        select_branch,
    )
    from sessionctx.store import open_store
    from sessionctx.writeback import repair

_HOMES = {
    "Change": "changes", "Source": "changes",
    "BuildOptions": "context", "Context": "context", "ContextBuilder": "context",
    "PendingCall": "context", "build_context": "context", "display_messages": "context",
    "SessionChanged": "errors", "SessionctxError": "errors",
    "read_session": "inputs",
    "Problem": "records", "ReadResult": "records", "Record": "records",
    "read_bytes": "records", "read_path": "records", "select_branch": "records",
    "open_store": "store",
    "RepairedRequest": "providers.wire", "repair_request": "providers.wire",
    "repair": "writeback",
}

__all__ = [
    "BuildOptions",
    "Change",
    "Context",
    "ContextBuilder",
    "PendingCall",
    "Problem",
    "ReadResult",
    "Record",
    "RepairedRequest",
    "SessionChanged",
    "SessionctxError",
    "Source",
    "build_context",
    "display_messages",
    "open_store",
    "read_bytes",
    "read_path",
    "read_session",
    "repair",
    "repair_request",
    "select_branch",
]

__version__ = "0.1.0"


__getattr__ = attributes(__name__, _HOMES, globals())
