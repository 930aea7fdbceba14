"""`sessionctx proxy` (serve, and `proxy log`) and `sessionctx run`. The server lives in
`sessionctx.proxy.server`, imported only when a proxy starts: it needs aiohttp (the
`sessionctx[proxy]` extra), which the other commands never load."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from sessionctx.cli.app import emit_json, fail, main

if TYPE_CHECKING:
    import asyncio

    from sessionctx.proxy.child import Plan

_HELP_UPSTREAM = ("NAME=URL: the base URL of a provider (anthropic, openai, gemini); the "
                  "public hosts otherwise. Requests go to these and nowhere else.")


def _settings(upstream: tuple[str, ...], store: str | None, note_unpaired: bool,
              log_bodies: bool, quiet: bool = False) -> Any:
    try:
        from sessionctx.proxy.server import Settings
    except ImportError as exc:
        fail(f"the proxy needs aiohttp: pip install 'sessionctx[proxy]' ({exc})")
    from sessionctx.proxy.routes import upstreams
    return Settings(upstreams(upstream), store, note_unpaired, log_bodies, quiet)


@main.group(invoke_without_command=True)
@click.option("--port", type=int, default=8787, show_default=True,
              help="The port to listen on, on 127.0.0.1 (0: a free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on; anything but loopback exposes your keys' use.")
@click.option("--upstream", multiple=True, metavar="NAME=URL", help=_HELP_UPSTREAM)
@click.option("--store", metavar="URL", help="Where the audit log goes (a sessionctx store "
              "URL; default $SESSIONCTX_STORE or the user's sessions.db).")
@click.option("--note-unpaired", is_flag=True,
              help="After a removed unanswered call, tell the model it was interrupted.")
@click.option("--log-bodies", is_flag=True,
              help="Keep each repaired request's body in the audit log (never its headers).")
@click.pass_context
def proxy(ctx: click.Context, port: int, host: str, upstream: tuple[str, ...],
          store: str | None, note_unpaired: bool, log_bodies: bool) -> None:
    """Serve a repairing proxy in front of the providers: valid requests pass byte for byte,
    ones the provider would refuse are repaired (never with an invented result) and logged."""
    if ctx.invoked_subcommand is not None:
        return
    settings = _settings(upstream, store, note_unpaired, log_bodies)
    import asyncio

    from sessionctx.proxy.server import new_loop, serve

    async def started() -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[int] = loop.create_future()
        task = asyncio.create_task(serve(settings, host, port, ready))
        bound = await asyncio.wait_for(asyncio.shield(ready), 30) if not task.done() else 0
        click.echo(f"sessionctx proxy on http://{host}:{bound} -> "
                   + ", ".join(f"{k} {v}" for k, v in settings.upstreams.items()), err=True)
        await task

    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(started())
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    click.echo(settings.totals.line(), err=True)


@proxy.command("log")
@click.option("--store", metavar="URL", help="The store the proxy wrote to.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def proxy_log(store: str | None, as_json: bool) -> None:
    """What the proxy repaired: time, session, API, model, changes, pending calls."""
    from sessionctx.proxy.audit import entries, line
    found = list(entries(store))
    if as_json:
        emit_json({"entries": found})
        return
    if not found:
        click.echo("the proxy has repaired nothing yet")
    for entry in found:
        click.echo(line(entry))


@main.command(context_settings={"ignore_unknown_options": True,
                                "allow_interspersed_args": False})
@click.option("--upstream", multiple=True, metavar="NAME=URL", help=_HELP_UPSTREAM)
@click.option("--store", metavar="URL", help="Where the audit log goes.")
@click.option("--note-unpaired", is_flag=True,
              help="After a removed unanswered call, tell the model it was interrupted.")
@click.option("--log-bodies", is_flag=True, help="Keep repaired bodies in the audit log.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(upstream: tuple[str, ...], store: str | None, note_unpaired: bool, log_bodies: bool,
        command: tuple[str, ...]) -> None:
    """Run COMMAND with its providers' base URLs pointed at a repairing proxy on a free port;
    print what was repaired when it exits, and exit with its code."""
    import asyncio
    import threading

    from sessionctx.proxy.child import plan
    port = _free_port()
    child = plan(list(command), dict(os.environ), port)
    settings = _settings((*child.upstreams, *upstream), store, note_unpaired, log_bodies,
                         quiet=True)
    from sessionctx.proxy.server import new_loop, serve
    loop = new_loop()
    ready: asyncio.Future[int] = loop.create_future()
    task = loop.create_task(serve(settings, "127.0.0.1", port, ready))
    thread = threading.Thread(target=_run_loop, args=(loop, task), daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(_wait(ready), loop).result(30)
    except Exception as exc:
        fail(f"the proxy did not start: {exc}")
    code = _with_copies(child, lambda: _child(child.argv, child.env))
    loop.call_soon_threadsafe(task.cancel)
    thread.join(10)
    click.echo(settings.totals.line(), err=True)
    sys.exit(code)


def _with_copies(child: Plan, start: Callable[[], int]) -> int:
    """`start()` with the settings files the child reads from a copy in a temporary folder;
    what the child wrote to a copy goes back to its source, the proxy's URLs taken out."""
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory(prefix="sessionctx-run-") as folder:
        for i, copy in enumerate(child.copies):
            path = Path(folder) / f"{i}-{copy.source.name}"
            path.write_text(copy.text, encoding="utf-8")
            child.env[copy.var] = str(path)
        code = start()
        for i, copy in enumerate(child.copies):
            try:
                after = (Path(folder) / f"{i}-{copy.source.name}").read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if after != copy.text:
                copy.source.write_text(copy.written_back(after), encoding="utf-8")
    return code


async def _wait(ready: asyncio.Future[int]) -> int:
    return await ready


def _run_loop(loop: asyncio.AbstractEventLoop, task: asyncio.Task[None]) -> None:
    import asyncio
    import contextlib
    asyncio.set_event_loop(loop)
    with contextlib.suppress(asyncio.CancelledError):
        loop.run_until_complete(task)
    loop.close()


def _child(argv: list[str], env: dict[str, str]) -> int:
    import signal
    import subprocess
    try:
        proc = subprocess.Popen(argv, env=env)
    except OSError as exc:
        fail(f"cannot run {argv[0]}: {exc.strerror or exc}")
    forward = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
    previous = {s: signal.signal(s, lambda n, _f: proc.send_signal(n)) for s in forward}
    try:
        code = proc.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return code if code >= 0 else 128 - code


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
