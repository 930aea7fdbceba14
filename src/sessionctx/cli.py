"""The `sessionctx` command: read a stored session, build the model's context, explain it.

Exit codes everywhere: 0 success, 1 the history needed repairs or has defects (`check`),
2 the input could not be read or the usage was wrong. Bad input never shows a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from sessionctx.changes import Change, Source
from sessionctx.context import BuildOptions, Context, build_context, display_messages
from sessionctx.inputs import read_input
from sessionctx.records import Problem, Record, file_size, select_branch
from sessionctx.render import format_change, format_message, summarize_message

PROGRESS_MIN_BYTES = 8 * 1024 * 1024


@dataclass(slots=True)
class Loaded:
    """The records of one input, with the problems met reading it and off-branch entries."""

    records: list[Record]
    problems: list[Problem]
    off_branch: list[Record]
    label: str


def _progress_printer(path: str) -> Callable[[int, int], None] | None:
    if path == "-" or not sys.stderr.isatty() or file_size(path) < PROGRESS_MIN_BYTES:
        return None

    def show(done: int, total: int) -> None:
        pct = 100 * done // max(total, 1)
        bar = "#" * (pct // 4)
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rreading {path} [{bar:<25}] {pct:3d}%{end}")
        sys.stderr.flush()

    return show


def load_input(path: str, leaf: str | None = None) -> Loaded:
    """Read a session file (or stdin) and select its branch; exits 2 when nothing is readable."""
    result = read_input(path, progress=_progress_printer(path))
    if result.fatal:
        for problem in result.problems:
            click.echo(f"sessionctx: {problem}", err=True)
        sys.exit(2)
    try:
        records, off = select_branch(result.records, leaf)
    except KeyError:
        raise click.BadParameter(f"no entry with id {leaf!r}", param_hint="--leaf") from None
    return Loaded(records, result.problems, off, path)


def store_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--store/--session: read a session from a store instead of PATH."""
    f = click.option("--session", "session", metavar="ID",
                     help="Read session ID from the store instead of PATH.")(f)
    f = click.option("--store", "store_url", metavar="URL",
                     help="Store URL (sqlite:///file.db, jsonl:///dir, postgresql://...); "
                          "default $SESSIONCTX_STORE or the user's sessions.db.")(f)
    return f


def _open_store(url: str | None) -> Any:
    from sessionctx.store import StoreError, open_store
    try:
        return open_store(url)
    except StoreError as exc:
        click.echo(f"sessionctx: {exc}", err=True)
        sys.exit(2)


def load_source(path: str | None, store_url: str | None, session: str | None,
                leaf: str | None) -> Loaded:
    """Records from PATH, or from a store's session (records then named by seq)."""
    if session is None:
        if path is None:
            raise click.UsageError("give PATH, or --session ID (with --store URL)")
        return load_input(path, leaf)
    if path is not None:
        raise click.UsageError("give either PATH or --session, not both")
    from sessionctx.store import StoreError
    store = _open_store(store_url)
    try:
        records = store.records(session)
    except StoreError as exc:
        click.echo(f"sessionctx: {exc}", err=True)
        sys.exit(2)
    finally:
        store.close()
    if not records:
        click.echo(f"sessionctx: no session {session!r} in the store", err=True)
        sys.exit(2)
    try:
        kept, off = select_branch(records, leaf)
    except KeyError:
        raise click.BadParameter(f"no entry with id {leaf!r}", param_hint="--leaf") from None
    return Loaded(kept, [], off, f"session {session}")


def _off_branch_changes(loaded: Loaded) -> list[Change]:
    return [Change("skipped_off_branch", "entry is not on the selected branch of the tree",
                   r.source) for r in loaded.off_branch]


def _options(browser_tool: tuple[str, ...], keep_screenshots: int,
             note_unpaired: bool) -> BuildOptions:
    tools = frozenset(browser_tool) if browser_tool else BuildOptions().browser_tools
    return BuildOptions(tools, keep_screenshots, note_unpaired)


def build_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options every command that builds a context shares."""
    f = click.option("--leaf", metavar="ID",
                     help="For tree-shaped sessions (pi): the entry whose branch to read "
                          "(default: the last entry).")(f)
    f = click.option("--note-unpaired", is_flag=True,
                     help="After a message that lost an unpaired call, tell the model the call "
                          "was interrupted and its outcome is unknown.")(f)
    f = click.option("--keep-screenshots", type=click.IntRange(min=0), default=1,
                     show_default=True, metavar="N",
                     help="How many of the latest browser results with images keep them.")(f)
    f = click.option("--browser-tool", multiple=True, metavar="NAME",
                     help="A tool whose results are browser screenshots (repeatable; "
                          "default browser_use).")(f)
    return f


def _emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2))


def _warn_problems(problems: list[Problem]) -> None:
    for problem in problems:
        click.echo(f"sessionctx: warning: {problem}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sessionctx")
def main() -> None:
    """Turn a stored agent session into the context a model accepts, and explain every change."""


@main.command()
@click.argument("path", required=False)
@click.option("--view", type=click.Choice(["context", "display"]), default="context",
              show_default=True, help="context: what the model sees; display: what a person sees.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@build_options
@store_options
def build(path: str | None, view: str, as_json: bool, browser_tool: tuple[str, ...],
          keep_screenshots: int, note_unpaired: bool, leaf: str | None,
          store_url: str | None, session: str | None) -> None:
    """Build the model context (or the display) of the session at PATH ('-' for stdin)."""
    loaded = load_source(path, store_url, session, leaf)
    _warn_problems(loaded.problems)
    if view == "display":
        shown = display_messages(loaded.records)
        if as_json:
            _emit_json({"messages": shown})
        else:
            for i, message in enumerate(shown):
                click.echo(format_message(i, message, None))
        return
    ctx = build_context(loaded.records, _options(browser_tool, keep_screenshots, note_unpaired))
    ctx.changes[:0] = _off_branch_changes(loaded)
    if as_json:
        _emit_json(ctx.to_json())
        return
    _print_context(ctx)


def _print_context(ctx: Context) -> None:
    click.echo(f"{len(ctx.messages)} message(s) for the model")
    for i, (message, source) in enumerate(zip(ctx.messages, ctx.sources, strict=True)):
        click.echo(format_message(i, message, source))
    interesting = [c for c in ctx.changes if c.kind != "skipped_metadata"]
    if interesting:
        click.echo(f"\n{len(interesting)} change(s):")
        for change in interesting:
            click.echo(format_change(change))
    _print_pending(ctx)


def _print_pending(ctx: Context) -> None:
    if ctx.pending_calls:
        click.echo(f"\n{len(ctx.pending_calls)} pending call(s) with no result "
                   "(check the real state before retrying):")
        for p in ctx.pending_calls:
            args = json.dumps(p.arguments, ensure_ascii=False)
            click.echo(f"  {p.record.label():<16} {p.name or '?'} ({p.id or 'no id'}) "
                       f"{args[:80]}")


def problems_of(loaded: Loaded, ctx: Context) -> list[dict[str, Any]]:
    """What makes a history unfit to send as stored: read problems and every repair."""
    out: list[dict[str, Any]] = [
        {"kind": "unreadable", "message": str(p), "record": _problem_record(p)}
        for p in loaded.problems]
    out.extend({"kind": c.kind, "message": c.reason,
                "record": c.record.to_json() if c.record else None}
               for c in ctx.changes if c.is_repair)
    return out


def _problem_record(problem: Problem) -> dict[str, Any] | None:
    return {"line": problem.line} if problem.line is not None else None


@main.command()
@click.argument("path", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@build_options
@store_options
def check(path: str | None, as_json: bool, browser_tool: tuple[str, ...],
          keep_screenshots: int, note_unpaired: bool, leaf: str | None,
          store_url: str | None, session: str | None) -> None:
    """Say why the session at PATH cannot be sent as stored. Exit 0 ready, 1 not, 2 unreadable."""
    loaded = load_source(path, store_url, session, leaf)
    path = loaded.label
    ctx = build_context(loaded.records, _options(browser_tool, keep_screenshots, note_unpaired))
    ctx.changes[:0] = _off_branch_changes(loaded)
    problems = problems_of(loaded, ctx)
    ok = not problems
    if as_json:
        _emit_json({"ok": ok, "problems": problems,
                    "changes": [c.to_json() for c in ctx.changes],
                    "pending_calls": [p.to_json() for p in ctx.pending_calls]})
    else:
        if ok:
            click.echo(f"{path}: ready to send as stored ({len(ctx.messages)} messages)")
        else:
            click.echo(f"{path}: {len(problems)} problem(s) before it can be sent")
            for problem in problems:
                where = problem["record"]
                label = Source(**where).label() if where else "-"
                click.echo(f"  {label:<16} {problem['kind']:<28} {problem['message']}")
        _print_pending(ctx)
    sys.exit(0 if ok else 1)


@main.command()
@click.argument("path", required=False)
@build_options
@store_options
def explain(path: str | None, browser_tool: tuple[str, ...], keep_screenshots: int,
            note_unpaired: bool, leaf: str | None, store_url: str | None,
            session: str | None) -> None:
    """Show the stored records, the display and the context side by side, with reasons."""
    loaded = load_source(path, store_url, session, leaf)
    _warn_problems(loaded.problems)
    ctx = build_context(loaded.records, _options(browser_tool, keep_screenshots, note_unpaired))
    ctx.changes[:0] = _off_branch_changes(loaded)
    for line in explain_lines(loaded.records, ctx):
        click.echo(line)
    _print_pending(ctx)


def explain_lines(records: list[Record], ctx: Context) -> list[str]:
    """One row per stored record: what it is, whether a person sees it, what the model gets."""
    shown = {id(m) for m in display_messages(records)}
    by_source: dict[tuple[int | None, int | None, int | None], list[Change]] = {}
    for change in ctx.changes:
        if change.record is not None:
            r = change.record
            by_source.setdefault((r.line, r.index, r.seq), []).append(change)
    in_context: dict[tuple[int | None, int | None, int | None], list[int]] = {}
    for i, src in enumerate(ctx.sources):
        in_context.setdefault((src.line, src.index, src.seq), []).append(i)
    rows = [f"{'record':<14} {'kind':<18} {'display':<8} context",
            f"{'-' * 14} {'-' * 18} {'-' * 8} {'-' * 40}"]
    for record in records:
        key = (record.source.line, record.source.index, record.source.seq)
        displayed = "shown" if id(record.view) in shown or (record.kind == "extension_message" \
            and record.view.get("display") is not False) else "hidden"
        targets = in_context.get(key, [])
        fate = ", ".join(f"#{i}" for i in targets) if targets else "not sent"
        rows.append(f"{record.source.label():<14} {record.kind:<18} {displayed:<8} {fate}  "
                    f"{summarize_message(record.view, 50)}")
        for change in by_source.get(key, []):
            if change.kind != "skipped_metadata":
                rows.append(f"{'':<14} {'':<18} {'':<8} ^ {change.kind}: {change.reason}")
    rows.append(f"\n{len(records)} record(s) stored, {len(ctx.messages)} message(s) for the "
                f"model, {len(ctx.repairs)} repair(s)")
    return rows


@main.command()
@click.option("--store", "store_url", metavar="URL", help="Store URL (default: see build).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def sessions(store_url: str | None, as_json: bool) -> None:
    """List the sessions in a store with record counts, last seq and append times."""
    from sessionctx.store import StoreError
    store = _open_store(store_url)
    try:
        infos = store.sessions()
    except StoreError as exc:
        click.echo(f"sessionctx: {exc}", err=True)
        sys.exit(2)
    finally:
        store.close()
    if as_json:
        _emit_json({"sessions": [i.to_json() for i in infos]})
        return
    for i in infos:
        click.echo(f"{i.id}\t{i.records} record(s)\tlast seq {i.last_seq}\t"
                   f"{i.first_append or '-'} .. {i.last_append or '-'}")


@main.command("import")
@click.argument("path")
@click.option("--session", required=True, metavar="ID", help="Session to append the records to.")
@click.option("--store", "store_url", metavar="URL", help="Store URL (default: see build).")
def import_(path: str, session: str, store_url: str | None) -> None:
    """Append the records of the session file at PATH to session ID in the store."""
    from sessionctx.store import StoreError
    result = read_input(path, progress=_progress_printer(path))
    if result.fatal:
        for problem in result.problems:
            click.echo(f"sessionctx: {problem}", err=True)
        sys.exit(2)
    _warn_problems(result.problems)
    store = _open_store(store_url)
    try:
        seqs = store.import_records(session, result.records)
    except StoreError as exc:
        click.echo(f"sessionctx: {exc}", err=True)
        sys.exit(2)
    finally:
        store.close()
    span = f"seq {seqs[0]}..{seqs[-1]}" if seqs else "nothing"
    click.echo(f"imported {len(seqs)} record(s) into {session} ({span}); "
               f"{len(result.problems)} problem(s)")


@main.command()
@click.argument("session", metavar="ID")
@click.option("-o", "--output", required=True, metavar="PATH", help="JSONL file to write.")
@click.option("--store", "store_url", metavar="URL", help="Store URL (default: see build).")
def export(session: str, output: str, store_url: str | None) -> None:
    """Write every record of session ID to a JSONL file, exactly as stored."""
    from sessionctx.store import StoreError
    store = _open_store(store_url)
    try:
        count = store.export(session, output)
    except StoreError as exc:
        click.echo(f"sessionctx: {exc}", err=True)
        sys.exit(2)
    finally:
        store.close()
    click.echo(f"exported {count} record(s) of {session} to {output}")


if __name__ == "__main__":  # pragma: no cover
    main()
