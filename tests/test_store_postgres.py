"""The PostgreSQL store, against the database named by SESSIONCTX_TEST_POSTGRES."""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec
import psycopg
import pytest

from sessionctx.inputs import read_input
from sessionctx.store import NotASessionStore, SchemaTooNew, SessionChanged, open_store
from sessionctx.store.postgres import PostgresStore, split_url
from tests.conftest import FIXTURES
from tests.store_helpers import (
    CTX,
    checkpoint,
    kill_writer_at_random,
    msg,
    reported,
    run_writers,
)

BASE = os.environ.get("SESSIONCTX_TEST_POSTGRES")
pytestmark = pytest.mark.skipif(not BASE, reason="SESSIONCTX_TEST_POSTGRES is not set")


def _with_schema(schema: str) -> str:
    assert BASE is not None
    return f"{BASE}{'&' if '?' in BASE else '?'}schema={schema}"


@pytest.fixture
def url() -> Iterator[str]:
    u = _with_schema(f"sctx_test_{uuid.uuid4().hex[:12]}")
    yield u
    _drop(u)


def _drop(u: str) -> None:
    conninfo, schema = split_url(u)
    with psycopg.connect(conninfo, autocommit=True) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_append_read_context_and_list(url: str) -> None:
    store = open_store(url)
    assert store.last_seq("a") == 0
    assert store.append_many("a", [msg(i) for i in range(3)]) == [1, 2, 3]
    store.append_checkpoint("a", checkpoint(3, "cp"), expected_last_seq=3)
    store.append("a", msg(5))
    assert [r.source.seq for r in store.records("a", after=2)] == [3, 4, 5]
    ctx = store.context("a")
    assert [m["content"][0]["text"] for m in ctx.messages] == ["cp", "m5"]
    info = store.sessions()[0]
    assert (info.id, info.records, info.last_seq) == ("a", 5, 5)
    store.close()


def test_eight_processes_append_without_loss_or_duplicates(url: str) -> None:
    open_store(url).close()
    run_writers(url, "s", writers=8, count=1000)
    store = open_store(url)
    got = store.records("s")
    assert [r.source.seq for r in got] == list(range(1, 8001))
    assert [sum(1 for r in got if r.data["writer"] == w) for w in range(8)] == [1000] * 8
    store.close()


def test_sigkill_loses_no_returned_append(url: str, tmp_path: Path) -> None:
    open_store(url).close()
    rng = random.Random(5)
    for round_ in range(4):
        report = str(tmp_path / f"report{round_}")
        kill_writer_at_random(url, "s", report, rng.uniform(0.1, 0.4))
        store = open_store(url)
        seqs = [r.source.seq for r in store.records("s")]
        assert seqs == list(range(1, len(seqs) + 1))
        assert set(reported(report)) <= set(seqs)
        assert store.append("s", msg(-1)) == len(seqs) + 1
        store.close()


def _append_while(url: str, n: int) -> None:
    store = open_store(url)
    for i in range(n):
        store.append("s", msg(i))
    store.close()


def test_checkpoint_refused_when_session_moved(url: str) -> None:
    store = open_store(url)
    store.append_many("s", [msg(i) for i in range(10)])
    p = CTX.Process(target=_append_while, args=(url, 20))
    p.start()
    p.join()
    with pytest.raises(SessionChanged, match="last seq is 30"):
        store.append_checkpoint("s", checkpoint(10), expected_last_seq=10)
    assert len(store.records("s")) == 30
    store.close()


def test_round_trip_keeps_every_record(url: str, tmp_path: Path) -> None:
    source = FIXTURES / "pi" / "large-session.jsonl"
    store = open_store(url)
    store.import_records("big", read_input(str(source)).records)
    out = tmp_path / "out.jsonl"
    store.export("big", str(out))
    original = [msgspec.json.decode(x) for x in source.read_bytes().splitlines() if x.strip()]
    assert [msgspec.json.decode(x) for x in out.read_bytes().splitlines()] == original
    store.close()


def test_newer_schema_and_foreign_schema(url: str) -> None:
    store = PostgresStore(url)
    with store._db.transaction():
        store._db.execute(f"UPDATE {store.schema}.sessionctx_meta SET value = '7' "
                          "WHERE key = 'schema_version'")
        store._db.execute(f"CREATE TABLE {store.schema}.unrelated (x int)")
    store.close()
    with pytest.raises(SchemaTooNew, match="version 7"):
        open_store(url)
    other = _with_schema(f"sctx_test_{uuid.uuid4().hex[:12]}_x")
    plain = PostgresStore(other)
    with plain._db.transaction():
        plain._db.execute(f"DROP TABLE {plain.schema}.sessionctx_meta")
    try:
        with pytest.raises(NotASessionStore, match="not a sessionctx store"):
            open_store(other)
    finally:
        plain.close()
        _drop(other)
