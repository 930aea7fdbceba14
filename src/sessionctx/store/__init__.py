"""Session stores: SQLite (default), JSONL files, PostgreSQL."""

from sessionctx.store.base import (
    NotASessionStore,
    ReadOnlyStore,
    SchemaTooNew,
    SessionChanged,
    SessionInfo,
    Store,
    StoreError,
    StoreLocked,
)
from sessionctx.store.open import open_store

__all__ = [
    "NotASessionStore",
    "ReadOnlyStore",
    "SchemaTooNew",
    "SessionChanged",
    "SessionInfo",
    "Store",
    "StoreError",
    "StoreLocked",
    "open_store",
]
