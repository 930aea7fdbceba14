"""report: one HTML page that shows a session three ways, with every change and its reason."""

from __future__ import annotations

import os
import sys

import click

from sessionctx.cli.app import fail, main, warn_problems
from sessionctx.cli.loader import SessionSource, load
from sessionctx.cli.options import RequestSpec, build_options, provider_options, source_options
from sessionctx.context import BuildOptions
from sessionctx.render import counted


def default_output(source: SessionSource) -> str:
    """`<session>.report.html` in the working directory."""
    if source.path is not None and source.path != "-":
        stem = os.path.basename(source.path)
        for suffix in (".jsonl", ".json", ".traj"):
            stem = stem.removesuffix(suffix)
        return f"{stem}.report.html"
    return f"{source.session or 'stdin'}.report.html"


@main.command()
@click.option("-o", "--output", metavar="FILE",
              help="Where to write the page ('-' for stdout; default <session>.report.html in "
                   "the working directory).")
@click.option("--open", "open_page", is_flag=True, help="Open the page in a browser when written.")
@build_options
@provider_options
@source_options()
def report(source: SessionSource, output: str | None, open_page: bool, options: BuildOptions,
           request: RequestSpec | None) -> None:
    """Write one self-contained HTML page of the session at PATH: each stored record beside
    what a person sees and what reaches the model (and, with --provider, the body's turn),
    every change in place with its reason, pending calls first. The page loads nothing from
    the network."""
    from sessionctx.cli.context_commands import _request
    from sessionctx.report import report_parts

    loaded = load(source)
    warn_problems(loaded.problems)
    ctx = loaded.context(options)
    body = provider = None
    if request is not None:
        from sessionctx.providers import validate

        req = _request(ctx, request)
        body = req.body
        provider = {"name": req.provider, "model": req.model,
                    "violations": [v.to_json() for v in validate(body, req.provider,
                                                                 req.model)]}
    page = report_parts(loaded.records, ctx, label=loaded.label, fmt=loaded.format,
                       problems=loaded.problems, off_branch=loaded.off_branch, body=body,
                       provider=provider)
    target = output or default_output(source)
    if target == "-":
        for part in page:
            sys.stdout.buffer.write(part)
        sys.stdout.flush()
        return
    from sessionctx.files import write_atomically

    try:
        write_atomically(target, page)
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")
    click.echo(f"wrote {target} ({counted(len(loaded.records), 'record')}, "
               f"{counted(len(ctx.messages), 'context message')}, "
               f"{counted(len(ctx.pending_calls), 'pending call')})", err=True)
    if open_page:
        import webbrowser
        from pathlib import Path  # only to open the page

        webbrowser.open(Path(target).resolve().as_uri())

