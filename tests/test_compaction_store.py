"""Compaction of a session in a store: the store's last-seq guard, restore, and the CLI."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.compaction.checkpoint import compact, restore
from sessionctx.compaction.store_target import StoreTarget
from sessionctx.compaction.target import SessionChanged
from sessionctx.context import build_context
from sessionctx.store import open_store
from tests.test_compaction_checkpoint import SMALL, SUMMARY_FUNCS, history, write_summarizer


class Appending:
    """A summarizer that, like a busy agent, appends to the session while it works."""

    ref = "test:appending"

    def __init__(self, store: Any, session: str) -> None:
        self.store, self.session = store, session

    def summarize(self, prompt: str) -> str:
        self.store.append(self.session, {"role": "user", "content": "meanwhile"})
        namespace: dict[str, Any] = {}
        exec(SUMMARY_FUNCS, namespace)
        return str(namespace["summary_for"](prompt))


@pytest.fixture
def store(tmp_path):
    s = open_store(f"sqlite:///{tmp_path / 'sessions.db'}")
    s.append_many("s1", history(0, 6))
    yield s
    s.close()


def test_compact_and_restore_a_store_session(store, tmp_path) -> None:
    script = write_summarizer(tmp_path)
    from tests.test_compaction_checkpoint import summarizer

    earlier = store.context("s1").messages
    written = compact(StoreTarget(store, "s1"), summarizer(script), SMALL)
    assert written.position == 25 and written.record["baseSeq"] == 24
    assert store.context("s1").messages == written.record["messages"]
    store.append_many("s1", history(6, 7))
    after = build_context(store.records("s1", after=25)).messages
    assert store.context("s1").messages == written.record["messages"] + after
    back = restore(StoreTarget(store, "s1"), written.record["id"])
    assert back.record["restoredFromCompactionId"] == written.record["id"]
    assert store.context("s1").messages == earlier
    assert store.last_seq("s1") == 25 + 4 + 1  # nothing deleted


def test_append_during_compaction_refuses_the_checkpoint(store) -> None:
    with pytest.raises(SessionChanged, match="checkpoint not written"):
        compact(StoreTarget(store, "s1"), Appending(store, "s1"), SMALL)
    assert store.last_seq("s1") == 25
    assert not [r for r in store.records("s1") if r.data.get("type") == "compaction"]


def test_cli_compact_restore_budget_with_a_store(store, tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    script = write_summarizer(tmp_path)
    runner = CliRunner()
    out = runner.invoke(main, ["compact", "--store", url, "--session", "s1", "--keep-turns",
                               "2", "--keep-tokens", "1", "--summarizer",
                               f"command:{sys.executable} {script}", "--json"])
    assert out.exit_code == 0, out.output
    info = json.loads(out.output)
    assert info["seq"] == 25
    out = runner.invoke(main, ["budget", "--store", url, "--session", "s1", "--window",
                               "100000", "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["tokens"] == info["tokensAfter"]
    out = runner.invoke(main, ["restore", "--store", url, "--session", "s1", "--before",
                               info["id"]])
    assert out.exit_code == 0, out.output
    bad = runner.invoke(main, ["compact", "--store", url, "--session", "nope", "--dry-run"])
    assert bad.exit_code == 2 and "no such session" in bad.output
    both = runner.invoke(main, ["compact", "x.jsonl", "--session", "s1", "--dry-run"])
    assert both.exit_code == 2
