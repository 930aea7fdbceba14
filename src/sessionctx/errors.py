"""The root of every error sessionctx raises, so a caller can catch the library's failures
apart from its own bugs; each part's errors (store, input, compaction) derive from it."""

from __future__ import annotations


class SessionctxError(Exception):
    """sessionctx could not do what was asked; the message says why (and what to do)."""


class InputError(SessionctxError):
    """A session could not be read at all: no such file or session, no known format."""
