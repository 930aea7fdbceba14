"""The latency `sessionctx proxy` adds beside LiteLLM's proxy, on the same upstream and bodies.

Three processes besides this one: an upstream (benchmarks/fast_upstream.py), sessionctx's proxy
and LiteLLM's proxy (`litellm[proxy]`, one worker, no database, its native `/v1/messages`
route, configured for the same upstream). For each body size (10 KB, 1 MB, 10 MB of a valid
Anthropic request), streaming and not, the three paths take turns: direct, sessionctx, LiteLLM,
the order turning each round, each request sent once the three servers are idle; each request's
added latency is proxied − direct of the same round. Prints p50/p99 of the added latency, the
number of samples each rests on, and sessionctx's ratio to LiteLLM's. Three more lines at 1 MB:
the same conversation with a turn more each request (what agents send), the same for an OpenAI
Responses conversation (a Codex loop: a step of reasoning, call and output more each request,
on `/v1/responses`), and bodies of conversations never seen before (checked whole). Then 8
concurrent 1 MB requests, the three sides taking turns a round of 8 at a time (requests per
second per side, direct as the bound, and the ratio); the CPU time each proxy process spends
per 1 MB request of each kind (Linux), which a busy machine does not blur as it does wall
time; and a repaired 1 MB request (an unanswered call) against one build of the same history,
in process (goal: <= 2x).

The upstream costs less than the proxies: a proxy's throughput can only be measured below what
its upstream serves. The strict stub (tests/strict_stub.py) decodes and checks every body in
Python, about what a proxy does, so with it upstream direct requests were barely faster than
proxied ones and no proxy could show more than about 5x LiteLLM's throughput. The fast
upstream answers with the strict stub's own bytes for a valid request and checks nothing; what
arrived is checked instead on the first two requests of each line, outside the timing: through
sessionctx the body byte for byte, through LiteLLM (which writes the body anew) by the strict
stub's rules (tests/stub_servers.py), and every answer must carry the upstream's text. Every
body sent is valid; the repaired request is measured in process, with no upstream.

Run: .venv/bin/python benchmarks/bench_proxy.py [rounds] [sizes]
     rounds: default 200 (10 MB: a tenth, at least 4); sizes: bytes, comma-separated (default
     10000,1000000,10000000)
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: the package and tests/
from benchmarks.fast_upstream import ANTHROPIC_MODEL, LAST, RESPONSES_MODEL  # noqa: E402
from tests.stub_servers import anthropic_problem, responses_problem  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
       "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR",
       # a loopback-only benchmark: no key to guard
       "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true"}
UPSTREAM = ROOT / "benchmarks" / "fast_upstream.py"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def body(size: int, stream: bool, broken: bool = False, first: str = "") -> bytes:
    return json.dumps(_request(_history(size, first), stream, broken),
                      ensure_ascii=False).encode()


def growing(size: int, count: int) -> Iterator[bytes]:
    """`count` bodies of one conversation, each the one before with a turn more (made as they
    are sent: a few hundred 1 MB bodies at once would be held for nothing)."""
    messages = _history(size, "")
    for i in range(count):
        messages += [{"role": "user", "content": f"next {i}"},
                     {"role": "assistant", "content": f"done {i}"}]
        yield json.dumps(_request(messages, False, False), ensure_ascii=False).encode()


def growing_responses(size: int, count: int) -> Iterator[bytes]:
    """`count` Responses bodies of one Codex loop, each the one before with a step more."""
    text = "é word " * 40

    def step(i: int) -> list[dict[str, Any]]:
        return [{"type": "reasoning", "id": f"rs_{i}", "summary": [],
                 "encrypted_content": "enc" * 20},
                {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": "ls",
                 "arguments": "{}"},
                {"type": "function_call_output", "call_id": f"call_{i}", "output": text}]

    items: list[Any] = [{"role": "user", "content": "look around"}]
    n, length = 0, _size(items)
    while length < size:  # each step counted: its ids grow longer
        more = step(n)
        items += more
        n, length = n + 1, length + _size(more)
    for _ in range(count):
        items += step(n)
        n += 1
        yield json.dumps({"model": RESPONSES_MODEL, "instructions": "You are a coding agent.",
                          "input": items, "store": False, "stream": False,
                          "include": ["reasoning.encrypted_content"],
                          "tools": [{"type": "function", "name": "ls",
                                     "parameters": {"type": "object"}}]},
                         ensure_ascii=False).encode()


def fresh(size: int, count: int, label: str) -> Iterator[bytes]:
    """`count` bodies of conversations never seen before, each its own first message."""
    for i in range(count):
        yield body(size, False, first=f"{label} {i}")


RESPONSES = "/v1/responses"


def _size(value: Any) -> int:
    """Bytes of `value` as the bodies are sent: UTF-8, non-ASCII unescaped."""
    return len(json.dumps(value, ensure_ascii=False).encode())


def _history(size: int, first: str) -> list[Any]:
    turn = "é word " * 40
    pair = [{"role": "user", "content": turn}, {"role": "assistant", "content": turn}]
    messages: list[Any] = [{"role": "user", "content": first + turn}, pair[1]]
    length = _size(messages)
    while length < size:  # counted as it grows, not dumped again each time
        messages += pair
        length += _size(pair)  # "[a, b]" is as long as ", a, b"
    return messages


def _request(history: list[Any], stream: bool, broken: bool) -> dict[str, Any]:
    messages = list(history)
    if broken:
        messages += [{"role": "user", "content": "x"}, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]}]
    messages.append({"role": "user", "content": "go on"})
    return {"model": ANTHROPIC_MODEL, "max_tokens": 16, "messages": messages,
            "tools": [{"name": "ls", "input_schema": {"type": "object"}}], "stream": stream}


async def _ready(url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as s:
        while time.monotonic() < deadline:
            try:
                async with s.get(url) as r:
                    await r.read()
                    return
            except aiohttp.ClientError:
                await asyncio.sleep(0.3)
    raise SystemExit(f"{url} did not start")


async def _one(s: aiohttp.ClientSession, url: str, data: bytes,
               path: str = "/v1/messages") -> tuple[float, bytes]:
    """One request: its wall time in seconds, and the answer."""
    headers = {"content-type": "application/json", "x-api-key": "k",
               "anthropic-version": "2023-06-01"} if path != RESPONSES else {
        "content-type": "application/json", "authorization": "Bearer k"}
    start = time.perf_counter()
    async with s.post(url + path, data=data, headers=headers) as r:
        answer = await r.read()
        if r.status != (404 if path == "/v1/passed" else 200):
            raise SystemExit(f"{url}: {r.status} {answer[:300]!r}")
    return time.perf_counter() - start, answer


async def _check(s: aiohttp.ClientSession, upstream: str, name: str, data: bytes,
                 answer: bytes, path: str) -> None:
    """What reached the upstream and what came back, for a warm-up request (not timed): sent
    direct or through sessionctx, the same bytes; through LiteLLM, which writes the body anew,
    a body the strict stub's rules accept. Every answer carries the upstream's text."""
    async with s.get(upstream + LAST) as r:
        arrived = await r.read()
    if name == "theirs":
        rules = responses_problem if path == RESPONSES else anthropic_problem
        problem = rules(json.loads(arrived))
        if problem is not None:
            raise SystemExit(f"LiteLLM sent upstream a body the API would refuse: {problem}")
    elif arrived != data:
        raise SystemExit(f"{name}: the upstream got other bytes than were sent")
    if b"answer 1" not in answer:
        raise SystemExit(f"{name}: the answer lacks the upstream's text: {answer[:300]!r}")


def _rank(count: int, q: float) -> int:
    """The nearest rank (1-based, smallest first) of quantile `q` among `count` samples."""
    return max(1, math.ceil(q * count))


def _pct(values: list[float], q: float) -> float:
    return sorted(values)[_rank(len(values), q) - 1]


async def _row(s: aiohttp.ClientSession, urls: tuple[str, str, str], label: str,
               bodies: Iterable[bytes], path: str = "/v1/messages") -> None:
    """One line of the table: each body sent direct, through sessionctx and through LiteLLM
    in turn, the order turning each round so that no path always follows another (what one
    leaves running after its answer, such as LiteLLM's logging, falls on each in turn), and
    each request sent once the three servers are idle (`_settle`); the first two of `bodies`
    warm up, and what they carried is checked (`_check`)."""
    names = ("direct", "ours", "theirs")
    added: dict[str, list[float]] = {"ours": [], "theirs": []}
    for i, data in enumerate(bodies):
        took: dict[str, float] = {}
        for k in range(3):
            name = names[(i + k) % 3]
            await _settle()
            took[name], answer = await _one(s, urls[names.index(name)], data, path)
            if i < 2:
                await _check(s, urls[0], name, data, answer, path)
        if i >= 2:
            for name in added:
                added[name].append((took[name] - took["direct"]) * 1000)
    count = len(added["ours"])
    o50, o99 = _pct(added["ours"], .5), _pct(added["ours"], .99)
    t50, t99 = _pct(added["theirs"], .5), _pct(added["theirs"], .99)
    print(f"{label:>13} | {o50:8.2f} / {o99:8.2f}           | {t50:8.2f} / {t99:8.2f}        | "
          f"{o50 / t50 if t50 > 0 else float('nan'):.3f} / "
          f"{o99 / t99 if t99 > 0 else float('nan'):.3f} | {count:>4}, "
          f"{count + 1 - _rank(count, .99)}")


async def measure(direct: str, ours: str, theirs: str, rounds: int,
                  sizes: tuple[int, ...]) -> None:
    print(f"{'body':>6} {'stream':>6} | sessionctx added p50 / p99 ms | LiteLLM added p50 / "
          "p99 ms | ratio p50 / p99 | samples, p99 = the n-th largest")
    urls = (direct, ours, theirs)
    async with aiohttp.ClientSession() as s:
        for size in sizes:
            for stream in (False, True):
                n = rounds if size < 10_000_000 else max(4, rounds // 10)
                await _row(s, urls, f"{size // 1000:>5}K {stream!s:>6}",
                           [body(size, stream)] * (n + 2))
        if 1_000_000 in sizes:
            # what agents send: the same history with a turn more each time; and bodies
            # the proxy has never seen (each a new conversation), checked whole
            await _row(s, urls, "1000K +turn", growing(1_000_000, rounds + 2))
            await _row(s, urls, "1000K +step R", growing_responses(1_000_000, rounds + 2),
                       RESPONSES)
            await _row(s, urls, "1000K new", fresh(1_000_000, rounds + 2, "conversation"))
        await throughput(s, urls, body(1_000_000, False), max(5, rounds // 4))


async def throughput(s: aiohttp.ClientSession, urls: tuple[str, str, str], data: bytes,
                     rounds: int) -> None:
    """8 concurrent requests of `data` per side, the sides taking turns a round of 8 at a
    time (the order turning each round, each round once the servers are idle); requests per
    second while each side ran. Direct is the bound: no proxy serves more than its upstream."""
    names = ("direct", "sessionctx", "LiteLLM")
    took: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds + 1):  # the first round warms up
        for k in range(3):
            side = (r + k) % 3
            await _settle()
            start = time.perf_counter()
            await asyncio.gather(*(_one(s, urls[side], data) for _ in range(8)))
            if r:
                took[names[side]].append(time.perf_counter() - start)
    rate = {name: 8 * rounds / sum(seconds) for name, seconds in took.items()}
    ours, theirs, bound = rate["sessionctx"], rate["LiteLLM"], rate["direct"]
    each = sorted(t / o for o, t in zip(took["sessionctx"], took["LiteLLM"], strict=True))
    print(f"8 concurrent {len(data) // 1000} KB requests, {rounds} rounds of 8 a side taking "
          f"turns, requests/s: direct {bound:.1f} (the bound), sessionctx {ours:.1f} "
          f"({ours / bound:.2f}x direct), LiteLLM {theirs:.1f} ({theirs / bound:.2f}x direct); "
          f"sessionctx / LiteLLM {ours / theirs:.2f}x (goal >= 5; round by round "
          f"{each[0]:.1f}x to {each[-1]:.1f}x, median {_pct(each, .5):.1f}x)")


SERVERS: list[int] = []  # the upstream's and both proxies' process ids, for _settle


async def _settle(limit: float = 1.0) -> None:
    """Waits (up to `limit` s) until no server process has used CPU time for two clock ticks
    running: work one leaves running after an answer does not land on the next request."""
    if not SERVERS or not Path(f"/proc/{SERVERS[0]}/stat").exists():
        return
    tick = 1 / os.sysconf("SC_CLK_TCK")
    deadline, still = time.monotonic() + limit, 0
    used = sum(_cpu_ms(p) for p in SERVERS)
    while still < 2 and time.monotonic() < deadline:
        await asyncio.sleep(tick)
        now = sum(_cpu_ms(p) for p in SERVERS)
        still, used = (still + 1 if now == used else 0), now


def _cpu_ms(pid: int) -> float:
    """The CPU time a process has used so far (Linux), in milliseconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def cpu(ours: str, our_pid: int, theirs: str, their_pid: int, rounds: int) -> None:
    """CPU time of each proxy process per 1 MB request: steady on a busy machine, where the
    added wall time also counts waiting for a core. An unknown path is passed through
    unread by sessionctx: the cost of carrying the bytes alone."""
    if not Path(f"/proc/{our_pid}/stat").exists():
        return
    n = max(rounds, 20)
    same = body(1_000_000, False)
    kinds: dict[str, Callable[[], Iterable[bytes]]] = {
        "the same body": lambda: [same] * (n + 1),
        "a turn more": lambda: growing(1_000_000, n + 1),
        "a step more, Responses": lambda: growing_responses(1_000_000, n + 1),
        "never seen": lambda: fresh(1_000_000, n + 1, "cpu")}
    async with aiohttp.ClientSession() as s:
        for kind, bodies in kinds.items():
            used = []
            path = RESPONSES if "Responses" in kind else "/v1/messages"
            for url, pid in ((ours, our_pid), (theirs, their_pid)):
                sent = iter(bodies())
                await _one(s, url, next(sent), path)
                start = _cpu_ms(pid)
                for data in sent:
                    await _one(s, url, data, path)
                used.append((_cpu_ms(pid) - start) / n)
            print(f"CPU per 1 MB request, {kind}: sessionctx {used[0]:.1f} ms, LiteLLM "
                  f"{used[1]:.1f} ms, ratio {used[0] / used[1]:.3f}, {n} requests each")
        data = same
        start = _cpu_ms(our_pid)
        for _ in range(n):
            await _one(s, ours, data, "/v1/passed")
        print(f"CPU per 1 MB request passed through unread: sessionctx "
              f"{(_cpu_ms(our_pid) - start) / n:.1f} ms")


def repair_vs_build() -> None:
    """The repair as the proxy runs it (on a body it just decoded from JSON text, so with no
    check that the body can be sent as JSON) and as a program calling it with a dict does;
    CPU time of this process, the best of 7, which a busy machine blurs less than wall time."""
    from sessionctx.context import build_context
    from sessionctx.providers import build_from_messages
    from sessionctx.providers.wire import repair_request
    from sessionctx.providers.wire_read import records_of
    doc = json.loads(body(1_000_000, False, broken=True))
    best = {"proxy": float("inf"), "dict": float("inf"), "build": float("inf")}
    for _ in range(7):
        for name, from_text in (("proxy", True), ("dict", False)):
            start = time.process_time()
            fixed = repair_request("anthropic", doc, from_text=from_text)
            best[name] = min(best[name], time.process_time() - start)
            assert fixed.changed
        start = time.process_time()
        ctx = build_context(records_of("anthropic", doc))
        build_from_messages(ctx.messages, ctx.sources, "anthropic", doc["model"])
        best["build"] = min(best["build"], time.process_time() - start)
    print(f"a repaired 1 MB request: {best['proxy'] * 1000:.1f} ms as the proxy repairs it "
          f"({best['dict'] * 1000:.1f} ms from a dict); one build of it "
          f"{best['build'] * 1000:.1f} ms; ratio {best['proxy'] / best['build']:.2f} "
          f"({best['dict'] / best['build']:.2f}) (goal <= 2)")


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    sizes = tuple(int(x) for x in sys.argv[2].split(",")) if len(sys.argv) > 2 else (
        10_000, 1_000_000, 10_000_000)
    upstream, ours, theirs = _port(), _port(), _port()
    direct = f"http://127.0.0.1:{upstream}"
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "litellm.yaml"
        config.write_text(textwrap.dedent(f"""
            model_list:
              - model_name: {ANTHROPIC_MODEL}
                litellm_params:
                  model: anthropic/{ANTHROPIC_MODEL}
                  api_base: {direct}
                  api_key: k
              - model_name: {RESPONSES_MODEL}
                litellm_params:
                  model: openai/{RESPONSES_MODEL}
                  api_base: {direct}/v1
                  api_key: k
            general_settings: {{}}
        """))
        procs = [
            subprocess.Popen([sys.executable, str(UPSTREAM), "--port", str(upstream)], env=ENV,
                             stdout=subprocess.DEVNULL),
            subprocess.Popen([sys.executable, "-m", "sessionctx.cli", "proxy", "--port",
                              str(ours), "--upstream", f"anthropic={direct}", "--upstream",
                              f"openai={direct}", "--store",
                              f"sqlite:///{tmp}/audit.db"], env=ENV,
                             stderr=subprocess.DEVNULL),
            subprocess.Popen([str(Path(sys.executable).parent / "litellm"), "--config",
                              str(config), "--port", str(theirs), "--num_workers", "1"],
                             env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             cwd=tmp)]
        try:
            for port in (upstream, ours, theirs):
                asyncio.run(_ready(f"http://127.0.0.1:{port}/health"))
            SERVERS[:] = [p.pid for p in procs]
            asyncio.run(measure(direct, f"http://127.0.0.1:{ours}",
                                f"http://127.0.0.1:{theirs}", rounds, sizes))
            if 1_000_000 in sizes:
                asyncio.run(cpu(f"http://127.0.0.1:{ours}", procs[1].pid,
                                f"http://127.0.0.1:{theirs}", procs[2].pid, rounds))
        finally:
            for p in procs:
                p.terminate()
                p.wait(10)
    repair_vs_build()


if __name__ == "__main__":
    main()
