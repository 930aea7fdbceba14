"""Store benchmarks, measured in one run.

1. Durable appends per second, single (`append`, one commit each) and batched (`append_many`),
   on SQLite and, when SESSIONCTX_TEST_POSTGRES (or --postgres URL) is set, PostgreSQL.
2. Context build time of a session with 1,000,000 records before its latest checkpoint over
   the time with 1,000 before it, same tail (goal <= 1.2).

    PYTHONPATH=src python benchmarks/bench_store.py [--big 1000000] [--postgres URL]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from typing import Any

from sessionctx.store import Store, open_store


def msg(i: int) -> dict[str, Any]:
    return {"role": "user" if i % 2 == 0 else "assistant",
            "content": [{"type": "text", "text": f"message {i} " + "x" * 80}]}


def checkpoint(base: int) -> dict[str, Any]:
    return {"type": "compaction", "at": "2026-01-01T00:00:00Z", "baseSeq": base,
            "plannerVersion": 1, "summaryModelRef": "bench/model", "qualityAudit": "ok",
            "summary": "summary", "messages": [{"role": "user", "content": "summary"}],
            "firstKeptIndex": 0, "tokensBefore": 1000, "tokensAfter": 10}


def appends_per_second(store: Store, single: int, batches: int, batch: int) -> tuple[float,
                                                                                      float]:
    start = time.perf_counter()
    for i in range(single):
        store.append("single", msg(i))
    one = single / (time.perf_counter() - start)
    start = time.perf_counter()
    for b in range(batches):
        store.append_many("batched", [msg(b * batch + i) for i in range(batch)])
    many = batches * batch / (time.perf_counter() - start)
    return one, many


def report_appends(name: str, store: Store) -> None:
    one, many = appends_per_second(store, single=500, batches=20, batch=500)
    print(f"{name}: single appends {one:,.0f}/s, batched (500 per batch) {many:,.0f}/s, "
          f"batched/single {many / one:.1f}x")


def fill(store: Store, session: str, before: int, tail: int) -> None:
    step = 50_000
    for start in range(0, before, step):
        store.append_many(session, [msg(i) for i in range(start, min(before, start + step))])
    last = store.last_seq(session)
    store.append_checkpoint(session, checkpoint(last), expected_last_seq=last)
    store.append_many(session, [msg(i) for i in range(tail)])


def build_time(store: Store, session: str, runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        store.context(session)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def jsonl_append_growth(folder: str, small: int, big: int, runs: int = 50) -> None:
    """Median time of one append to a JSONL session of `small` records and of `big`, the
    sides taking turns, on a store that has appended to each before (so knows where it left
    them): the ratio says whether an append's cost grows with the session."""
    from sessionctx.store.jsonl import JsonlStore

    store = JsonlStore(folder)
    for name, size in (("small", small), ("big", big)):
        store.append_many(name, [msg(i) for i in range(size)])
    times: dict[str, list[float]] = {"small": [], "big": []}
    for _ in range(runs):
        for name in ("small", "big"):
            start = time.perf_counter()
            store.append(name, msg(0))
            times[name].append(time.perf_counter() - start)
    one, two = (statistics.median(times[n]) * 1000 for n in ("small", "big"))
    print(f"jsonl: one append at {small:,} records {one:.2f} ms, at {big:,} {two:.2f} ms, "
          f"ratio {two / one:.2f} (goal <= 1.5)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--tail", type=int, default=200)
    parser.add_argument("--postgres", default=os.environ.get("SESSIONCTX_TEST_POSTGRES"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/bench.db")
        report_appends("sqlite", store)
        start = time.perf_counter()
        fill(store, "big", args.big, args.tail)
        fill(store, "small", args.small, args.tail)
        print(f"sqlite: wrote {args.big + args.small:,} records in "
              f"{time.perf_counter() - start:.1f}s")
        big, small = build_time(store, "big"), build_time(store, "small")
        print(f"sqlite: context build {args.big:,} before checkpoint {big * 1000:.2f} ms, "
              f"{args.small:,} before {small * 1000:.2f} ms, ratio {big / small:.3f} "
              f"(goal <= 1.2), tail {args.tail}")
        store.close()
        jsonl_append_growth(f"{tmp}/jsonl", 1_000, 100_000)
    if args.postgres:
        from sessionctx.store.postgres import PostgresStore
        schema = f"sctx_bench_{uuid.uuid4().hex[:10]}"
        sep = "&" if "?" in args.postgres else "?"
        pg = PostgresStore(f"{args.postgres}{sep}schema={schema}")
        try:
            report_appends("postgresql", pg)
        finally:
            pg.drop()
            pg.close()
    else:
        print("postgresql: skipped (set SESSIONCTX_TEST_POSTGRES or pass --postgres URL)")


if __name__ == "__main__":
    main()
