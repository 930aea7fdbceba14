"""A long kill -9 run against every store: acknowledged records are never lost, a batch is
whole or absent, seqs stay gap-free, and a session is never blocked by a killed append.

Two writers append to one session at once, in single records and batches of 2 to 400 records
(up to about 1 MB), and each writes what a call returned to its own report file only after
the call returned. Both are killed with SIGKILL at a random moment; then the store is checked.
Every fifth round starts a fresh session, so kills land in first appends too.

    .venv/bin/python benchmarks/kill9.py [--rounds N] [--backend sqlite|jsonl|postgres ...]

N defaults to $SESSIONCTX_KILL9_ROUNDS or 200. PostgreSQL is included when
$SESSIONCTX_TEST_POSTGRES holds a URL (a schema of its own is made and dropped). Prints, per
backend: kills, records acknowledged, records lost, batches seen torn, blocked sessions; exits
1 when anything was lost, torn or blocked.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sessionctx.store import open_store

CTX = mp.get_context("fork")
WRITERS = 2


def _writer(url: str, session: str, report: str, seed: int) -> None:
    """Append forever; after each call returns, report `first count batch` for it."""
    rng = random.Random(seed)
    store = open_store(url)
    fd = os.open(report, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    while True:
        n = 1 if rng.random() < 0.5 else rng.randint(2, 400)
        batch = uuid.uuid4().hex
        pad = "p" * rng.randint(0, 2500)
        records = [{"role": "user", "content": [{"type": "text", "text": f"{batch}:{i}"}],
                    "batch": batch, "n": n, "i": i, "pad": pad} for i in range(n)]
        seqs = store.append_many(session, records)
        os.write(fd, f"{seqs[0]} {len(seqs)} {batch}\n".encode())


@dataclass
class Tally:
    kills: int = 0
    acknowledged: int = 0
    lost: int = 0
    torn: int = 0
    blocked: int = 0
    gaps: int = 0
    problems: list[str] = field(default_factory=list)


def _acks(report: str) -> list[tuple[int, int, str]]:
    try:
        with open(report) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) == 3:  # the writer can be killed inside its report write
            out.append((int(parts[0]), int(parts[1]), parts[2]))
    return out


def _check(url: str, session: str, reports: list[str], tally: Tally) -> None:
    store = open_store(url)
    try:
        records = store.records(session)
        seqs = [r.source.seq for r in records]
        if seqs != list(range(1, len(seqs) + 1)):
            tally.gaps += 1
            tally.problems.append(f"{session}: seqs not 1..{len(seqs)}")
        for report in reports:
            for first, count, batch in _acks(report):
                tally.acknowledged += count
                for k in range(count):
                    index = first - 1 + k
                    data = records[index].data if index < len(records) else {}
                    if data.get("batch") != batch or data.get("i") != k:
                        tally.lost += 1
        written = [r.data for r in records if "batch" in r.data]  # not the checks' appends
        seen = Counter(d["batch"] for d in written)
        sizes = {d["batch"]: d["n"] for d in written}
        for name, count in seen.items():
            if count != sizes[name]:
                tally.torn += 1
                tally.problems.append(f"{session}: batch {name} has {count} of {sizes[name]}")
        try:
            store.append(session, {"role": "user", "content": "after the kill"})
        except Exception as exc:  # any failure to go on appending is what is counted
            tally.blocked += 1
            tally.problems.append(f"{session}: append after the kill failed: {exc}")
    finally:
        store.close()


def run(url: str, rounds: int, workdir: str, seed: int) -> Tally:
    """Kill the writers `rounds` times; `workdir` (empty) takes their report files."""
    rng = random.Random(seed)
    tally = Tally()
    session = "s0"
    for round_ in range(rounds):
        if round_ % 5 == 0:
            session = f"s{round_}"
        reports = [os.path.join(workdir, f"report-{round_}-{w}") for w in range(WRITERS)]
        procs = [CTX.Process(target=_writer, args=(url, session, reports[w],
                                                   rng.randrange(1 << 30)))
                 for w in range(WRITERS)]
        for p in procs:
            p.start()
        time.sleep(rng.uniform(0.01, 0.4))
        for p in procs:
            assert p.pid is not None
            os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.join()
        tally.kills += WRITERS
        _check(url, session, reports, tally)
    return tally


@contextmanager
def _postgres(base: str) -> Iterator[str]:
    schema = f"sctx_kill9_{uuid.uuid4().hex[:10]}"
    url = f"{base}{'&' if '?' in base else '?'}schema={schema}"
    try:
        yield url
    finally:
        import psycopg
        with psycopg.connect(base.split("?", 1)[0], autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int,
                        default=int(os.environ.get("SESSIONCTX_KILL9_ROUNDS", "200")))
    parser.add_argument("--backend", action="append",
                        choices=["sqlite", "jsonl", "postgres"])
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args(argv)
    pg = os.environ.get("SESSIONCTX_TEST_POSTGRES")
    backends = args.backend or ["sqlite", "jsonl", *(["postgres"] if pg else [])]
    failed = False
    workdir = tempfile.mkdtemp(prefix="sessionctx-kill9-")
    try:
        for backend in backends:
            reports = os.path.join(workdir, f"{backend}-reports")
            os.mkdir(reports)
            out: dict[str, Any]
            if backend == "postgres":
                if not pg:
                    print("postgres: SESSIONCTX_TEST_POSTGRES is not set", file=sys.stderr)
                    return 2
                with _postgres(pg) as url:
                    tally = run(url, args.rounds, reports, args.seed)
            else:
                target = os.path.join(workdir, backend)
                url = (f"sqlite:///{target}.db" if backend == "sqlite"
                       else f"jsonl:///{target}")
                tally = run(url, args.rounds, reports, args.seed)
            out = {"kills": tally.kills, "records acknowledged": tally.acknowledged,
                   "records lost": tally.lost, "batches seen torn": tally.torn,
                   "sessions blocked": tally.blocked, "seq gaps": tally.gaps}
            print(f"{backend}: " + ", ".join(f"{k} {v}" for k, v in out.items()), flush=True)
            for problem in tally.problems[:10]:
                print(f"  {problem}")
            failed |= bool(tally.lost or tally.torn or tally.blocked or tally.gaps)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
