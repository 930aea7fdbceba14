"""build, explain: what the model gets from a session, and why each record became what it
did (check, whether it can be sent as stored: check_command.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
import msgspec

from sessionctx.changes import ChangeKind, Source
from sessionctx.cli.app import emit_json, fail, main, warn_problems
from sessionctx.cli.loader import SessionSource, load
from sessionctx.cli.options import (
    RequestSpec,
    build_options,
    json_option,
    provider_options,
    source_options,
)
from sessionctx.context import (
    BuildOptions,
    Context,
    display_messages,
)
from sessionctx.render import counted, format_change, format_message

if TYPE_CHECKING:
    from sessionctx.providers import Request


def _request(ctx: Context, spec: RequestSpec) -> Request:
    from sessionctx.providers import build_request

    return build_request(ctx, spec.provider, spec.model, spec.system, spec.options())


def _undefined(req: Request) -> list[dict[str, Any]]:
    return [c.to_json() for c in req.undefined_calls]


@main.command()
@click.option("--view", type=click.Choice(["context", "display"]), default="context",
              show_default=True, help="context: what the model sees; display: what a person sees.")
@click.option("--quiet", "-q", is_flag=True,
              help="With --provider: print only the body, not the count of changes and the "
                   "pending calls on stderr.")
@json_option
@build_options
@provider_options
@source_options()
def build(source: SessionSource, view: str, quiet: bool, as_json: bool, options: BuildOptions,
          request: RequestSpec | None) -> None:
    """Build the model context (or the display) of the session at PATH ('-' for stdin).

    With --provider, print the request body for that API instead (with --json: the body, every
    change and the pending calls); the count of changes and the calls whose outcome is unknown
    go to stderr unless --quiet.
    """
    loaded = load(source)
    warn_problems(loaded.problems)
    if request is not None and view == "display":
        raise click.UsageError("--provider builds the context view; drop --view display")
    if view == "display":
        shown = display_messages(loaded.records)
        if as_json:
            emit_json({"messages": shown})
        else:
            for i, message in enumerate(shown):
                click.echo(format_message(i, message, None))
        return
    ctx = loaded.context(options)
    if request is not None:
        from sessionctx.providers.tools import missing_definitions

        req = _request(ctx, request)
        if missing_definitions(req.body, request.provider):
            fail(f"this history holds tool blocks; {request.provider} requires tool "
                 "definitions. Pass --tools FILE (the agent's definitions), --tools-as-text "
                 "(calls and results sent as plain text) or --placeholder-tools (empty-schema "
                 "definitions from the names the history calls)")
        _print_undefined(_undefined(req))
        if as_json:
            out: dict[str, Any] = {
                "request": req.body,
                "changes": [c.to_json() for c in ctx.changes + req.changes],
                "pending_calls": [p.to_json() for p in ctx.pending_calls]}
            if request.tools is not None:
                out["undefined_tools"] = _undefined(req)
            emit_json(out)
        else:
            emit_json(req.body)
            if not quiet:
                changes = counted(len(ctx.changes) + len(req.changes), "change")
                click.echo(f"sessionctx: {counted(len(ctx.messages), 'message')} -> "
                           f"{request.provider} body; {changes} (`sessionctx explain` says "
                           "why)", err=True)
                _print_pending(ctx, err=True)
        return
    if quiet:
        raise click.UsageError("--quiet goes with --provider")
    if as_json:
        emit_json(ctx.to_json())
        return
    _print_context(ctx)


def _print_context(ctx: Context) -> None:
    click.echo(f"{counted(len(ctx.messages), 'message')} for the model")
    for i, (message, source) in enumerate(zip(ctx.messages, ctx.sources, strict=True)):
        click.echo(format_message(i, message, source))
    interesting = [c for c in ctx.changes if c.kind != ChangeKind.SKIPPED_METADATA]
    if interesting:
        click.echo(f"\n{counted(len(interesting), 'change')}:")
        for change in interesting:
            click.echo(format_change(change))
    _print_pending(ctx)


def _print_pending(ctx: Context, err: bool = False) -> None:
    if ctx.pending_calls:
        import json  # loaded only when there is a pending call to print

        head = "sessionctx: " if err else "\n"
        click.echo(f"{head}{counted(len(ctx.pending_calls), 'pending call')} with no result "
                   "(check the real state before retrying):", err=err)
        for p in ctx.pending_calls:
            args = json.dumps(p.arguments, ensure_ascii=False)
            by = f" (result written by {p.written_by} itself)" if p.written_by else ""
            click.echo(f"  {p.record.label():<16} {p.name or '?'} ({p.id or 'no id'}) "
                       f"{args[:80]}{by}", err=err)


def _print_undefined(undefined: list[dict[str, Any]]) -> None:
    """The calls to tools the definitions do not name, one line per tool."""
    lines: dict[str, list[str]] = {}
    for u in undefined:
        record = u.get("record")
        lines.setdefault(u["name"], []).append(Source(**record).label() if record else "?")
    for name, where in lines.items():
        click.echo(f"sessionctx: warning: {counted(len(where), 'call')} to tool {name!r}, "
                   f"which the definitions do not name ({', '.join(where[:5])}"
                   f"{', …' if len(where) > 5 else ''})", err=True)



@main.command()
@json_option
@build_options
@provider_options
@source_options()
def explain(source: SessionSource, as_json: bool, options: BuildOptions,
            request: RequestSpec | None) -> None:
    """Show the stored records, the display and the context side by side, with reasons.

    With --provider, each record also carries the changes that provider's request makes to
    it; with --json, one object per record (none folded).
    """
    loaded = load(source)
    warn_problems(loaded.problems)
    ctx = loaded.context(options)
    if request is not None:
        req = _request(ctx, request)
        ctx = msgspec.structs.replace(ctx, changes=ctx.changes + req.changes)
    from sessionctx.explain import explain_json, explain_lines

    if as_json:
        emit_json({**explain_json(loaded.records, ctx, loaded.format),
                   "pending_calls": [p.to_json() for p in ctx.pending_calls]})
        return
    for line in explain_lines(loaded.records, ctx, loaded.label, loaded.format):
        click.echo(line)
    if loaded.format == "claude-code" and source.path is not None:
        from sessionctx.formats.claude_code.read import subagent_transcripts

        beside = subagent_transcripts(source.path)
        if beside:
            click.echo(f"\n{counted(len(beside), 'subagent transcript')} beside this "
                       "session (explain each on its own):")
            for name in beside:
                click.echo(f"  {name}")
    _print_pending(ctx)
