"""repair and compact beside an agent that is writing its session: no line is lost.

An agent-like writer runs in another process: it appends lines with random pauses, sometimes
a line in two writes, either holding the file open (as Codex does) or opening it per line.
`repair` and a checkpoint append run at random moments beside it. Every line the writer wrote
must end up in the session file, or in the backup and reported there; every refusal names
the writer.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sessionctx.live_writers as live_writers
import sessionctx.replace as replace_module
from sessionctx import files
from sessionctx.compaction.target import FileTarget, TargetError
from sessionctx.errors import SessionChanged
from sessionctx.live_writers import LiveWriter, Undetectable, unfinished_tail, writers
from sessionctx.writeback import repair
from tests.repair_helpers import run

RUNS = 500
BASE = (b'{"role":"user","content":"list the files"}\n'
        b'{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls",'
        b'"arguments":{}}]}\n'
        b'{"role":"user","content":"never mind"}\n'
        b'{"role":"assistant","content":"ok"}\n')


def _line(run: int, i: int) -> bytes:
    return json.dumps({"role": "user", "content": f"w-{run}-{i}"}).encode() + b"\n"


def _writer(path: str, run: int, hold: bool, seed: int, ready: int) -> None:
    """The child: append a few lines with random pauses, then exit."""
    rng = random.Random(seed)
    flags = os.O_WRONLY | os.O_APPEND
    fd = os.open(path, flags) if hold else -1
    os.write(ready, b"x")
    for i in range(rng.randint(2, 6)):
        line = _line(run, i)
        parts = [line] if rng.random() < 0.7 else [line[:10], line[10:]]
        for part in parts:
            out = fd if hold else os.open(path, flags)
            os.write(out, part)
            if not hold:
                os.close(out)
            time.sleep(rng.uniform(0, 0.002))
    if hold:
        time.sleep(rng.uniform(0, 0.003))
        os.close(fd)


def _start(path: Path, run: int, hold: bool, seed: int) -> int:
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(ready_r)
            _writer(str(path), run, hold, seed, ready_w)
        finally:
            os._exit(0)
    os.close(ready_w)
    os.read(ready_r, 1)
    os.close(ready_r)
    return pid


def _late_region(note: str | None, backup: str | None) -> bytes:
    """The lines of the backup a repair reported as written after the swap."""
    if note is None or backup is None:
        return b""
    found = re.search(r"from line (\d+)", note)
    assert found, note
    lines = Path(backup).read_bytes().split(b"\n")
    return b"\n".join(lines[int(found.group(1)) - 1:])


def _parses(piece: bytes) -> bool:
    try:
        json.loads(piece)
    except ValueError:
        return False
    return True


def _written(run: int, hold: bool, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [_line(run, i) for i in range(rng.randint(2, 6))]


@pytest.fixture
def quick_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder in memory where there is one (fsync costs nothing there), else tmp_path."""
    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("step", ["repair", "compact"])
def test_no_line_of_a_live_writer_is_lost(quick_dir: Path, step: str) -> None:
    tmp_path = quick_dir
    rng = random.Random(2812 if step == "repair" else 2813)
    refused = late = 0
    for n in range(RUNS):
        path = tmp_path / f"s{n}.jsonl"
        path.write_bytes(BASE)
        hold, force = rng.random() < 0.6, rng.random() < 0.3
        seed = rng.randrange(1 << 30)
        pid = _start(path, n, hold, seed)
        time.sleep(rng.uniform(0, 0.004))
        note = backup = None
        overlap = False
        try:
            if step == "repair":
                result = repair(str(path), force=force, backup=rng.random() < 0.5)
                note, backup = result.late, result.backup
            else:
                target = FileTarget(str(path), force)
                target.append({"type": "custom", "customType": "t", "id": f"cp{n}"},
                              target.snapshot())
        except LiveWriter as exc:
            assert f"(pid {pid})" in str(exc) and "--force" in str(exc), exc
            refused += 1
        except SessionChanged:
            refused += 1
        except TargetError as exc:
            assert "another process wrote to the session" in str(exc), exc
            overlap = True
        os.waitpid(pid, 0)
        final = path.read_bytes()
        region = _late_region(note, backup)
        late += bool(region)
        written = _written(n, hold, seed)
        for line in written:
            body = line.rstrip(b"\n")
            # a writer that opens the file for each write and splits a line over two opens
            # across the swap leaves its first part in the backup (reported), the rest in
            # the new file: split, not lost
            split = bool(region) and line[:10] in region and line[10:] in final
            assert line in final or body in region or split or overlap, (n, line, final,
                                                                         region)
        for piece in final.split(b"\n"):
            if piece and not overlap and not _parses(piece):
                # a line the writer had begun at the swap: its other part is reported
                assert region and any(line.startswith(piece) or line.endswith(piece + b"\n")
                                      for line in written), (n, piece)
    assert refused, "no n met the writer"


@contextlib.contextmanager
def _holder(path: Path, flags: int = os.O_WRONLY | os.O_APPEND) -> Iterator[int]:
    """A process that holds `path` open (for writing, by default) until the block ends; its
    pid."""
    ready_r, ready_w = os.pipe()
    stop_r, stop_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        fd = os.open(path, flags)
        os.write(ready_w, b"x")
        os.read(stop_r, 1)
        os.close(fd)
        os._exit(0)
    os.read(ready_r, 1)
    try:
        yield pid
    finally:
        os.write(stop_w, b"x")
        os.waitpid(pid, 0)
        for fd in (ready_r, ready_w, stop_r, stop_w):
            os.close(fd)


def test_a_writer_holding_the_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE)
    with open(path, "ab"), _holder(path) as pid:
        found = writers(str(path))
    assert [w.pid for w in found] == [pid]  # not this process, though it holds it too
    assert found[0].name
    assert writers(str(path)) == []


def test_forced_repair_reports_lines_appended_to_the_old_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    swap = files.write_atomically

    def agent_writes_on(*args: Any, **kwargs: Any) -> None:
        swap(*args, **kwargs)
        os.write(fd, _line(0, 0) + _line(0, 1))  # to the file it holds: now the backup

    monkeypatch.setattr(replace_module, "write_atomically", agent_writes_on)
    try:
        result = repair(str(path), force=True, backup=False)
    finally:
        os.close(fd)
    assert result.written and result.backup is not None  # kept although --no-backup
    assert result.late == (f"2 line(s) were written to the old file after the swap: they are "
                           f"in {result.backup} from line 5, not in {path}")
    assert Path(result.backup).read_bytes() == BASE + _line(0, 0) + _line(0, 1)


def test_the_cli_refuses_naming_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE)
    with _holder(path) as pid:
        code, out = run("repair", str(path))
        assert code == 2 and f"(pid {pid}) is writing this session: quit it, or `--force`" \
            in out, out
        assert path.read_bytes() == BASE and list(tmp_path.iterdir()) == [path]
        target = FileTarget(str(path))
        with pytest.raises(LiveWriter, match=f"pid {pid}.*--force-live"):
            target.append({"type": "custom", "id": "x"}, target.snapshot())
        code, out = run("repair", str(path), "--force")
        assert code == 1 and f"(pid {pid}) still holds the old file open" in out, out
    assert path.read_bytes() != BASE and len(list(tmp_path.iterdir())) == 2


def test_unfinished_last_line_is_left_to_its_agent(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    partial = b'{"role":"user","content":"half'
    path.write_bytes(BASE + partial)
    result = repair(str(path), backup=False)
    assert result.written and path.read_bytes().endswith(b"\n" + partial)
    assert result.unfinished and "line 5" in result.unfinished
    with pytest.raises(SessionChanged, match="line 4 has no newline yet"):
        FileTarget(str(path)).snapshot()
    path.write_bytes(BASE + partial)
    then = time.time() - 3600
    os.utime(path, (then, then))  # an old torn line is a crash's: removed, and compact goes on
    assert unfinished_tail(path.read_bytes(), path.stat().st_mtime_ns) == -1
    assert not path.read_bytes().endswith(b"\n") and repair(str(path), backup=False).written
    assert path.read_bytes().endswith(b"\n")


@pytest.fixture
def no_proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A system without /proc (macOS, the BSDs): writers are asked of lsof."""
    monkeypatch.setattr(live_writers, "_PROC", str(tmp_path / "no-proc"))


@pytest.mark.skipif(shutil.which("lsof") is None, reason="lsof is not installed")
def test_without_proc_lsof_names_the_writer_and_not_a_reader(tmp_path: Path,
                                                             no_proc: None) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE)
    with _holder(path, os.O_RDONLY) as reader, _holder(path) as pid, \
            _holder(path, os.O_RDWR) as both, open(path, "ab"):
        found = writers(str(path))
        assert sorted(w.pid for w in found) == sorted([pid, both])  # not this process
        assert reader not in [w.pid for w in found] and all(w.name for w in found)
        code, out = run("repair", str(path))
        assert code == 2 and f"(pid {pid})" in out and "--force" in out, out
        assert path.read_bytes() == BASE
    assert writers(str(path)) == []


def test_no_way_to_see_writers_is_a_refusal_not_no_writer(
        tmp_path: Path, no_proc: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_writers, "_LSOF", "sessionctx-no-such-lsof")
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE)
    with pytest.raises(Undetectable, match="neither /proc nor lsof"):
        writers(str(path))
    code, out = run("repair", str(path))
    assert code == 2 and "neither /proc nor lsof" in out and "`--force`" in out, out
    assert path.read_bytes() == BASE and list(tmp_path.iterdir()) == [path]
    target = FileTarget(str(path))
    with pytest.raises(LiveWriter, match=r"neither /proc nor lsof.*--force-live"):
        target.append({"type": "custom", "id": "x"}, target.snapshot())
    assert path.read_bytes() == BASE
    code, out = run("repair", str(path), "--force")  # the user's word that none is running
    assert code == 0 and path.read_bytes() != BASE, out


def test_a_failing_lsof_is_a_refusal(tmp_path: Path, no_proc: None,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "lsof"
    broken.write_text("#!/bin/sh\necho 'lsof: cannot read the kernel' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setattr(live_writers, "_LSOF", str(broken))
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE)
    with pytest.raises(Undetectable, match=r"lsof failed \(lsof: cannot read the kernel\)"):
        writers(str(path))
