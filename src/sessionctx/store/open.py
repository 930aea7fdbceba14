"""Opening a store by URL: the one module that knows every backend, so the interface
(`store/base.py`) and the backends never import each other in a circle. Backends are imported
only when a URL names them."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from sessionctx.store.base import Store, StoreError

STORE_ENV = "SESSIONCTX_STORE"


def default_url() -> str:
    env = os.environ.get(STORE_ENV)
    if env:
        return env
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return "sqlite:///" + str(Path(base) / "sessionctx" / "sessions.db")


def open_store(url: str | None = None) -> Store:
    """Open the store at `url` (sqlite:///file, jsonl:///dir, postgresql://...).

    Without a URL: $SESSIONCTX_STORE, else sessions.db under the user's data directory.
    """
    url = url or default_url()
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("postgresql", "postgres"):
        from sessionctx.store.postgres import PostgresStore
        return PostgresStore(url)
    if scheme == "sqlite":
        from sessionctx.store.sqlite import SqliteStore
        return SqliteStore(_path_of(url))
    if scheme == "jsonl":
        from sessionctx.store.jsonl import JsonlStore
        return JsonlStore(_path_of(url))
    raise StoreError(f"unknown store URL {url!r}: use sqlite:///path/to/file.db, "
                     "jsonl:///path/to/dir or postgresql://...")


def store_name(url: str | None) -> str:
    """The store as a message names it: its file or directory, never a database URL's
    password."""
    url = url or default_url()
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("sqlite", "jsonl"):
        return _path_of(url)
    return "the PostgreSQL store" if scheme in ("postgresql", "postgres") else repr(url)


def _path_of(url: str) -> str:
    """The file or folder a `sqlite:` or `jsonl:` URL names, read as SQLAlchemy reads one:
    `sqlite:///sessions.db` is relative to the working directory, `sqlite:////srv/s.db`
    absolute."""
    parsed = urlparse(url)
    rest = url.split(":", 1)[1]
    if rest.startswith("///"):
        path = unquote(rest[3:].split("?", 1)[0].split("#", 1)[0])
    else:
        path = unquote(parsed.netloc + parsed.path)
    if not path:
        raise StoreError(f"store URL {url!r} names no path")
    return path
