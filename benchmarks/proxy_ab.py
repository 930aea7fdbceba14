"""Two versions of `sessionctx proxy` side by side: the CPU time each spends per request, and
the latency each adds, on the same upstream (benchmarks/fast_upstream.py) and bodies.

Each proxy runs from its own source tree (a git worktree or `git archive` of a commit); for
each kind of body the direct request and the two proxies take turns, the order turning each
round, each request sent once the upstream and both proxies are idle. The CPU time of a proxy is
read from /proc/PID/task/*/schedstat (Linux; nanoseconds, all threads), so a change of a
fraction of a millisecond per request shows on a busy machine where wall time does not.

Kinds: 10K, same (a 1 MB body again), turn (1 MB, a turn more each request), stepR (a 1 MB
Responses conversation, a step more each request), new (1 MB never seen), 10M, 10Ms
(streaming).

Run: .venv/bin/python benchmarks/proxy_ab.py TREE_A TREE_B [rounds] [kinds]
     e.g. benchmarks/proxy_ab.py /tmp/before . 40 same,turn,new
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: benchmarks/
from benchmarks.bench_proxy import (
    ENV,
    RESPONSES,
    SERVERS,
    UPSTREAM,
    _one,
    _pct,
    _port,
    _ready,
    _settle,
    body,
    growing,
    growing_responses,
)

KINDS: dict[str, Callable[[int], list[bytes]]] = {
    "10K": lambda n: [body(10_000, False)] * n,
    "same": lambda n: [body(1_000_000, False)] * n,
    "turn": lambda n: list(growing(1_000_000, n)),
    "stepR": lambda n: list(growing_responses(1_000_000, n)),
    "new": lambda n: [body(1_000_000, False, first=f"new {i}") for i in range(n)],
    "10M": lambda n: [body(10_000_000, False)] * n,
    "10Ms": lambda n: [body(10_000_000, True)] * n,
}


def cpu_ns(pid: int) -> int:
    """The CPU time all threads of a process have used so far, in nanoseconds."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with suppress(OSError):  # a thread that ended meanwhile
            total += int((task / "schedstat").read_text().split()[0])
    return total


async def measure(urls: dict[str, str], pids: dict[str, int], rounds: int,
                  kinds: list[str]) -> None:
    async with aiohttp.ClientSession() as s:
        for kind in kinds:
            path = RESPONSES if kind == "stepR" else "/v1/messages"
            added: dict[str, list[float]] = {"A": [], "B": []}
            used: dict[str, list[float]] = {"A": [], "B": []}
            for i, data in enumerate(KINDS[kind](rounds + 2)):  # the first two warm up
                names = ["direct", "A", "B"]
                names = names[i % 3:] + names[:i % 3]
                took: dict[str, float] = {}
                for name in names:
                    await _settle()
                    start = cpu_ns(pids[name]) if name in pids else 0
                    took[name], _ = await _one(s, urls[name], data, path)
                    if name in pids and i >= 2:
                        used[name].append((cpu_ns(pids[name]) - start) / 1e6)
                if i >= 2:
                    for name in added:
                        added[name].append((took[name] - took["direct"]) * 1000)
            for name in added:
                print(f"{kind:>5} {name}: added p50 {_pct(added[name], .5):7.2f} p90 "
                      f"{_pct(added[name], .9):7.2f} ms | CPU per request p50 "
                      f"{_pct(used[name], .5):6.2f} max {max(used[name]):6.2f} ms", flush=True)


def main() -> None:
    trees = {"A": Path(sys.argv[1]).resolve(), "B": Path(sys.argv[2]).resolve()}
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    kinds = sys.argv[4].split(",") if len(sys.argv) > 4 else list(KINDS)
    upstream = _port()
    urls = {"direct": f"http://127.0.0.1:{upstream}"}
    procs = [subprocess.Popen([sys.executable, str(UPSTREAM), "--port", str(upstream)], env=ENV,
                              stdout=subprocess.DEVNULL)]
    with tempfile.TemporaryDirectory() as tmp:
        pids: dict[str, int] = {}
        for name, tree in trees.items():
            port = _port()
            urls[name] = f"http://127.0.0.1:{port}"
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "sessionctx.cli", "proxy", "--port", str(port),
                 "--upstream", f"anthropic={urls['direct']}", "--upstream",
                 f"openai={urls['direct']}", "--store", f"sqlite:///{tmp}/{name}.db"],
                env={**ENV, "PYTHONPATH": str(tree / "src")}, stderr=subprocess.DEVNULL))
            pids[name] = procs[-1].pid
        try:
            for url in urls.values():
                asyncio.run(_ready(f"{url}/health"))
            SERVERS[:] = [p.pid for p in procs]
            asyncio.run(measure(urls, pids, rounds, kinds))
        finally:
            for p in procs:
                p.terminate()
                p.wait(10)


if __name__ == "__main__":
    main()
