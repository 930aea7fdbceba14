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
@click.argument("path")
@click.option("--view", type=click.Choice(["context", "display"]), default="context",
              show_default=True, help="context: what the model sees; display: what a person sees.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@build_options
@provider_options
def build(path: str, view: str, as_json: bool, browser_tool: tuple[str, ...],
          keep_screenshots: int, note_unpaired: bool, leaf: str | None, fmt: str,
          provider: str | None, model: str | None, system_prompt: str | None,
          thinking_as_text: bool) -> None:
    """Build the model context (or the display) of the session at PATH ('-' for stdin).

    With --provider, print the request body for that API instead (with --json: the body, every
    change and the pending calls).
    """
    loaded = load_input(path, leaf, fmt)
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
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@build_options
@provider_options
def check(path: str, as_json: bool, browser_tool: tuple[str, ...], keep_screenshots: int,
          note_unpaired: bool, leaf: str | None, fmt: str, provider: str | None,
          model: str | None, system_prompt: str | None, thinking_as_text: bool) -> None:
    """Say why the session at PATH cannot be sent as stored. Exit 0 ready, 1 not, 2 unreadable.

    With --provider, also validate the built request body and list what the stored history,
    converted as it is, would trigger at that provider.
    """
    loaded = load_input(path, leaf, fmt)
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
@click.argument("path")
@build_options
def explain(path: str, browser_tool: tuple[str, ...], keep_screenshots: int,
            note_unpaired: bool, leaf: str | None, fmt: str) -> None:
    """Show the stored records, the display and the context side by side, with reasons."""
    loaded = load_input(path, leaf, fmt)
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


if __name__ == "__main__":  # pragma: no cover
    main()
