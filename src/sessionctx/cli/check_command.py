"""check: whether a session can be sent as stored and, with --provider, whether the body
`build --provider` sends passes that provider's validator; what is broken as stored, at its
stored record."""

from __future__ import annotations

import itertools
import os
import shlex
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import click
import msgspec

from sessionctx.changes import Change, Source
from sessionctx.cli.app import JsonList, emit_json, main
from sessionctx.cli.context_commands import (
    _print_pending,
    _print_undefined,
    _request,
    _undefined,
)
from sessionctx.cli.loader import Loaded, SessionSource, load
from sessionctx.cli.options import (
    RequestSpec,
    build_options,
    json_option,
    provider_options,
    source_options,
)
from sessionctx.context import BuildOptions, Context, nothing_sent
from sessionctx.pairing import REUSED_KIND, repeated_calls, reused_note
from sessionctx.records import MAX_LISTED_PROBLEMS, MESSAGE, Problem, unlisted_note
from sessionctx.render import counted


def problems_of(loaded: Loaded, ctx: Context) -> Iterator[dict[str, Any]]:
    """What makes a history unfit to send as stored: read problems and every repair."""
    for p in loaded.problems:
        yield {"kind": p.kind, "message": str(p), "record": _problem_record(p)}
    for c in ctx.changes:
        if c.is_repair:
            yield {"kind": c.kind, "message": c.reason,
                   "record": c.record.to_json() if c.record else None}
    for r in repeated_calls(ctx.messages):
        yield {"kind": REUSED_KIND, "message": reused_note(r.call_id),
               "record": ctx.sources[r.call_slot].to_json()}
    empty = nothing_sent(loaded.records, ctx)
    if empty is not None:
        yield {"kind": "nothing_sent", "message": empty, "record": None}
    yield from _images_too_large(ctx)


def _listed(problems: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first MAX_LISTED_PROBLEMS problems, and one entry counting the rest, so a session
    of millions of broken records is checked in the memory of a thousand problems."""
    out: list[dict[str, Any]] = []
    unlisted = 0
    for problem in problems:
        if len(out) < MAX_LISTED_PROBLEMS:
            out.append(problem)
        else:
            unlisted += 1
    if unlisted:
        out.append({"kind": "unlisted", "message": unlisted_note(unlisted), "record": None,
                    "count": unlisted})
    return out


def _images_too_large(ctx: Context) -> list[dict[str, Any]]:
    """Images whose header gives more pixels than are safe to decode: no downscaling can bring
    one under a provider's limit, so the image cannot be sent as stored."""
    from sessionctx.providers import images

    out = []
    for i, j, data in images.stored_images(ctx.messages):
        size = images.stored_dimensions(data)
        if size is not None and not images.decode_pixels(size):
            where = ctx.sources[i].of_block(j).to_json()
            out.append({"kind": "image_too_large", "record": where,
                        "message": f"image of {size[0]}x{size[1]} px is over "
                                   f"{images.MAX_DECODE_PIXELS:,} pixels, too large to decode "
                                   "safely, so it cannot be downscaled to any provider's "
                                   "pixel limit"})
    return out


def _provider_report(loaded: Loaded, ctx: Context, spec: RequestSpec) -> dict[str, Any]:
    """What `build --provider` sends for these options, checked by the provider's validator
    (the verdict), and what of the stored history that provider would refuse as it is (each
    located at its stored record: what the build repairs)."""
    from sessionctx.located import located
    from sessionctx.providers import naive_request, validate

    req = _request(ctx, spec)
    built = validate(req.body, spec.provider, req.model, thinking=spec.thinking,
                     prefill=spec.prefill is not None)
    records = [r for r in loaded.records if r.kind == MESSAGE]
    stored = [r.view for r in records]
    sources = [r.source for r in records]
    naive = naive_request(stored, spec.provider, req.model, spec.system, spec.options()).body
    as_stored = located(validate(naive, spec.provider, req.model), stored, sources, naive)
    return {"name": spec.provider, "model": req.model,
            "violations": located(built, ctx.messages, ctx.sources, req.body),
            "as_stored": as_stored,
            "changes": [c.to_json() for c in req.changes],
            "undefined_tools": _undefined(req)}


def _problem_record(problem: Problem) -> dict[str, Any] | None:
    return {"line": problem.line} if problem.line is not None else None


@main.command()
@json_option
@build_options
@provider_options
@source_options()
def check(source: SessionSource, as_json: bool, options: BuildOptions,
          request: RequestSpec | None) -> None:
    """Say why the session at PATH cannot be sent as stored. Exit 0 ready, 1 not, 2 unreadable.

    PATH may be a directory: each session file in it is checked (a Claude Code session's
    folder: that session and its subagents' transcripts), and the exit code is the worst.
    With --provider, also validate the built request body and list what the stored history,
    converted as it is, would trigger at that provider.
    """
    if source.path is not None and source.path != "-" and os.path.isdir(source.path):
        sys.exit(_check_folder(source, as_json, options, request))
    verdict = _verdict(source, options, request, as_json)
    if as_json:
        emit_json(verdict.out)
    else:
        _print_verdict(verdict, source.path)
        _print_subagents(source, verdict.out["format"])
    sys.exit(verdict.code)


def _print_subagents(source: SessionSource, fmt: str) -> None:
    """Where a Claude Code session's subagent transcripts are, so they are not forgotten."""
    if fmt != "claude-code" or source.path is None:
        return
    from sessionctx.formats.claude_code.read import subagent_transcripts

    beside = subagent_transcripts(source.path)
    if beside:
        folder = source.path[: -len(".jsonl")]
        click.echo(f"{counted(len(beside), 'subagent transcript')} beside this session: "
                   f"`sessionctx check {folder}` checks them with it")


class _Verdict(msgspec.Struct):
    """One session's check: its exit code, its --json object, and what the text shows."""

    code: int
    out: dict[str, Any]
    label: str
    ctx: Context
    repairable: bool = False  # something `repair` takes out of the file


def _written_back(fmt: str) -> bool:
    """Whether `repair` writes this format back (opencode's and Goose's it does not)."""
    from sessionctx.formats.registry import BY_NAME

    entry = BY_NAME.get(fmt)
    return entry is None or entry.lines or entry.document


def _verdict(source: SessionSource, options: BuildOptions, request: RequestSpec | None,
             as_json: bool) -> _Verdict:
    """The check of one session; the JSON of its changes only for --json, since they are a
    change per skipped record, and their JSON would cost more than the records themselves.

    Without --provider the verdict is on the history as stored. With it, the verdict is on
    the body `build --provider` sends with the same options (its validator's violations),
    and what is broken as stored is listed under it, at its stored record."""
    loaded = load(source)
    ctx = loaded.context(options)
    stored = _listed(problems_of(loaded, ctx))
    repairable = _written_back(loaded.format) and any(
        p["kind"] not in _NOT_REPAIRABLE for p in stored)
    out: dict[str, Any] = {"ok": not stored, "format": loaded.format, "problems": stored}
    if request is not None:
        report = _provider_report(loaded, ctx, request)
        name = report["name"]
        out["problems"] = _listed({**v, "kind": f"{name}: built body"}
                                  for v in report["violations"])
        out["ok"] = not out["problems"]
        out["as_stored"] = _listed(itertools.chain(
            stored, ({**v, "kind": f"{name}: as stored"} for v in report["as_stored"])))
        out["provider"] = report
    if as_json:
        out["changes"] = JsonList(ctx.changes, Change.to_json)
        out["pending_calls"] = [p.to_json() for p in ctx.pending_calls]
    return _Verdict(0 if out["ok"] else 1, out, loaded.label, ctx, repairable)


# what `check` finds that `repair` does not take out of the file
_NOT_REPAIRABLE = frozenset({"nothing_sent", "image_too_large", "unlisted"})


def _print_problems(problems: list[dict[str, Any]]) -> None:
    for problem in problems:
        where = problem["record"]
        label = Source(**where).label() if where else problem.get("path", "-")
        click.echo(f"  {label:<16} {problem['kind']:<28} {problem['message']}")


def _print_verdict(verdict: _Verdict, path: str | None = None) -> None:
    out = verdict.out
    problems = out["problems"]
    report = out.get("provider")
    messages = counted(len(verdict.ctx.messages), "message")
    if report is None:
        if out["ok"]:
            click.echo(f"{verdict.label}: ready to send as stored ({messages})")
        else:
            click.echo(f"{verdict.label}: {counted(len(problems), 'problem')} before it can "
                       "be sent")
            _print_problems(problems)
    else:
        target = f"{report['name']} ({report['model']})"
        changes = counted(len(verdict.ctx.changes) + len(report["changes"]), "change")
        if out["ok"]:
            click.echo(f"{verdict.label}: ready to send to {target}: {messages}, {changes} "
                       "made by the build")
        else:
            click.echo(f"{verdict.label}: the body built for {target} breaks "
                       f"{counted(len(problems), 'rule')}")
            _print_problems(problems)
            if any("requires tool definitions" in p["message"] for p in problems):
                click.echo("  the ways out: --tools FILE (the agent's definitions), "
                           "--tools-as-text or --placeholder-tools")
        if out["as_stored"]:
            around = ", which the build works around" if out["ok"] else ""
            click.echo(f"as stored ({counted(len(out['as_stored']), 'problem')}{around}):")
            _print_problems(out["as_stored"])
        _print_undefined(report["undefined_tools"])
    _print_pending(verdict.ctx)
    if verdict.repairable and path is not None and path != "-":
        click.echo(f"next: `sessionctx repair {shlex.quote(path)} --dry-run` shows what a "
                   "repair takes out of the file")


def _check_folder(source: SessionSource, as_json: bool, options: BuildOptions,
                  request: RequestSpec | None) -> int:
    """Check each session file of the directory at PATH; the worst exit code."""
    from sessionctx.errors import SessionctxError
    from sessionctx.folders import session_files

    assert source.path is not None
    files = session_files(source.path)
    codes: list[int] = []
    outs: list[dict[str, Any]] = []
    for path in files:
        try:
            verdict = _verdict(msgspec.structs.replace(source, path=path), options, request,
                               as_json)
        except SessionctxError as exc:
            codes.append(2)
            outs.append({"path": path, "exit": 2, "error": str(exc)})
            if not as_json:
                click.echo(f"sessionctx: {exc}", err=True)
            continue
        codes.append(verdict.code)
        outs.append({"path": path, "exit": verdict.code, **verdict.out})
        if not as_json:
            _print_verdict(verdict, path)
    worst = max(codes)
    if as_json:
        emit_json({"ok": worst == 0, "exit": worst, "files": outs})
    else:
        counts = [sum(c == code for c in codes) for code in (0, 1, 2)]
        click.echo(f"{source.path}: {counted(len(files), 'session file')}: {counts[0]} ready, "
                   f"{counts[1]} with problems, {counts[2]} unreadable")
    return worst
