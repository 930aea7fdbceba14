"""The one way a command gets its session: PATH in any format (or stdin), or a store's session,
on the branch `--leaf` selects; and, for the commands that append, the target to append to.

Every command reads through here, so a format, a store or a rule about which sources go
together is added once and holds for all of them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import closing
from typing import TYPE_CHECKING

import click
import msgspec

from sessionctx.changes import Change, ChangeKind
from sessionctx.cli.app import hold
from sessionctx.context import BuildOptions, Context, build_context
from sessionctx.errors import InputError, NoSuchEntry
from sessionctx.inputs import read_session
from sessionctx.records import Problem, ReadResult, Record, file_size, select_branch

if TYPE_CHECKING:
    from sessionctx.compaction.target import Target

PROGRESS_MIN_BYTES = 8 * 1024 * 1024


class SessionSource(msgspec.Struct, frozen=True):
    """Where a command reads its session: PATH ('-' for stdin) in format `fmt`, or session
    `session` of the store at `store_url` (default store when None); `leaf` picks the branch."""

    path: str | None
    store_url: str | None = None
    session: str | None = None
    fmt: str = "auto"
    leaf: str | None = None


class Loaded(msgspec.Struct):
    """The records of one input, with the problems met reading it and off-branch entries."""

    records: list[Record]
    problems: list[Problem]
    off_branch: list[Record]
    label: str
    format: str = "native"  # the format PATH was read in; a store holds native records

    def context(self, options: BuildOptions | None = None) -> Context:
        """The model's context, its change log opening with the entries left off the branch."""
        ctx = build_context(self.records, options)
        ctx.changes[:0] = [Change(ChangeKind.OFF_BRANCH,
                                  "entry is not on the selected branch of the tree", r.source)
                           for r in self.off_branch]
        hold(ctx)
        return ctx


def progress_printer(path: str) -> Callable[[int, int], None] | None:
    """A progress bar on stderr for a large file read at a terminal; None otherwise."""
    if path == "-" or not sys.stderr.isatty() or file_size(path) < PROGRESS_MIN_BYTES:
        return None

    def show(done: int, total: int) -> None:
        pct = 100 * done // max(total, 1)
        bar = "#" * (pct // 4)
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rreading {path} [{bar:<25}] {pct:3d}%{end}")
        sys.stderr.flush()

    return show


def read_file(path: str, fmt: str = "auto") -> ReadResult:
    """Every record of the file at `path`; InputError when nothing in it is readable."""
    result = read_session(path, fmt, progress=progress_printer(path))
    if result.fatal:
        raise InputError("\n".join(str(problem) for problem in result.problems))
    return result


def _check(source: SessionSource) -> None:
    from_store = source.session is not None or source.store_url is not None
    if source.path is not None and from_store:
        raise click.UsageError("give either PATH or --store/--session, not both")
    if source.session is None and source.store_url is not None:
        raise click.UsageError("--store needs --session ID")
    if source.path is None and not from_store:
        raise click.UsageError("give PATH, or --session ID (with --store URL)")


def _store_records(source: SessionSource) -> list[Record]:
    from sessionctx.store import open_store

    assert source.session is not None
    with closing(open_store(source.store_url)) as store:
        records = store.records(source.session)
    if not records:
        raise InputError(f"no session {source.session!r} in the store")
    return records


def load(source: SessionSource) -> Loaded:
    """The records of `source` on its selected branch (store records are named by seq)."""
    _check(source)
    if source.path is not None:
        result = read_file(source.path, source.fmt)
        records, problems, label = result.records, result.problems, source.path
        fmt = result.format
    else:
        records, problems, label = _store_records(source), [], f"session {source.session}"
        fmt = "native"
    try:
        kept, off = select_branch(records, source.leaf)
    except NoSuchEntry:
        raise click.BadParameter(f"no entry with id {source.leaf!r}",
                                 param_hint="--leaf") from None
    loaded = Loaded(kept, problems, off, label, fmt)
    hold(loaded)
    return loaded


def open_target(source: SessionSource) -> Target:
    """Where a command that appends writes: the JSONL file at PATH, or the store's session
    (the store is closed when the command ends)."""
    _check(source)
    if source.session is not None:
        from sessionctx.compaction.store_target import StoreTarget
        from sessionctx.store import open_store

        store = open_store(source.store_url)
        click.get_current_context().call_on_close(store.close)
        return StoreTarget(store, source.session)
    assert source.path is not None
    if source.path == "-":
        raise click.BadParameter("compaction appends to the session, so it needs a file, not "
                                 "stdin", param_hint="PATH")
    from sessionctx.compaction.target import FileTarget

    return FileTarget(source.path)
