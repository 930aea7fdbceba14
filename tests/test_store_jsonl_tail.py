"""The JSONL store's append reads the session file only from where it last left it: the cost
of an append does not grow with the session, and what other writers added is still counted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sessionctx.store.jsonl import JsonlStore


def msg(i: int) -> dict[str, Any]:
    return {"role": "user", "content": f"m{i}"}


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every stretch of a session file an append read."""
    sizes: list[int] = []
    scan = JsonlStore._scan

    def counting(self: JsonlStore, path: str, raw: bytes | None) -> Any:
        sizes.append(len(raw or b""))
        return scan(self, path, raw)

    monkeypatch.setattr(JsonlStore, "_scan", counting)
    return sizes


def test_appends_after_the_first_read_nothing(tmp_path: Path, scanned: list[int]) -> None:
    store = JsonlStore(str(tmp_path))
    for i in range(1, 301):
        assert store.append("s", msg(i)) == i
    assert scanned == [0]  # the empty file once; the file this store left is not read again
    assert [r.data["content"] for r in store.records("s")] == [f"m{i}" for i in range(1, 301)]


def test_two_writers_read_only_what_the_other_added(tmp_path: Path,
                                                    scanned: list[int]) -> None:
    one, two = JsonlStore(str(tmp_path)), JsonlStore(str(tmp_path))
    seqs = []
    for i in range(1, 41):
        seqs.append((one if i % 2 else two).append_many("s", [msg(i), msg(i)])[-1])
    assert seqs == list(range(2, 81, 2))
    line = len(b'{"role":"user","content":"m10"}\n')
    assert max(scanned) <= 2 * line + 2  # one batch of the other writer, never the file


def test_a_file_changed_behind_the_store_is_read_whole(tmp_path: Path) -> None:
    store = JsonlStore(str(tmp_path))
    for i in range(1, 4):
        store.append("s", msg(i))
    path = tmp_path / "s.jsonl"
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b"m2", b"M2"))  # same size, rewritten
    os.utime(path, ns=(1, 1))
    assert store.append("s", msg(4)) == 4
    path.write_bytes(raw.split(b"\n", 1)[1])  # shorter: one record fewer
    assert store.append("s", msg(5)) == 3


def test_torn_lines_and_unfinished_batches_others_left_are_handled(tmp_path: Path) -> None:
    store = JsonlStore(str(tmp_path))
    store.append("s", msg(1))
    path = tmp_path / "s.jsonl"
    with open(path, "ab") as f:
        f.write(b'{"role":"user","content":"m2"}\n{"role":"us')  # a crash mid-line
    assert store.append("s", msg(3)) == 3
    assert path.read_bytes().endswith(b'{"role":"us\n{"role":"user","content":"m3"}\n')
    with open(path, "ab") as f:
        f.write(b' {"role":"user","content":"b1"}\n {"role":"user"')  # a batch cut short
    assert store.append("s", msg(4)) == 4
    assert [r.data["content"] for r in store.records("s")] == ["m1", "m2", "m3", "m4"]
