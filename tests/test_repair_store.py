"""Repairing a store session: the repaired context is appended as a checkpoint, and no stored
row is rewritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionctx.store import open_store
from tests.conftest import assistant, call, result, text, user
from tests.repair_helpers import run


@pytest.mark.parametrize("scheme", ["sqlite", "jsonl"])
def test_store_session_gets_a_repair_checkpoint(tmp_path: Path, scheme: str) -> None:
    url = f"sqlite:///{tmp_path}/s.db" if scheme == "sqlite" else f"jsonl:///{tmp_path}/d"
    rows = [user("go"), assistant(text("on it"), call("c1"), call("c2")), result("c1"),
            result("c9"), user("and?")]
    store = open_store(url)
    store.append_many("s", rows)
    before = [r.data for r in store.records("s")]
    store.close()
    code, out = run("repair", "--store", url, "--session", "s", "--dry-run")
    assert code == 0 and "dry run: nothing written" in out
    code, out = run("repair", "--store", url, "--session", "s", "--json", "--note-unpaired")
    report = json.loads(out)
    assert code == 0 and report["written"] and report["seq"] == 6
    assert sorted(c["kind"] for c in report["changes"]) == [
        "dropped_orphan_result", "dropped_unpaired_call"]
    assert [p["id"] for p in report["pending_calls"]] == ["c2"]
    store = open_store(url)
    after = store.records("s")
    store.close()
    assert [r.data for r in after[:5]] == before  # stored rows untouched
    assert after[5].kind == "checkpoint" and after[5].problem is None
    code, out = run("check", "--store", url, "--session", "s")
    assert code == 0, out
    built = json.loads(run("build", "--store", url, "--session", "s", "--json")[1])
    texts = json.dumps(built["messages"])
    assert "c2" in texts and "outcome is unknown" in texts  # told, not made up
    code, out = run("repair", "--store", url, "--session", "s")
    assert code == 0 and "nothing to repair" in out
