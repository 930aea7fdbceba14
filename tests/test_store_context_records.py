"""Every backend gives the records context loading reads: from the latest valid checkpoint on."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from sessionctx.store import open_store
from tests.store_helpers import checkpoint, msg

BACKENDS = ["sqlite", "jsonl", "postgresql"]


def _url(kind: str, tmp_path: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 's.db'}"
    if kind == "jsonl":
        return f"jsonl:///{tmp_path / 'dir'}"
    base = os.environ.get("SESSIONCTX_TEST_POSTGRES")
    if not base:
        pytest.skip("SESSIONCTX_TEST_POSTGRES is not set")
    return f"{base}{'&' if '?' in base else '?'}schema=sctx_cr_{uuid.uuid4().hex[:12]}"


@pytest.mark.parametrize("kind", BACKENDS)
def test_context_records_start_at_the_latest_valid_checkpoint(kind: str, tmp_path: Path) -> None:
    url = _url(kind, tmp_path)
    store = open_store(url)
    try:
        assert store.context_records("s") == []
        store.append_many("s", [msg(i) for i in range(3)])
        assert [r.source.seq for r in store.context_records("s")] == [1, 2, 3]
        store.append_checkpoint("s", checkpoint(3, "cp"), expected_last_seq=3)
        store.append("s", {"type": "compaction", "summary": "malformed, not a checkpoint"})
        store.append("s", msg(6))
        got = store.context_records("s")
        assert [r.source.seq for r in got] == [4, 5, 6]
        assert got[0].data["summary"] == "cp"
        assert store.context("s").messages == [checkpoint(3, "cp")["messages"][0], msg(6)]
    finally:
        if kind == "postgresql":
            import psycopg

            from sessionctx.store.postgres import split_url
            conninfo, schema = split_url(url)
            with psycopg.connect(conninfo, autocommit=True) as db:
                db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        store.close()
