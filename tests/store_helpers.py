"""Helpers shared by the store tests: records, checkpoints, and writer processes."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from typing import Any

from sessionctx.store import open_store

CTX = mp.get_context("fork")


def msg(i: int, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": f"m{i}"}], **extra}


def checkpoint(base_seq: int, summary: str = "so far") -> dict[str, Any]:
    return {"type": "compaction", "at": "2026-01-01T00:00:00Z", "baseSeq": base_seq,
            "plannerVersion": 1, "summaryModelRef": "test/model", "qualityAudit": "ok",
            "summary": summary,
            "messages": [{"role": "user", "content": [{"type": "text", "text": summary}]}],
            "firstKeptIndex": 0, "tokensBefore": 100, "tokensAfter": 10}


def append_worker(url: str, session: str, count: int, tag: int) -> None:
    store = open_store(url)
    for i in range(count):
        store.append(session, msg(i, writer=tag))
    store.close()


def run_writers(url: str, session: str, writers: int, count: int) -> None:
    procs = [CTX.Process(target=append_worker, args=(url, session, count, w))
             for w in range(writers)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + 300  # a generous bound: a busy machine is slow, not wrong
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        assert p.exitcode == 0


def reporting_writer(url: str, session: str, report: str) -> None:
    """Append forever, writing each returned seq to `report` after the append returned."""
    store = open_store(url)
    fd = os.open(report, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    i = 0
    while True:
        seq = store.append(session, msg(i, pad="x" * (i % 700)))
        os.write(fd, f"{seq}\n".encode())
        i += 1


def kill_writer_at_random(url: str, session: str, report: str, delay: float) -> None:
    import signal
    import time
    p = CTX.Process(target=reporting_writer, args=(url, session, report))
    p.start()
    time.sleep(delay)
    assert p.pid is not None
    os.kill(p.pid, signal.SIGKILL)
    p.join()


def reported(report: str) -> list[int]:
    """The seqs the writer saw returned; none when it was killed before it opened the report
    (a slow start on a busy machine)."""
    try:
        with open(report) as f:
            return [int(line) for line in f.read().split("\n") if line.strip()]
    except FileNotFoundError:
        return []
