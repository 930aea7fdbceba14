"""The proxy on an event loop of its own in a thread, as `sessionctx run` runs it (uvloop's
where it is installed, as there), every provider's upstream at one base URL (the strict
stub's, tests/strict_stub.py)."""

from __future__ import annotations

import asyncio
import http.client
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from sessionctx.proxy.audit import Totals
from sessionctx.proxy.server import Settings, new_loop, serve
from tests.strict_stub import in_thread


@dataclass
class RunningProxy:
    url: str
    totals: Totals
    loop: asyncio.AbstractEventLoop  # the proxy's own, in its thread


@contextmanager
def running_proxy(base: str, store: str | None = None, *,
                  note_unpaired: bool = False) -> Iterator[RunningProxy]:
    """The proxy on 127.0.0.1 (a free port), forwarding to `base`."""
    settings = Settings({"anthropic": base, "openai": base, "gemini": base}, store,
                        note_unpaired, quiet=True)

    async def begin() -> tuple[RunningProxy, Callable[[], Awaitable[None]]]:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[int] = loop.create_future()
        task = loop.create_task(serve(settings, "127.0.0.1", 0, ready))
        port = await ready

        async def stop() -> None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

        return RunningProxy(f"http://127.0.0.1:{port}", settings.totals, loop), stop

    with in_thread(begin, new_loop) as running:
        yield running


def post(url: str, path: str, body: bytes, headers: dict[str, str] | None = None,
         method: str = "POST", timeout: float = 30) -> tuple[int, dict[str, str], bytes]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request(method, path, body=body, headers={"content-type": "application/json",
                                                       "x-api-key": "k", **(headers or {})})
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()
