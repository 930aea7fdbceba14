"""repair: write a broken session back in its own format, or a store session's repaired
context as a checkpoint."""

from __future__ import annotations

import sys

import click

from sessionctx.cli.app import emit_json, fail, main
from sessionctx.cli.loader import SessionSource, check_source, open_target
from sessionctx.cli.options import json_option, note_unpaired_option, source_options
from sessionctx.render import counted


@main.command()
@source_options()
@click.option("--dry-run", is_flag=True,
              help="Print a unified diff of the lines that would change, and the changes; "
                   "write nothing.")
@json_option
@note_unpaired_option
@click.option("--backup", "backup_path", metavar="PATH",
              help="Keep the original here (default PATH.bak-<UTC timestamp>); an existing "
                   "file is never overwritten.")
@click.option("--no-backup", is_flag=True, help="Keep no copy of the original.")
@click.option("--force", is_flag=True,
              help="Write even while another process holds the file open for writing (what "
                   "it appends after the swap is kept in the backup and reported).")
def repair(source: SessionSource, dry_run: bool, as_json: bool, note_unpaired: bool,
           backup_path: str | None, no_backup: bool, force: bool) -> None:
    """Rewrite the session at PATH in its own format so its agent can resume it.

    Unanswered calls, orphan and duplicate results and unreadable lines are taken out; every
    other line is written back byte for byte, and no result is ever made up. For a store
    session (--store/--session) the repaired context is appended as a checkpoint. Exit 0
    repaired (or nothing to repair), 1 written but something is left that repair cannot fix,
    2 the input could not be read, changed while being repaired, or another process is
    writing it (nothing written). See docs/safety.md.
    """
    if backup_path is not None and no_backup:
        raise click.UsageError("give --backup PATH or --no-backup, not both")
    check_source(source)
    if source.session is not None:
        _repair_store(source, note_unpaired, dry_run, as_json)
        return
    assert source.path is not None
    if source.path == "-":
        raise click.BadParameter("repair rewrites a file in place, and stdin is not a file: "
                                 "save the session to a file and repair that", param_hint="PATH")
    from sessionctx.writeback import repair as run_repair

    path = source.path
    backup: str | bool = False if no_backup else (backup_path or True)
    try:
        result = run_repair(path, source.fmt, leaf=source.leaf, dry_run=dry_run,
                            note_unpaired=note_unpaired, backup=backup, force=force)
    except OSError as exc:
        fail(f"{path}: cannot be written: {exc.strerror or exc}; the original is unchanged")
    code = 1 if result.remaining or result.late else 0
    if as_json:
        emit_json({**result.to_json(), "dry_run": dry_run, "diff": result.diff})
        sys.exit(code)
    if dry_run and result.diff:
        click.echo(result.diff, nl=False)
    click.echo(f"{path} ({result.format}): {counted(len(result.fixes), 'change')}")
    for fix in result.fixes:
        click.echo(f"  {fix.label():<12} {fix.kind:<26} {fix.reason}")
    if dry_run:
        click.echo("dry run: nothing written")
    elif result.written:
        kept = f"the original is kept at {result.backup}" if result.backup else "no backup kept"
        click.echo(f"repaired {path}; {kept}")
    elif result.remaining:
        click.echo("the file is unchanged: repair cannot take out of it what is left below")
    else:
        click.echo(f"{result.note or 'nothing to repair'}; the file is unchanged")
    if result.unfinished:
        click.echo(f"  {result.unfinished}")
    if result.late:
        click.echo(f"warning: {result.late}")
    if result.remaining:
        click.echo(f"{counted(len(result.remaining), 'problem')} left (`sessionctx build` "
                   "leaves them out of what it sends):")
    for line in result.remaining:
        click.echo(f"  not repaired: {line}")
    if result.advice:
        click.echo(result.advice)
    if result.pending_calls:
        click.echo(f"{counted(len(result.pending_calls), 'call')} had no result: check the "
                   "real state before retrying them")
    sys.exit(code)


def _repair_store(source: SessionSource, note_unpaired: bool, dry_run: bool,
                  as_json: bool) -> None:
    from sessionctx.compaction.target import SessionChanged
    from sessionctx.render import format_change
    from sessionctx.writeback.store import repair_session

    try:
        done = repair_session(open_target(source), note_unpaired=note_unpaired,
                              dry_run=dry_run)
    except SessionChanged as exc:
        fail(str(exc))
    changes = [c for c in done.context.changes if c.is_repair]
    if as_json:
        emit_json({"session": source.session, "written": done.seq is not None,
                   "seq": done.seq, "dry_run": dry_run,
                   "changes": [c.to_json() for c in changes],
                   "pending_calls": [p.to_json() for p in done.context.pending_calls]})
        return
    click.echo(f"session {source.session}: {counted(len(changes), 'change')}")
    for change in changes:
        click.echo(format_change(change))
    if done.record is None:
        click.echo("nothing to repair; the session is unchanged")
    elif done.seq is None:
        click.echo("dry run: nothing written")
    else:
        click.echo(f"appended a repair checkpoint at seq {done.seq}; stored rows are "
                   "unchanged")
