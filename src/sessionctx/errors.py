"""The errors sessionctx raises, under one root, so a caller can tell the library's refusals
from its own bugs: `except SessionctxError` catches every one of them.

    SessionctxError
      BadArgument       a value the library does not accept (also a ValueError): an unknown
                        provider, format or summarizer, budget numbers out of range
      InputError        a session could not be read at all (no such file or session, no format)
        NoSuchEntry     no entry of a tree-shaped session has the id asked for (also a KeyError)
      SessionChanged    the session moved after it was read; nothing was written
      StoreError        a store could not do what was asked (store.base: NotASessionStore,
                        SchemaTooNew, StoreLocked, ReadOnlyStore)
      CompactionError   no checkpoint was made; the session is unchanged (AuditFailed,
                        NothingToCompact, SummarizerError, TokenizerUnavailable)
      TargetError       a compaction target cannot be read or written (compaction.target)

The messages say what is wrong and, where there is one, what to do.
"""

from __future__ import annotations


class SessionctxError(Exception):
    """sessionctx could not do what was asked; the message says why."""


class BadArgument(SessionctxError, ValueError):
    """A value the library does not accept; the message names the ones it does."""


class InputError(SessionctxError):
    """A session could not be read at all: no such file or session, no known format."""


class NoSuchEntry(InputError, KeyError):
    """No entry of a tree-shaped session has the id asked for."""

    def __str__(self) -> str:
        return f"no entry with id {self.args[0]!r}" if self.args else "no such entry"


class SessionChanged(SessionctxError):
    """The session moved between reading it and appending to it; nothing was written."""


class StoreError(SessionctxError):
    """A store could not do what was asked; the message says why and what to do."""


class CompactionError(SessionctxError):
    """The compaction could not be made; the session was left unchanged."""
