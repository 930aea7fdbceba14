"""The latency `sessionctx proxy` adds beside LiteLLM's proxy, on the same stub and bodies.

Three processes besides this one: a stub upstream (tests/strict_stub.py), sessionctx's
proxy and LiteLLM's proxy (`litellm[proxy]`, one worker, no database, its native
`/v1/messages` route, configured for the same stub). For each body size (10 KB, 1 MB, 10 MB of
a valid Anthropic request), streaming and not, the three paths take turns: direct, sessionctx,
LiteLLM, each request's added latency is proxied − direct of the same round. Prints p50/p99 of
the added latency and sessionctx's ratio to LiteLLM's; then 8 concurrent 1 MB requests per
side (requests per second and the ratio); then a repaired 1 MB request (an unanswered call)
against one build of the same history, in process (goal: <= 2x).

Run: .venv/bin/python benchmarks/bench_proxy.py [rounds] [sizes]
     rounds: default 40 (10 MB: a quarter); sizes: bytes, comma-separated (default
     10000,1000000,10000000)
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: the package and tests/
ENV = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
       "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR",
       # a loopback-only benchmark: no key to guard
       "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true"}
STUB = ROOT / "tests" / "strict_stub.py"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def body(size: int, stream: bool, broken: bool = False) -> bytes:
    turn = "é word " * 40
    messages: list[object] = []
    while len(json.dumps(messages)) < size:
        messages += [{"role": "user", "content": turn}, {"role": "assistant", "content": turn}]
    if broken:
        messages += [{"role": "user", "content": "x"}, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]}]
    messages.append({"role": "user", "content": "go on"})
    return json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": messages,
                       "tools": [{"name": "ls", "input_schema": {"type": "object"}}],
                       "stream": stream}, ensure_ascii=False).encode()


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


async def _one(s: aiohttp.ClientSession, url: str, data: bytes) -> float:
    start = time.perf_counter()
    async with s.post(url + "/v1/messages", data=data, headers={
            "content-type": "application/json", "x-api-key": "k",
            "anthropic-version": "2023-06-01"}) as r:
        await r.read()
        if r.status != 200:
            raise SystemExit(f"{url}: {r.status}")
    return time.perf_counter() - start


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(direct: str, ours: str, theirs: str, rounds: int,
                  sizes: tuple[int, ...]) -> None:
    print(f"{'body':>6} {'stream':>6} | sessionctx added p50 / p99 ms | LiteLLM added p50 / "
          "p99 ms | ratio p50 / p99")
    async with aiohttp.ClientSession() as s:
        for size in sizes:
            for stream in (False, True):
                data = body(size, stream)
                n = rounds if size < 10_000_000 else max(4, rounds // 4)
                added: dict[str, list[float]] = {"ours": [], "theirs": []}
                for _ in range(2):  # warm up
                    for url in (direct, ours, theirs):
                        await _one(s, url, data)
                for _ in range(n):
                    base = await _one(s, direct, data)
                    added["ours"].append((await _one(s, ours, data) - base) * 1000)
                    added["theirs"].append((await _one(s, theirs, data) - base) * 1000)
                o50, o99 = _pct(added["ours"], .5), _pct(added["ours"], .99)
                t50, t99 = _pct(added["theirs"], .5), _pct(added["theirs"], .99)
                print(f"{size // 1000:>5}K {stream!s:>6} | {o50:8.2f} / {o99:8.2f}"
                      f"           | {t50:8.2f} / {t99:8.2f}        | "
                      f"{o50 / t50 if t50 > 0 else float('nan'):.3f} / "
                      f"{o99 / t99 if t99 > 0 else float('nan'):.3f}")
        data = body(1_000_000, False)
        for name, url in (("direct", direct), ("sessionctx", ours), ("LiteLLM", theirs)):
            count = 8 * max(2, rounds // 8)
            start = time.perf_counter()
            for _ in range(count // 8):
                await asyncio.gather(*(_one(s, url, data) for _ in range(8)))
            rate = count / (time.perf_counter() - start)
            print(f"8 concurrent 1 MB requests: {name} {rate:.1f} requests/s")


def repair_vs_build() -> None:
    from sessionctx.context import build_context
    from sessionctx.providers import build_from_messages
    from sessionctx.providers.wire import records_of, repair_request
    doc = json.loads(body(1_000_000, False, broken=True))
    best_repair = best_build = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        fixed = repair_request("anthropic", doc)
        best_repair = min(best_repair, time.perf_counter() - start)
        assert fixed.changed
        start = time.perf_counter()
        ctx = build_context(records_of("anthropic", doc))
        build_from_messages(ctx.messages, ctx.sources, "anthropic", doc["model"])
        best_build = min(best_build, time.perf_counter() - start)
    print(f"a repaired 1 MB request: {best_repair * 1000:.1f} ms; one build of it "
          f"{best_build * 1000:.1f} ms; ratio {best_repair / best_build:.2f} (goal <= 2)")


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    sizes = tuple(int(x) for x in sys.argv[2].split(",")) if len(sys.argv) > 2 else (
        10_000, 1_000_000, 10_000_000)
    stub, ours, theirs = _port(), _port(), _port()
    direct = f"http://127.0.0.1:{stub}"
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "litellm.yaml"
        config.write_text(textwrap.dedent(f"""
            model_list:
              - model_name: claude-sonnet-4-5
                litellm_params:
                  model: anthropic/claude-sonnet-4-5
                  api_base: {direct}
                  api_key: k
            general_settings: {{}}
        """))
        procs = [
            subprocess.Popen([sys.executable, str(STUB), "--port", str(stub)], env=ENV,
                             stdout=subprocess.DEVNULL),
            subprocess.Popen([sys.executable, "-m", "sessionctx.cli", "proxy", "--port",
                              str(ours), "--upstream", f"anthropic={direct}", "--store",
                              f"sqlite:///{tmp}/audit.db"], env=ENV,
                             stderr=subprocess.DEVNULL),
            subprocess.Popen([str(Path(sys.executable).parent / "litellm"), "--config",
                              str(config), "--port", str(theirs), "--num_workers", "1"],
                             env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             cwd=tmp)]
        try:
            for port in (stub, ours, theirs):
                asyncio.run(_ready(f"http://127.0.0.1:{port}/health"))
            asyncio.run(measure(direct, f"http://127.0.0.1:{ours}",
                                f"http://127.0.0.1:{theirs}", rounds, sizes))
        finally:
            for p in procs:
                p.terminate()
                p.wait(10)
    repair_vs_build()


if __name__ == "__main__":
    main()
