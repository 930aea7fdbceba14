"""The JSONL store: locked appends, torn last lines, checkpoints and round trips."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from sessionctx.inputs import read_input
from sessionctx.store import NotASessionStore, SessionChanged, open_store
from sessionctx.store.jsonl import JsonlStore
from tests.conftest import FIXTURES
from tests.store_helpers import CTX, checkpoint, msg, run_writers


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"jsonl:///{tmp_path}/sessions"


def test_append_read_context(url: str) -> None:
    store = open_store(url)
    assert store.append_many("a/b", [msg(i) for i in range(3)]) == [1, 2, 3]
    store.append_checkpoint("a/b", checkpoint(3, "cp"), expected_last_seq=3)
    store.append("a/b", msg(5))
    assert [r.source.seq for r in store.records("a/b", after=3)] == [4, 5]
    ctx = store.context("a/b")
    assert [m["content"][0]["text"] for m in ctx.messages] == ["cp", "m5"]
    assert [(s.id, s.records) for s in store.sessions()] == [("a/b", 5)]


def test_torn_last_line_is_reported_and_never_glued(tmp_path: Path) -> None:
    store = JsonlStore(str(tmp_path))
    store.append_many("s", [msg(0), msg(1)])
    path = tmp_path / "s.jsonl"
    intact = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b'{"role": "user", "content": "cut of')
    torn = path.read_bytes()
    assert [r.data["content"][0]["text"] for r in store.records("s")] == ["m0", "m1"]
    problems = store.problems("s")
    assert [p.line for p in problems] == [3] and "incomplete" in problems[0].message
    assert store.append("s", msg(2)) == 3
    after = path.read_bytes()
    assert after.startswith(torn)  # existing bytes untouched
    assert after.startswith(intact)
    assert [r.data["content"][0]["text"] for r in store.records("s")] == ["m0", "m1", "m2"]
    assert [p.line for p in store.problems("s")] == [3]


def test_processes_append_without_loss(url: str) -> None:
    run_writers(url, "s", writers=4, count=100)
    got = open_store(url).records("s")
    assert [r.source.seq for r in got] == list(range(1, 401))
    assert sorted(r.data["writer"] for r in got) == sorted([0, 1, 2, 3] * 100)


def _append_some(url: str) -> None:
    open_store(url).append_many("s", [msg(i) for i in range(5)])


def test_checkpoint_refused_when_session_moved(url: str) -> None:
    store = open_store(url)
    store.append("s", msg(0))
    p = CTX.Process(target=_append_some, args=(url,))
    p.start()
    p.join()
    with pytest.raises(SessionChanged, match="last seq is 6"):
        store.append_checkpoint("s", checkpoint(1), expected_last_seq=1)
    assert store.last_seq("s") == 6


def test_round_trip(url: str, tmp_path: Path) -> None:
    source = FIXTURES / "pi" / "large-session.jsonl"
    store = open_store(url)
    store.import_records("big", read_input(str(source)).records)
    out = tmp_path / "out.jsonl"
    store.export("big", str(out))
    original = [msgspec.json.decode(x) for x in source.read_bytes().splitlines() if x.strip()]
    assert [msgspec.json.decode(x) for x in out.read_bytes().splitlines()] == original


def test_not_a_directory_and_binary_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotASessionStore, match="not a directory"):
        open_store(f"jsonl:///{tmp_path}/file")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "s.jsonl").write_bytes(b"\x00\x01binary")
    with pytest.raises(NotASessionStore, match="binary"):
        JsonlStore(str(tmp_path / "d")).records("s")
