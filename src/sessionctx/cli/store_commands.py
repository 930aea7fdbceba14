"""sessions, import, export: what a session store holds, and moving records in and out."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from typing import TYPE_CHECKING, TypeVar

import click

from sessionctx.cli.app import emit_json, main, warn_problems
from sessionctx.cli.loader import read_file
from sessionctx.cli.options import TEXT, json_option
from sessionctx.inputs import FORMATS
from sessionctx.render import counted

if TYPE_CHECKING:
    from sessionctx.records import Record
    from sessionctx.store import Store

T = TypeVar("T")

store_option = click.option("--store", "store_url", metavar="URL", type=TEXT,
                            help="Store URL (default: see build).")


def _with_store(url: str | None, use: Callable[[Store], T]) -> T:
    from sessionctx.store import open_store

    with closing(open_store(url)) as store:
        return use(store)


@main.command()
@store_option
@json_option
def sessions(store_url: str | None, as_json: bool) -> None:
    """List the sessions in a store with record counts, last seq and append times."""
    infos = _with_store(store_url, lambda store: store.sessions())
    if as_json:
        emit_json({"sessions": [i.to_json() for i in infos]})
        return
    if not infos:
        from sessionctx.store.open import store_name

        click.echo(f"no sessions in {store_name(store_url)}; `sessionctx import FILE "
                   "--session ID` adds one")
        return
    for i in infos:
        if i.problem is not None:
            click.echo(f"sessionctx: {i.problem}", err=True)
            click.echo(f"{i.id}\tunreadable")
            continue
        click.echo(f"{i.id}\t{counted(i.records, 'record')}\tlast seq {i.last_seq}\t"
                   f"{i.first_append or '-'} .. {i.last_append or '-'}")


@main.command("import")
@click.argument("path")
@click.option("--session", required=True, metavar="ID", type=TEXT,
              help="Session to append the records to.")
@click.option("--from", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="The format of PATH (see build).")
@click.option("--again", is_flag=True,
              help="Append every record even when the session already holds the file's "
                   "first records (imported before).")
@store_option
def import_(path: str, session: str, fmt: str, again: bool, store_url: str | None) -> None:
    """Append the records of the session file at PATH to session ID in the store.

    A session that already holds the file's first records (the same file imported before,
    since grown) gets only the records after them, so importing twice never doubles it.
    """
    result = read_file(path, fmt)
    warn_problems(result.problems)

    def append(store: Store) -> tuple[list[int], int]:
        held = 0 if again else _held_prefix(store.records(session), result.records)
        return store.import_records(session, result.records[held:]), held

    seqs, held = _with_store(store_url, append)
    span = f"seq {seqs[0]}..{seqs[-1]}" if seqs else "nothing"
    if held:
        click.echo(f"{session} already holds the first {counted(held, 'record')} of {path}; "
                   "those were not appended again (--again appends them)")
    click.echo(f"imported {counted(len(seqs), 'record')} into {session} ({span}); "
               f"{counted(len(result.problems), 'problem')}")


def _held_prefix(stored: list[Record], read: list[Record]) -> int:
    """How many of the file's first records the session holds as its first records."""
    if not stored or len(stored) > len(read):
        return 0
    for a, b in zip(stored, read, strict=False):
        if a.data != b.data:
            return 0
    return len(stored)


@main.command()
@click.argument("session", metavar="ID", type=TEXT)
@click.option("-o", "--output", required=True, metavar="PATH", help="JSONL file to write.")
@store_option
def export(session: str, output: str, store_url: str | None) -> None:
    """Write every record of session ID to a JSONL file, exactly as stored."""
    count = _with_store(store_url, lambda store: store.export(session, output))
    click.echo(f"exported {counted(count, 'record')} of {session} to {output}")
