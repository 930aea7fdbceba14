"""The `sessionctx` command: read a stored session, build the model's context, explain it.

Exit codes everywhere: 0 success, 1 the history needed repairs or has defects (`check`),
2 the input could not be read or the usage was wrong. Bad input never shows a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import click

from sessionctx.changes import Change, Source
from sessionctx.context import (
    BuildOptions,
    Context,
    build_context,
    display_messages,
    is_displayed,
)
from sessionctx.inputs import FORMATS, read_input
from sessionctx.records import MESSAGE, Problem, Record, file_size, select_branch
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


def load_input(path: str, leaf: str | None = None, fmt: str = "auto") -> Loaded:
    """Read a session file (or stdin) and select its branch; exits 2 when nothing is readable."""
    result = read_input(path, fmt, progress=_progress_printer(path))
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
                leaf: str | None, fmt: str = "auto") -> Loaded:
    """Records from PATH, or from a store's session (records then named by seq)."""
    if session is None:
        if path is None:
            raise click.UsageError("give PATH, or --session ID (with --store URL)")
        return load_input(path, leaf, fmt)
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
    f = click.option("--from", "fmt", type=click.Choice(FORMATS), default="auto",
                     show_default=True,
                     help="The format of PATH: auto detects it; native is sessionctx's own "
                          "records; the others are agents' histories.")(f)
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


def provider_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options that turn the context into one provider's request body."""
    from sessionctx.providers import PROVIDERS

    f = click.option("--thinking-as-text", is_flag=True,
                     help="With --provider: reasoning that cannot be replayed to the target "
                          "model is sent as plain text instead of being removed.")(f)
    f = click.option("--system", "system_prompt", metavar="TEXT",
                     help="With --provider: the system prompt of the request.")(f)
    f = click.option("--model", metavar="M",
                     help="With --provider: the target model, which picks the capability row "
                          "(default: the provider's current default model).")(f)
    f = click.option("--provider", type=click.Choice(PROVIDERS),
                     help="Build the request body for this provider API.")(f)
    return f


def _request(ctx: Context, provider: str, model: str | None, system: str | None,
             as_text: bool) -> Any:
    from sessionctx.providers import BuildRequestOptions, build_request

    return build_request(ctx, provider, model, system, BuildRequestOptions(as_text))


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
@provider_options
@store_options
def build(path: str | None, view: str, as_json: bool, browser_tool: tuple[str, ...],
          keep_screenshots: int, note_unpaired: bool, leaf: str | None, fmt: str,
          provider: str | None, model: str | None, system_prompt: str | None,
          thinking_as_text: bool, store_url: str | None, session: str | None) -> None:
    """Build the model context (or the display) of the session at PATH ('-' for stdin).

    With --provider, print the request body for that API instead (with --json: the body, every
    change and the pending calls).
    """
    loaded = load_source(path, store_url, session, leaf, fmt)
    _warn_problems(loaded.problems)
    if provider is not None and view == "display":
        raise click.UsageError("--provider builds the context view; drop --view display")
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
    if provider is not None:
        req = _request(ctx, provider, model, system_prompt, thinking_as_text)
        if as_json:
            _emit_json({"request": req.body,
                        "changes": [c.to_json() for c in ctx.changes + req.changes],
                        "pending_calls": [p.to_json() for p in ctx.pending_calls]})
        else:
            _emit_json(req.body)
        return
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


def _provider_report(loaded: Loaded, ctx: Context, provider: str, model: str | None,
                     system: str | None, as_text: bool) -> dict[str, Any]:
    """The built body's violations, and those of the stored messages converted as they are."""
    from sessionctx.providers import naive_request, validate

    req = _request(ctx, provider, model, system, as_text)
    stored = [r.view for r in loaded.records if r.kind == MESSAGE]
    naive = naive_request(stored, provider, req.model, system).body
    return {"name": provider, "model": req.model,
            "violations": [v.to_json() for v in validate(req.body, provider, req.model)],
            "as_stored": [v.to_json() for v in validate(naive, provider, req.model)],
            "changes": [c.to_json() for c in req.changes]}


def _problem_record(problem: Problem) -> dict[str, Any] | None:
    return {"line": problem.line} if problem.line is not None else None


@main.command()
@click.argument("path", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@build_options
@provider_options
@store_options
def check(path: str | None, as_json: bool, browser_tool: tuple[str, ...],
          keep_screenshots: int, note_unpaired: bool, leaf: str | None, fmt: str,
          provider: str | None, model: str | None, system_prompt: str | None,
          thinking_as_text: bool, store_url: str | None, session: str | None) -> None:
    """Say why the session at PATH cannot be sent as stored. Exit 0 ready, 1 not, 2 unreadable.

    With --provider, also validate the built request body and list what the stored history,
    converted as it is, would trigger at that provider.
    """
    loaded = load_source(path, store_url, session, leaf, fmt)
    path = loaded.label
    ctx = build_context(loaded.records, _options(browser_tool, keep_screenshots, note_unpaired))
    ctx.changes[:0] = _off_branch_changes(loaded)
    problems = problems_of(loaded, ctx)
    report = None
    if provider is not None:
        report = _provider_report(loaded, ctx, provider, model, system_prompt, thinking_as_text)
        problems.extend({"kind": f"{provider}: as stored", "message": v["message"],
                         "record": None, "path": v["path"]} for v in report["as_stored"])
        problems.extend({"kind": f"{provider}: built body", "message": v["message"],
                         "record": None, "path": v["path"]} for v in report["violations"])
    ok = not problems
    if as_json:
        out: dict[str, Any] = {"ok": ok, "problems": problems,
                               "changes": [c.to_json() for c in ctx.changes],
                               "pending_calls": [p.to_json() for p in ctx.pending_calls]}
        if report is not None:
            out["provider"] = report
        _emit_json(out)
    else:
        if ok:
            click.echo(f"{path}: ready to send as stored ({len(ctx.messages)} messages)")
        else:
            click.echo(f"{path}: {len(problems)} problem(s) before it can be sent")
            for problem in problems:
                where = problem["record"]
                label = Source(**where).label() if where else problem.get("path", "-")
                click.echo(f"  {label:<16} {problem['kind']:<28} {problem['message']}")
        _print_pending(ctx)
    sys.exit(0 if ok else 1)


@main.command()
@click.argument("path", required=False)
@build_options
@store_options
def explain(path: str | None, browser_tool: tuple[str, ...], keep_screenshots: int,
            note_unpaired: bool, leaf: str | None, fmt: str, store_url: str | None,
            session: str | None) -> None:
    """Show the stored records, the display and the context side by side, with reasons."""
    loaded = load_source(path, store_url, session, leaf, fmt)
    _warn_problems(loaded.problems)
    ctx = build_context(loaded.records, _options(browser_tool, keep_screenshots, note_unpaired))
    ctx.changes[:0] = _off_branch_changes(loaded)
    for line in explain_lines(loaded.records, ctx):
        click.echo(line)
    _print_pending(ctx)


def explain_lines(records: list[Record], ctx: Context) -> list[str]:
    """One row per stored record: what it is, whether a person sees it, what the model gets."""
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
        displayed = "shown" if is_displayed(record) else "hidden"
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


# ---------------------------------------------------------------------------------------------
# Compaction commands


def _compaction_target(path: str | None, store_url: str | None, session: str | None) -> Any:
    """The file at PATH, or a session in a store (--store URL --session ID)."""
    if store_url is not None or session is not None:
        if path is not None:
            raise click.UsageError("give either PATH or --store/--session, not both")
        if session is None:
            raise click.UsageError("--store needs --session ID")
        from sessionctx.compaction.store_target import StoreTarget
        from sessionctx.store import StoreError, open_store

        try:
            return StoreTarget(open_store(store_url), session)
        except StoreError as exc:
            _fail(str(exc), 2)
    if path is None:
        raise click.UsageError("give PATH, or --store URL --session ID")
    from sessionctx.compaction.target import FileTarget

    if path == "-":
        raise click.BadParameter("compaction appends to the session, so it needs a file, not "
                                 "stdin", param_hint="PATH")
    return FileTarget(path)


def _target_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--session", metavar="ID", help="The session in the store.")(f)
    f = click.option("--store", "store_url", metavar="URL",
                     help="A session store (sqlite:///file, jsonl:///dir, postgresql://...; "
                          "default $SESSIONCTX_STORE) instead of PATH.")(f)
    return click.argument("path", required=False)(f)


def _fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"sessionctx: {message}", err=True)
    sys.exit(code)


def _counter(tokenizer: str) -> Any:
    from sessionctx.compaction import tokens

    if tokenizer == "estimate":
        return tokens.estimate_message
    try:
        return tokens.exact_counter(tokenizer)
    except tokens.TokenizerUnavailable as exc:
        raise click.BadParameter(str(exc), param_hint="--tokenizer") from None


_tokenizer_option = click.option(
    "--tokenizer", default="estimate", show_default=True, metavar="NAME",
    help="'estimate' (characters/4, images 1024) or an OpenAI model or encoding name for an "
         "exact count, available only when its tiktoken encoding is already cached.")


@main.command()
@_target_options
@click.option("--summarizer", "spec", metavar="SPEC",
              help="'command:CMD' (prompt on stdin, summary on stdout), 'anthropic:MODEL' or "
                   "'openai:MODEL' (key from ANTHROPIC_API_KEY / OPENAI_API_KEY).")
@click.option("--keep-turns", type=click.IntRange(min=0), default=3, show_default=True,
              metavar="N", help="Keep at least the last N turns.")
@click.option("--keep-tokens", type=click.IntRange(min=0), default=20_000, show_default=True,
              metavar="K", help="Keep at least the last K tokens (whichever keeps more wins).")
@click.option("--force", is_flag=True,
              help="When the keep rules keep everything, cut at the start of the active turn.")
@click.option("--dry-run", is_flag=True, help="Print the plan and the prompt; write nothing.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=180.0,
              show_default=True, metavar="SECONDS", help="Give up on the summarizer after this.")
@click.option("--max-identifiers", type=click.IntRange(min=0), default=40, show_default=True,
              metavar="N", help="How many exact identifiers the audit requires at most.")
@click.option("--chunk-tokens", type=click.IntRange(min=0), default=24_000, show_default=True,
              metavar="N", help="Send the records to the summarizer in chunks of about N "
                                "tokens (0: one prompt).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@_tokenizer_option
def compact(path: str | None, store_url: str | None, session: str | None, spec: str | None,
            keep_turns: int, keep_tokens: int, force: bool, dry_run: bool, timeout: float,
            max_identifiers: int, chunk_tokens: int, as_json: bool, tokenizer: str) -> None:
    """Summarize the older part of the session at PATH and append a checkpoint.

    Exit 0 when a checkpoint was appended (or the dry run planned one), 1 when nothing was
    written (nothing to compact, summarizer or audit failure, the session changed), 2 when the
    input or the usage is wrong.
    """
    from sessionctx.compaction import checkpoint as cp
    from sessionctx.compaction.planner import NothingToCompact
    from sessionctx.compaction.summarizers import SummarizerError, parse_summarizer
    from sessionctx.compaction.target import SessionChanged, TargetError

    settings = cp.Settings(keep_turns, keep_tokens, force, max_identifiers, chunk_tokens,
                           counter=_counter(tokenizer))
    target = _compaction_target(path, store_url, session)
    summarizer = None
    if not dry_run:
        if spec is None:
            raise click.UsageError("--summarizer is required unless --dry-run is given")
        try:
            summarizer = parse_summarizer(spec, timeout=timeout)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--summarizer") from None
    try:
        snapshot = target.snapshot()
        _warn_problems(snapshot.problems)
        if summarizer is None:
            prepared = cp.prepare(snapshot, settings)
            _print_prepared(prepared, as_json)
            return
        written = cp.compact(target, summarizer, settings, snapshot=snapshot)
    except TargetError as exc:
        _fail(str(exc), 2)
    except (NothingToCompact, SummarizerError, cp.CompactionError, SessionChanged) as exc:
        _fail(f"{target.label}: no checkpoint written: {exc}")
    else:
        _print_written(written, target, as_json)


def _plan_json(prepared: Any) -> dict[str, Any]:
    p = prepared.plan
    return {"cut": p.cut, "messages": len(p.messages), "summarized": len(p.summarized),
            "kept": len(p.kept), "previous_summary": p.previous_summary is not None,
            "forced": p.forced, "tokens_before": p.tokens_before, "tokens_kept": p.tokens_kept,
            "base_seq": prepared.snapshot.base_seq, "identifiers": prepared.identifiers,
            "chunks": len(prepared.chunks)}


def _print_prepared(prepared: Any, as_json: bool) -> None:
    plan_json = _plan_json(prepared)
    if as_json:
        _emit_json({"plan": plan_json, "prompt": prepared.prompt})
        return
    click.echo(f"plan: summarize messages {1 if plan_json['previous_summary'] else 0}.."
               f"{plan_json['cut'] - 1} ({plan_json['summarized']} message(s)"
               f"{', with the previous summary' if plan_json['previous_summary'] else ''}), "
               f"keep {plan_json['kept']} from #{plan_json['cut']}; tokens "
               f"{plan_json['tokens_before']} -> {plan_json['tokens_kept']} + summary"
               f"{' (forced)' if plan_json['forced'] else ''}")
    click.echo(f"identifiers the summary must keep: {len(prepared.identifiers)}")
    if plan_json["chunks"] > 1:
        click.echo(f"the records go to the summarizer in {plan_json['chunks']} chunks, each "
                   "prompt carrying the summary so far; the first prompt follows")
    click.echo("--- prompt ---")
    click.echo(prepared.prompt)


def _print_written(written: Any, target: Any, as_json: bool) -> None:
    record = written.record
    unit = target.unit
    info = {"id": record["id"], unit: written.position, "baseSeq": record["baseSeq"],
            "firstKeptIndex": record["firstKeptIndex"], "tokensBefore": record["tokensBefore"],
            "tokensAfter": record["tokensAfter"], "summaryModelRef": record["summaryModelRef"],
            "qualityAudit": record["qualityAudit"], "messages": len(record["messages"])}
    if record.get("restoredFromCompactionId"):
        info["restoredFromCompactionId"] = record["restoredFromCompactionId"]
    if as_json:
        _emit_json(info)
        return
    what = "restore checkpoint" if "restoredFromCompactionId" in info else "checkpoint"
    click.echo(f"{target.label}: appended {what} {info['id']} at {unit} {info[unit]}: "
               f"{info['messages']} message(s), tokens {info['tokensBefore']} -> "
               f"{info['tokensAfter']}")


@main.command()
@_target_options
@click.option("--before", "before", required=True, metavar="CHECKPOINT",
              help="The checkpoint to undo: its id, or its line (file) or seq (store) number.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def restore(path: str | None, store_url: str | None, session: str | None, before: str,
            as_json: bool) -> None:
    """Append a checkpoint that brings back the context as it was before CHECKPOINT.

    Nothing is deleted; the undone checkpoint stays in the history. Exit 0 appended, 1 not.
    """
    from sessionctx.compaction import checkpoint as cp
    from sessionctx.compaction.target import SessionChanged, TargetError

    target = _compaction_target(path, store_url, session)
    try:
        snapshot = target.snapshot()
        _warn_problems(snapshot.problems)
        written = cp.restore(target, before, snapshot=snapshot)
    except TargetError as exc:
        _fail(str(exc), 2)
    except (cp.CompactionError, SessionChanged) as exc:
        _fail(f"{target.label}: nothing restored: {exc}")
    else:
        _print_written(written, target, as_json)


SUMMARY_ALLOWANCE = 2000


@main.command()
@_target_options
@click.option("--window", type=click.IntRange(min=1), required=True, metavar="N",
              help="The model's context window in tokens.")
@click.option("--reserve", type=click.IntRange(min=0), default=8192, show_default=True,
              metavar="R", help="Tokens kept free for the answer.")
@click.option("--threshold", type=click.FloatRange(0, 1, min_open=True), default=0.8,
              show_default=True, metavar="T", help="Compact above this share of the window.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@_tokenizer_option
def budget(path: str | None, store_url: str | None, session: str | None, window: int,
           reserve: int, threshold: float, as_json: bool, tokenizer: str) -> None:
    """Say whether the context of PATH fits the window, needs compaction, or cannot fit.

    Exit 0 fits, 1 needs compaction or cannot fit, 2 unreadable input or bad usage.
    """
    from sessionctx.compaction.budget import FITS, Budget, assess
    from sessionctx.compaction.planner import NothingToCompact, plan
    from sessionctx.compaction.tokens import total

    try:
        limits = Budget(window, reserve, threshold)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    counter = _counter(tokenizer)
    if path is not None and store_url is None and session is None:
        loaded = load_input(path)
        _warn_problems(loaded.problems)
        messages = build_context(loaded.records).messages
    else:
        from sessionctx.compaction.target import TargetError

        target = _compaction_target(path, store_url, session)
        try:
            snapshot = target.snapshot()
        except TargetError as exc:
            _fail(str(exc), 2)
        _warn_problems(snapshot.problems)
        messages = build_context(snapshot.records).messages
    tokens = total(messages, counter)
    try:
        smallest = plan(messages, keep_turns=0, keep_tokens=0, force=True, counter=counter)
        minimum = smallest.tokens_kept + SUMMARY_ALLOWANCE
    except NothingToCompact:
        minimum = tokens
    verdict = assess(tokens, limits, minimum)
    if as_json:
        _emit_json(verdict.to_json())
    else:
        click.echo(f"{verdict.verdict}: {tokens} tokens; compaction trigger {verdict.trigger}, "
                   f"hard limit {verdict.hard_limit} (window {window} - reserve {reserve}); "
                   f"smallest after compaction about {minimum} (active turn + "
                   f"{SUMMARY_ALLOWANCE} for the summary)")
    sys.exit(0 if verdict.verdict == FITS else 1)


# ---------------------------------------------------------------------------------------------
# Repair


@main.command()
@click.argument("path", required=False)
@click.option("--from", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="The format of PATH; the repaired file is written in the same format.")
@click.option("--leaf", metavar="ID",
              help="For tree-shaped sessions (pi): the entry whose branch to repair "
                   "(default: the last entry).")
@click.option("--dry-run", is_flag=True,
              help="Print a unified diff of the lines that would change, and the changes; "
                   "write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--note-unpaired", is_flag=True,
              help="After a message that lost an unanswered call, add a user message saying "
                   "the call was interrupted and its outcome is unknown.")
@click.option("--backup", "backup_path", metavar="PATH",
              help="Keep the original here (default PATH.bak-<UTC timestamp>); an existing "
                   "file is never overwritten.")
@click.option("--no-backup", is_flag=True, help="Keep no copy of the original.")
@store_options
def repair(path: str | None, fmt: str, leaf: str | None, dry_run: bool, as_json: bool,
           note_unpaired: bool, backup_path: str | None, no_backup: bool,
           store_url: str | None, session: str | None) -> None:
    """Rewrite the session at PATH in its own format so its agent can resume it.

    Unanswered calls, orphan and duplicate results and unreadable lines are taken out; every
    other line is written back byte for byte, and no result is ever made up. Exit 0 repaired
    (or nothing to repair), 1 written but something is left that repair cannot fix, 2 the
    input could not be read or changed while being repaired (nothing written).
    """
    if backup_path is not None and no_backup:
        raise click.UsageError("give --backup PATH or --no-backup, not both")
    if session is not None or store_url is not None:
        if path is not None:
            raise click.UsageError("give either PATH or --store/--session, not both")
        if session is None:
            raise click.UsageError("--store needs --session ID")
        _repair_store(store_url, session, note_unpaired, dry_run, as_json)
        return
    if path is None:
        raise click.UsageError("give PATH, or --store URL --session ID")
    if path == "-":
        raise click.BadParameter("repair rewrites a file; stdin cannot be", param_hint="PATH")
    from sessionctx.repair import RepairError, SessionChanged
    from sessionctx.repair import repair as run_repair

    backup: str | bool = False if no_backup else (backup_path or True)
    try:
        result = run_repair(path, fmt, leaf=leaf, dry_run=dry_run,
                            note_unpaired=note_unpaired, backup=backup)
    except SessionChanged as exc:
        _fail(str(exc), 2)
    except RepairError as exc:
        _fail(str(exc), 2)
    except OSError as exc:
        _fail(f"{path}: cannot be written: {exc.strerror or exc}; the original is unchanged",
              2)
    code = 1 if result.remaining else 0
    if as_json:
        _emit_json({**result.to_json(), "dry_run": dry_run, "diff": result.diff})
        sys.exit(code)
    if dry_run and result.diff:
        click.echo(result.diff, nl=False)
    click.echo(f"{path} ({result.format}): {len(result.fixes)} change(s)")
    for fix in result.fixes:
        click.echo(f"  {fix.label():<12} {fix.kind:<26} {fix.reason}")
    if dry_run:
        click.echo("dry run: nothing written")
    elif result.written:
        kept = f"the original is kept at {result.backup}" if result.backup else "no backup kept"
        click.echo(f"repaired {path}; {kept}")
    else:
        click.echo("nothing to repair; the file is unchanged")
    for line in result.remaining:
        click.echo(f"  not repaired: {line}")
    if result.pending_calls:
        click.echo(f"{len(result.pending_calls)} call(s) had no result: check the real state "
                   "before retrying them")
    sys.exit(code)


def _repair_store(store_url: str | None, session: str, note_unpaired: bool, dry_run: bool,
                  as_json: bool) -> None:
    from sessionctx.compaction.target import SessionChanged, TargetError
    from sessionctx.repair.store import repair_session

    store = _open_store(store_url)
    try:
        done = repair_session(store, session, note_unpaired=note_unpaired, dry_run=dry_run)
    except TargetError as exc:
        _fail(str(exc), 2)
    except SessionChanged as exc:
        _fail(str(exc), 2)
    finally:
        store.close()
    changes = [c for c in done.context.changes if c.is_repair]
    if as_json:
        _emit_json({"session": session, "written": done.seq is not None, "seq": done.seq,
                    "dry_run": dry_run, "changes": [c.to_json() for c in changes],
                    "pending_calls": [p.to_json() for p in done.context.pending_calls]})
        return
    click.echo(f"session {session}: {len(changes)} change(s)")
    for change in changes:
        click.echo(format_change(change))
    if done.record is None:
        click.echo("nothing to repair; the session is unchanged")
    elif done.seq is None:
        click.echo("dry run: nothing written")
    else:
        click.echo(f"appended a repair checkpoint at seq {done.seq}; stored rows are unchanged")
