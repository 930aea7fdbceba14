"""PostgreSQL: the schema named in the URL is validated whole, and a command that only reads
(sessions, check --store, export) makes no schema and no tables."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.store import StoreError
from sessionctx.store.postgres import split_url

BASE = os.environ.get("SESSIONCTX_TEST_POSTGRES")


@pytest.mark.parametrize("schema", ["x%0A", "x%0D", "x%20", "X", "1x", "x;drop", "a" * 64])
def test_a_schema_that_is_not_one_identifier_is_refused(schema: str) -> None:
    with pytest.raises(StoreError, match="must be a lowercase SQL identifier"):
        split_url(f"postgresql://h/db?schema={schema}")


def test_a_plain_schema_is_taken() -> None:
    assert split_url("postgresql://h/db?schema=s_1&sslmode=disable") == \
        ("postgresql://h/db?sslmode=disable", "s_1")


@pytest.fixture
def schema() -> Iterator[str]:
    if not BASE:
        pytest.skip("SESSIONCTX_TEST_POSTGRES is not set")
    psycopg = pytest.importorskip("psycopg")
    name = f"sctx_read_{uuid.uuid4().hex[:10]}"
    yield name
    with psycopg.connect(BASE, autocommit=True) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _tables(schema: str) -> list[str]:
    import psycopg

    assert BASE is not None
    with psycopg.connect(BASE) as db:
        return [r[0] for r in db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,))]


def test_reading_commands_make_no_tables(schema: str, tmp_path: Path) -> None:
    assert BASE is not None
    url = f"{BASE}{'&' if '?' in BASE else '?'}schema={schema}"
    runner = CliRunner()
    result = runner.invoke(main, ["sessions", "--store", url, "--json"])
    assert result.exit_code == 0, result.output
    assert "[]" in result.output
    for args in (["check", "--store", url, "--session", "s"],
                 ["export", "s", "-o", os.devnull, "--store", url]):
        assert runner.invoke(main, args).exit_code == 2
    assert _tables(schema) == []
    session = tmp_path / "s.jsonl"
    session.write_text('{"role":"user","content":"hi"}\n')
    result = runner.invoke(main, ["import", str(session), "--session", "s", "--store", url])
    assert result.exit_code == 0, result.output
    assert "sessions" in _tables(schema)
    result = runner.invoke(main, ["sessions", "--store", url, "--json"])
    assert result.exit_code == 0 and '"s"' in result.output
