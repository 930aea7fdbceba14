"""The proxy's aiohttp application: each request forwarded as its own bytes unless the
provider would refuse it, answers streamed back as they arrive, unparsed.

A request on a route whose body sessionctx reads is decoded and checked with
`repair_request`; a valid body (and one that does not decode) goes upstream as the bytes the
client sent. A repaired body goes with its changes counted in `x-sessionctx-changes`. When the
upstream answers 400 with a history error, the request is rebuilt once and sent again; nothing
is retried after a byte of an answer has reached the client. A client that goes away cancels
the upstream request (the handler is cancelled and the upstream connection closed). Every
repaired request is recorded with what became of it, answered or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import aiohttp
import msgspec
from aiohttp import web
from yarl import URL

from sessionctx.providers.wire import ANTHROPIC, OPENAI_RESPONSES, RepairedRequest, repair_request
from sessionctx.proxy import reactive
from sessionctx.proxy.audit import Audit, Totals, record
from sessionctx.proxy.heap import keep_freed_blocks
from sessionctx.proxy.known import Known
from sessionctx.proxy.routes import Route, forwarded, oauth_refused, route, session_id, target

MAX_BODY = 256 * 1024 * 1024  # the provider says what is too large, not the proxy
OFF_LOOP = 256 * 1024  # a body larger than this is checked whole off the event loop
KNOWN_OFF_LOOP = 4 * 1024 * 1024  # and matched against the known bodies off the loop
WEBSOCKET_LINE = "supports_websockets = false"
STATE_NOTE = ("previous_response_id: the history before this request is kept by the provider; "
              "sessionctx cannot see or repair it")
T = TypeVar("T")


@dataclass(slots=True)
class Settings:
    upstreams: dict[str, str]
    store: str | None = None
    note_unpaired: bool = False
    log_bodies: bool = False
    quiet: bool = False
    totals: Totals = field(default_factory=Totals)


@dataclass(slots=True)
class _Outgoing:
    """One request as it goes upstream."""

    body: bytes
    fixed: RepairedRequest | None = None
    reactive: bool = False
    overhead: float = 0.0  # seconds spent checking and repairing
    status: int | None = None  # the status the client got
    outcome: str = ""  # what became of it, for the audit log ("": the client went away)
    answered: bool = False  # the upstream's answer reached the client whole
    counted: bool = False  # in the totals (as its answer starts, the record comes after it)
    valid: dict[str, Any] | None = None  # the body decoded, found valid whole: to remember


def make_app(settings: Settings) -> web.Application:
    # a compressed request goes on as the client's bytes, never inflated on the way
    app = web.Application(client_max_size=MAX_BODY,
                          handler_args={"max_field_size": 65536, "auto_decompress": False})
    proxy = _Proxy(settings)
    app.on_startup.append(proxy.start)
    app.on_cleanup.append(proxy.stop)
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    return app


class _Proxy:
    def __init__(self, settings: Settings) -> None:
        self.s = settings
        self.audit = Audit(settings.store)
        self.session: aiohttp.ClientSession | None = None
        self.known = Known()
        self.writes: set[asyncio.Task[None]] = set()

    async def start(self, app: web.Application) -> None:
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
        self.session = aiohttp.ClientSession(
            connector=connector, auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("User-Agent", "Accept-Encoding", "Accept", "Content-Type"),
            timeout=aiohttp.ClientTimeout(total=None, connect=30, sock_read=600))

    async def stop(self, app: web.Application) -> None:
        if self.writes:
            await asyncio.gather(*self.writes, return_exceptions=True)
        if self.session is not None:
            await self.session.close()
        await asyncio.to_thread(self.audit.close)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.s.totals.requests += 1
        where = route(request.method, request.path, request.headers)
        base = self.s.upstreams[where.provider]
        if request.headers.get("upgrade", "").lower() == "websocket":
            return _error(426, where, "sessionctx proxy carries no WebSocket; for Codex, set "
                          f"`{WEBSOCKET_LINE}` under the model provider in config.toml")
        if oauth_refused(request.headers, base):
            return _error(403, where, "sessionctx proxy does not forward a Claude subscription "
                          f"token to {base}: it is meant for https://api.anthropic.com only")
        raw = await _read(request)
        out = _Outgoing(raw)
        notes: list[str] = []
        if where.api is not None and raw and "content-encoding" not in request.headers:
            start = time.perf_counter()
            if await self._known(where.api, where.model, raw):
                out.overhead = time.perf_counter() - start
                return await self._send(request, where, base, out, notes)
            decoded = _decode(raw)
            if decoded is not None and _state_upstream(where, decoded):
                notes.append(STATE_NOTE)
            elif decoded is not None:
                out = await self._checked(where, raw, decoded)
        response = await self._send(request, where, base, out, notes)
        if out.valid is not None and where.api is not None:
            # after the answer: the client waits for the check, not for the memory of it
            await _run(len(raw) > OFF_LOOP, self.known.remember, where.api, where.model, raw,
                       out.valid)
        return response

    async def _known(self, api: str, model: str | None, raw: bytes) -> bool:
        """Whether the body is valid by the bodies already checked (a repeat or an extension
        of one); False: it is checked whole."""
        return await _run(len(raw) > KNOWN_OFF_LOOP, self.known.valid, api, model, raw)

    async def _checked(self, where: Route, raw: bytes, body: dict[str, Any],
                       force: bool = False, signatures: bool = False) -> _Outgoing:
        start = time.perf_counter()
        assert where.api is not None
        api, model, note = where.api, where.model, self.s.note_unpaired

        def check() -> RepairedRequest:
            return repair_request(api, body, model=model, note_unpaired=note, force=force,
                                  drop_signatures=signatures, from_text=True)

        try:
            fixed = await _run(len(raw) > OFF_LOOP, check)
        except Exception as exc:  # a body the repair cannot take goes as it came
            self._say(f"sessionctx proxy: could not check a {api} request ({exc!r}); sent as is")
            return _Outgoing(raw, overhead=time.perf_counter() - start)
        if not fixed.changed or (fixed.remaining and not fixed.changes):
            # nothing to repair, or a rebuild that repaired nothing: the client's own bytes
            valid = body if not fixed.changed and not fixed.violations and not force else None
            return _Outgoing(raw, overhead=time.perf_counter() - start, valid=valid)
        data = msgspec.json.encode(fixed.body)
        return _Outgoing(data, fixed, force, time.perf_counter() - start)

    async def _send(self, request: web.Request, where: Route, base: str, out: _Outgoing,
                    notes: list[str]) -> web.StreamResponse:
        assert self.session is not None
        url = target(base, request.raw_path)
        headers = forwarded(request.headers.items())
        sent = datetime.now(UTC)
        try:  # a repaired request is recorded whatever becomes of it (`out`: the last sent)
            upstream = await self._open(request, where, url, headers, out)
            if isinstance(upstream, web.StreamResponse):
                return upstream
            try:
                if upstream.status == 400 and where.api is not None and not out.reactive:
                    try:
                        answer = await upstream.read()
                    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                        return self._unanswered(where, out, "upstream broke off its answer",
                                                f"the upstream {url.split('?')[0]} broke off "
                                                "its answer", exc)
                    retry = await self._after_refusal(where, out, answer)
                    if retry is None:
                        return self._whole(upstream, answer, out, notes)
                    upstream.release()
                    out = retry
                    again = await self._open(request, where, url, headers, out)
                    if isinstance(again, web.StreamResponse):
                        return again
                    upstream = again
                return await self._stream(request, upstream, out, notes)
            finally:
                upstream.close()
        finally:
            self._record(request, where, out, sent)

    async def _open(self, request: web.Request, where: Route, url: str,
                    headers: list[tuple[str, str]], out: _Outgoing
                    ) -> aiohttp.ClientResponse | web.StreamResponse:
        assert self.session is not None
        try:
            return await self.session.request(request.method, URL(url, encoded=True),
                                              data=out.body,
                                              headers=headers, allow_redirects=False,
                                              compress=None, auto_decompress=False)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            return self._unanswered(where, out, "upstream unreachable",
                                    f"could not reach the upstream {url.split('?')[0]}", exc)

    def _unanswered(self, where: Route, out: _Outgoing, outcome: str, message: str,
                    exc: BaseException) -> web.Response:
        """The proxy's 502 when the upstream gave no answer to pass on."""
        self.s.totals.errors += 1
        reason = f"{exc.__class__.__name__}: {exc}"
        out.status, out.outcome = 502, f"{outcome}: {reason}"
        return _error(502, where, f"sessionctx proxy {message}: {reason}")

    async def _after_refusal(self, where: Route, out: _Outgoing,
                             answer: bytes) -> _Outgoing | None:
        found = reactive.refusal(400, answer)
        if found is None:
            return None
        body = _decode(out.body)
        if body is None or _state_upstream(where, body):
            return None
        retry = await self._checked(where, out.body, body, force=True,
                                    signatures=found.signatures)
        if retry.fixed is None:
            return None
        retry.reactive = True
        retry.overhead += out.overhead
        if out.fixed is not None:  # the first repair's changes came before this one's
            retry.fixed = RepairedRequest(
                retry.fixed.api, retry.fixed.body, True,
                out.fixed.changes + retry.fixed.changes,
                out.fixed.pending_calls + retry.fixed.pending_calls,
                out.fixed.violations, retry.fixed.remaining)
        self.s.totals.retried += 1
        return retry

    def _headers(self, upstream: aiohttp.ClientResponse, out: _Outgoing,
                 notes: list[str]) -> list[tuple[str, str]]:
        headers = forwarded((k.decode('latin-1'), v.decode('latin-1'))
                            for k, v in upstream.raw_headers)
        if out.fixed is not None:
            headers.append(("x-sessionctx-changes", str(len(out.fixed.changes))))
            headers.append(("x-sessionctx-pending-calls", str(len(out.fixed.pending_calls))))
            headers.append(("x-sessionctx-overhead-ms", f"{out.overhead * 1000:.2f}"))
        headers.extend(("x-sessionctx-note", n) for n in notes)
        return headers

    def _whole(self, upstream: aiohttp.ClientResponse, answer: bytes, out: _Outgoing,
               notes: list[str]) -> web.Response:
        out.status, out.outcome = upstream.status, f"upstream answered {upstream.status}"
        out.answered = True
        self._count(out)
        response = web.Response(status=upstream.status, body=answer)
        for k, v in self._headers(upstream, out, notes):
            response.headers.add(k, v)
        return response

    async def _stream(self, request: web.Request, upstream: aiohttp.ClientResponse,
                      out: _Outgoing, notes: list[str]) -> web.StreamResponse:
        out.status = upstream.status
        self._count(out)
        response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        for k, v in self._headers(upstream, out, notes):
            response.headers.add(k, v)
        length = upstream.headers.get("content-length")
        if length is not None and length.isdigit():
            response.content_length = int(length)
        await response.prepare(request)
        try:
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            # the upstream broke off mid-answer: the client sees the answer end early, as it
            # would have without the proxy (a byte already sent cannot be taken back)
            self.s.totals.errors += 1
            out.outcome = (f"upstream answered {upstream.status}, cut off (upstream or client "
                           f"gone): {exc.__class__.__name__}: {exc}")
            self._say(f"sessionctx proxy: an answer was cut off (upstream or client gone): {exc!r}")
            with contextlib.suppress(Exception):
                request.transport and request.transport.close()  # type: ignore[func-returns-value]
            return response
        await response.write_eof()
        out.outcome, out.answered = f"upstream answered {upstream.status}", True
        return response

    def _record(self, request: web.Request, where: Route, out: _Outgoing,
                sent: datetime) -> None:
        fixed = out.fixed
        if fixed is None:
            return
        if not out.outcome:  # the handler was cancelled: the client left
            out.outcome = ("client went away" if out.status is None else
                           f"upstream answered {out.status}, client went away")
        self._count(out)
        self.s.totals.unanswered += not out.answered
        entry = record(fixed, sent, session_id(request.headers), request.path, where.model,
                       reactive=out.reactive, status=out.status, outcome=out.outcome,
                       overhead=out.overhead, body=self.s.log_bodies)
        self._say(f"sessionctx proxy: repaired a {fixed.api} request: {len(fixed.changes)} "
                  f"changes, {len(fixed.pending_calls)} pending calls")
        task = asyncio.get_running_loop().create_task(self._write(entry))
        self.writes.add(task)
        task.add_done_callback(self.writes.discard)

    def _count(self, out: _Outgoing) -> None:
        """A repaired request in the totals, once, before the client has all of its answer."""
        if out.fixed is None or out.counted:
            return
        out.counted = True
        totals = self.s.totals
        totals.repaired += 1
        totals.changes += len(out.fixed.changes)
        totals.pending += len(out.fixed.pending_calls)

    async def _write(self, entry: dict[str, Any]) -> None:
        try:
            await asyncio.to_thread(self.audit.write, entry)
        except Exception as exc:
            self._say(f"sessionctx proxy: could not write the audit log: {exc}")

    def _say(self, text: str) -> None:
        if not self.s.quiet:
            print(text, file=sys.stderr, flush=True)


async def _run(off_loop: bool, work: Callable[..., T], *args: Any) -> T:
    """`work(*args)`, in a thread when it is large enough to hold up the other requests."""
    return await asyncio.to_thread(work, *args) if off_loop else work(*args)


async def _read(request: web.Request) -> bytes:
    """The body, joined once from the chunks as they came (aiohttp's `read` joins what is
    buffered, grows a bytearray and copies that: about 4 ms more CPU for a 10 MB body); one
    over MAX_BODY is refused with 413 before anything goes upstream."""
    if not request.body_exists:
        return b""
    chunks: list[bytes] = []
    size = 0
    async for data, _ in request.content.iter_chunks():
        size += len(data)
        if size > MAX_BODY:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY, actual_size=size)
        chunks.append(data)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)  # b"" when none came


def _decode(raw: bytes) -> dict[str, Any] | None:
    try:
        body = msgspec.json.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def _error(status: int, where: Route, message: str) -> web.Response:
    """An answer of the proxy's own, in the shape the client's API uses for errors."""
    if where.provider == "anthropic" or where.api == ANTHROPIC:
        body: dict[str, Any] = {"type": "error", "error": {"type": "api_error",
                                                           "message": message}}
    else:
        body = {"error": {"message": message, "type": "sessionctx_proxy_error",
                          "code": status}}
    return web.Response(status=status, body=msgspec.json.encode(body),
                        content_type="application/json",
                        headers={"x-sessionctx-proxy-error": "1"})


def new_loop() -> asyncio.AbstractEventLoop:
    """The proxy's event loop: uvloop's where it is installed (the `proxy` extra brings it;
    measured, it spends about half the CPU of asyncio's carrying a 1 MB body), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


async def serve(settings: Settings, host: str, port: int,
                ready: asyncio.Future[int] | None = None) -> None:
    """Serves until cancelled; `ready` gets the port once it listens."""
    keep_freed_blocks()
    runner = web.AppRunner(make_app(settings), handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []
    bound = int(sockets[0].getsockname()[1]) if sockets else port
    if ready is not None:
        ready.set_result(bound)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def _state_upstream(where: Route, body: dict[str, Any]) -> bool:
    """A Responses request that continues a stored response: the history before it is kept by
    the provider, out of the proxy's sight, so neither the check nor a rebuild after a refusal
    may touch it (an output whose call lives upstream would be taken for an orphan)."""
    return where.api == OPENAI_RESPONSES and bool(body.get("previous_response_id"))
