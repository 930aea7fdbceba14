"""Durability and privacy of what the stores write: whole or absent, owner-only, and no file of
the store directory that is not a regular file is followed, opened as one, or fails the rest."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.files import write_atomically
from sessionctx.store import StoreError, open_store
from sessionctx.store.jsonl import JsonlStore
from tests.store_helpers import CTX, msg

PRIVATE_FILE, PRIVATE_DIR = 0o600, 0o700


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def run_python(code: str, *, env: dict[str, str] | None = None,
               timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def debris(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if ".tmp" in p.name]


# -- file modes ----------------------------------------------------------------------------


def test_jsonl_store_files_and_folders_are_owner_only(tmp_path: Path) -> None:
    store = open_store(f"jsonl:///{tmp_path}/a/b/store")
    store.append("s", msg(1))
    store.export("s", str(tmp_path / "out.jsonl"))
    assert mode_of(tmp_path / "a/b/store") == PRIVATE_DIR
    assert mode_of(tmp_path / "a/b") == PRIVATE_DIR
    assert mode_of(tmp_path / "a/b/store/s.jsonl") == PRIVATE_FILE
    assert mode_of(tmp_path / "out.jsonl") == PRIVATE_FILE


def test_sqlite_database_and_its_journal_files_are_owner_only(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/data/sessions.db")
    store.append("s", msg(1))
    names = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert "sessions.db" in names and "sessions.db-wal" in names
    for name in names:
        assert mode_of(tmp_path / "data" / name) == PRIVATE_FILE, name
    assert mode_of(tmp_path / "data") == PRIVATE_DIR
    store.close()


def test_sharing_is_the_umask_when_private_is_off(tmp_path: Path) -> None:
    result = run_python(f"""
        import os
        os.umask(0o027)
        from sessionctx.store import open_store
        store = open_store("jsonl:///{tmp_path}/shared")
        store.append("s", {{"role": "user", "content": "hi"}})
        store.export("s", "{tmp_path}/out.jsonl")
        sql = open_store("sqlite:///{tmp_path}/db/x.db")
        sql.append("s", {{"role": "user", "content": "hi"}})
        sql.close()
    """, env={"SESSIONCTX_PRIVATE": "0"})
    assert result.returncode == 0, result.stderr
    assert mode_of(tmp_path / "shared") == 0o750
    assert mode_of(tmp_path / "shared/s.jsonl") == 0o640
    assert mode_of(tmp_path / "out.jsonl") == 0o640
    assert mode_of(tmp_path / "db/x.db") == 0o640


def test_a_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    write_atomically(str(target), b"new\n")
    assert target.read_bytes() == b"new\n"
    assert mode_of(target) == 0o640
    assert debris(tmp_path) == []


# -- writes that cannot finish -------------------------------------------------------------

FSIZE_APPENDER = """
    import resource, sys
    from sessionctx.store import StoreError, open_store
    resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
    store = open_store("{url}")
    acked = []
    i = 0
    try:
        while True:
            batch = [{{"role": "user", "content": "r%d " % (i + k) + "x" * 300}}
                     for k in range({batch})]
            acked.extend(store.append_many("s", batch))
            i += {batch}
    except StoreError as exc:
        print(len(acked))
        print(exc, file=sys.stderr)
"""


@pytest.mark.parametrize("batch", [1, 7])
def test_jsonl_appends_over_the_file_size_limit_fail_whole(tmp_path: Path, batch: int) -> None:
    """Under RLIMIT_FSIZE a write comes back short, then fails: no short write is taken for a
    whole one, the file keeps exactly the acknowledged records, and appending goes on once
    there is room."""
    url = f"jsonl:///{tmp_path}/store"
    result = run_python(FSIZE_APPENDER.format(limit=20_000, url=url, batch=batch))
    assert result.returncode == 0, result.stderr
    acked = int(result.stdout)
    assert 0 < acked < 200
    assert "append failed" in result.stderr and "nothing was written" in result.stderr
    path = tmp_path / "store" / "s.jsonl"
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    store = JsonlStore(str(tmp_path / "store"))
    records = store.records("s")
    assert [r.data["content"].split()[0] for r in records] == [f"r{i}" for i in range(acked)]
    assert store.problems("s") == []
    assert store.append("s", msg(1)) == acked + 1


def test_sqlite_over_the_file_size_limit_loses_no_acknowledged_record(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    result = run_python(FSIZE_APPENDER.format(limit=200_000, url=url, batch=3))
    assert result.returncode == 0, result.stderr
    acked = int(result.stdout)
    assert acked > 0
    store = open_store(url)
    assert len(store.records("s")) == acked
    store.close()


def test_export_over_the_file_size_limit_leaves_the_target_and_no_temp(tmp_path: Path) -> None:
    store = open_store(f"jsonl:///{tmp_path}/store")
    store.append_many("s", [msg(i, pad="y" * 500) for i in range(100)])
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"previous export\n")
    result = run_python(f"""
        import resource, sys
        from sessionctx.store import StoreError, open_store
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))
        try:
            open_store("jsonl:///{tmp_path}/store").export("s", "{target}")
        except StoreError as exc:
            print(exc)
    """)
    assert "cannot write" in result.stdout and "nothing was written" in result.stdout
    assert target.read_bytes() == b"previous export\n"
    assert debris(tmp_path) == []


@pytest.mark.parametrize("batch", [1, 5])
def test_jsonl_appends_on_a_full_disk_fail_whole(tiny_disk: Path, batch: int) -> None:
    store = JsonlStore(str(tiny_disk / "store"))
    acked: list[int] = []
    with pytest.raises(StoreError, match=r"append failed.*nothing was written"):
        for i in range(10_000):
            acked.extend(store.append_many("s", [msg(i * batch + k, pad="z" * 700)
                                                 for k in range(batch)]))
    assert acked
    records = store.records("s")
    assert [r.data["content"][0]["text"] for r in records] == [f"m{i}" for i in range(len(acked))]
    assert store.problems("s") == []
    before = (tiny_disk / "store" / "s.jsonl").read_bytes()
    with pytest.raises(StoreError):
        store.export("s", str(tiny_disk / "out.jsonl"))
    assert not (tiny_disk / "out.jsonl").exists()
    assert debris(tiny_disk) == []
    assert (tiny_disk / "store" / "s.jsonl").read_bytes() == before


# -- torn first lines and batches ----------------------------------------------------------


def _rows(n: int) -> list[bytes]:
    return [msgspec.json.encode(msg(i)) for i in range(n)]


def test_a_torn_first_line_is_reported_and_appending_resumes(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    store = JsonlStore(str(folder))
    (folder / "s.jsonl").write_bytes(_rows(1)[0][:17])
    (folder / "t.jsonl").write_bytes(_rows(1)[0] + b"\n")
    assert store.records("s") == []
    [problem] = store.problems("s")
    assert problem.line == 1 and "incomplete" in problem.message
    assert store.append("s", msg(5)) == 1
    assert [r.data for r in store.records("s")] == [msg(5)]
    assert store.problems("s")[0].line == 1
    listed = {i.id: i for i in store.sessions()}
    assert listed["s"].records == 1 and listed["t"].records == 1
    result = CliRunner().invoke(main, ["sessions", "--store", f"jsonl:///{folder}"])
    assert result.exit_code == 0, result.output


def test_a_batch_cut_anywhere_shows_none_of_its_records(tmp_path: Path) -> None:
    """Every prefix of a batch's buffer (a crash in the middle of the write) leaves exactly
    the records before the batch visible, and the next append removes the remains."""
    folder = tmp_path / "store"
    store = JsonlStore(str(folder))
    store.append_many("s", [msg(100), msg(101)])
    whole = (folder / "s.jsonl").read_bytes()
    store.append_many("s", [msg(i) for i in range(3)])
    batch = (folder / "s.jsonl").read_bytes()[len(whole):]
    assert batch.count(b"\n ") == 1 and batch.startswith(b" ")
    for cut in range(len(batch)):
        (folder / "s.jsonl").write_bytes(whole + batch[:cut])
        assert [r.data for r in store.records("s")] == [msg(100), msg(101)], cut
        if cut > 1:  # a lone space is a blank line
            assert store.problems("s"), cut
        assert store.append_many("s", [msg(7), msg(8)]) == [3, 4], cut
        assert [r.data for r in store.records("s")] == [msg(100), msg(101), msg(7), msg(8)]
        kept = (folder / "s.jsonl").read_bytes()
        assert kept.startswith(whole)
        assert store.problems("s") == [], cut


def test_a_torn_batch_in_the_middle_stays_hidden(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    rows = _rows(4)
    (folder).mkdir()
    # an old crash: a batch of three cut inside its second line, then a single record after
    torn = b" " + rows[0] + b"\n " + rows[1][:9] + b"\n"
    (folder / "s.jsonl").write_bytes(torn + rows[3] + b"\n")
    store = JsonlStore(str(folder))
    assert [r.data for r in store.records("s")] == [msg(3)]
    lines = sorted(p.line or 0 for p in store.problems("s"))
    assert lines == [1, 2]


BATCH = 3000


def _batch_writer(url: str, before: int, ready: str) -> None:
    store = open_store(url)
    batch = [msg(i, pad="p" * 2000) for i in range(BATCH)]  # about 6 MB in one write
    if before:
        store.append_many("s", [msg(-1), msg(-2)][:before])
    Path(ready).write_text("go")
    store.append_many("s", batch)


def kill_while_writing(url: str, path: Path, before: int, ready: Path) -> int:
    """Start a writer of one big batch and kill -9 it once the file has started to grow;
    the file size it was killed at."""
    p = CTX.Process(target=_batch_writer, args=(url, before, str(ready)))
    p.start()
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.0005)
    start = path.stat().st_size if path.exists() else 0
    size = start
    while size == start and p.is_alive() and time.monotonic() < deadline:
        size = path.stat().st_size if path.exists() else 0
    assert p.pid is not None
    os.kill(p.pid, signal.SIGKILL)
    p.join()
    return path.stat().st_size if path.exists() else 0


@pytest.mark.parametrize("before", [0, 2], ids=["first", "later"])
def test_kill_9_during_first_and_batched_appends(tmp_path: Path, before: int) -> None:
    """Killed as its batch starts to reach the file, a writer leaves the batch whole or
    absent, and a killed first append never blocks the session."""
    torn = 0
    for round_ in range(8):
        folder = tmp_path / f"store{round_}"
        url = f"jsonl:///{folder}"
        size = kill_while_writing(url, folder / "s.jsonl", before, tmp_path / f"go{round_}")
        store = JsonlStore(str(folder))
        count = len(store.records("s"))
        assert count in (before, before + BATCH), count
        torn += count == before and size > 0
        assert [i.records for i in store.sessions()] == [count]
        assert store.append("s", msg(9)) == count + 1
        assert [r.data for r in store.records("s")][-1] == msg(9)
        assert store.problems("s") == []
        if torn >= 2:
            break


CRASH_MID_WRITE = """
    import os, resource, signal
    from sessionctx.store.jsonl import JsonlStore
    store = JsonlStore({folder!r})
    if {before}:
        store.append_many("s", [{{"role": "user", "content": "b%d" % i}} for i in range({before})])
    size = os.path.getsize({folder!r} + "/s.jsonl") if {before} else 0
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # the write that passes the limit kills us
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + {cut}, resource.RLIM_INFINITY))
    store.append_many("s", [{{"role": "user", "content": "x%d" % i}} for i in range(50)])
"""


@pytest.mark.parametrize("before", [0, 3], ids=["first", "later"])
@pytest.mark.parametrize("cut", [2, 40, 700, 1500])
def test_a_process_killed_inside_its_write_leaves_no_records(tmp_path: Path, before: int,
                                                             cut: int) -> None:
    """A writer killed by a signal while exactly `cut` bytes of its batch reached the file (the
    file size limit stops the write there, then its SIGXFSZ kills the process)."""
    folder = tmp_path / "store"
    done = run_python(CRASH_MID_WRITE.format(folder=str(folder), before=before, cut=cut))
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    raw = (folder / "s.jsonl").read_bytes()
    store = JsonlStore(str(folder))
    assert [r.data["content"] for r in store.records("s")] == [f"b{i}" for i in range(before)]
    assert store.problems("s")
    assert store.append_many("s", [msg(1), msg(2)]) == [before + 1, before + 2]
    assert store.problems("s") == []
    assert (folder / "s.jsonl").read_bytes().startswith(raw[: len(raw) - cut])


# -- what is not a regular file in the store -----------------------------------------------


def test_a_symlink_in_the_store_is_never_followed(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    store = JsonlStore(str(folder))
    store.append("good", msg(1))
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(_rows(1)[0] + b"\n")
    os.symlink(outside, folder / "evil.jsonl")
    with pytest.raises(StoreError, match="symbolic link"):
        store.append("evil", msg(2))
    with pytest.raises(StoreError, match="symbolic link"):
        store.records("evil")
    assert outside.read_bytes() == _rows(1)[0] + b"\n"
    listed = {i.id: i for i in store.sessions()}
    assert listed["good"].records == 1 and listed["good"].problem is None
    assert "symbolic link" in (listed["evil"].problem or "")


def test_a_fifo_or_folder_named_like_a_session_fails_only_itself(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    store = JsonlStore(str(folder))
    store.append("good", msg(1))
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "dir.jsonl").mkdir()
    (folder / "torn.jsonl").write_bytes(b'{"role": "us')
    result = subprocess.run(
        [sys.executable, "-m", "sessionctx", "sessions", "--store", f"jsonl:///{folder}",
         "--json"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    listed = {s["id"]: s for s in json.loads(result.stdout)["sessions"]}
    assert listed["good"]["records"] == 1 and "problem" not in listed["good"]
    assert listed["torn"]["records"] == 0 and "problem" not in listed["torn"]
    assert "FIFO" in listed["pipe"]["problem"]
    assert "folder" in listed["dir"]["problem"]
    for session in ("pipe", "dir"):
        with pytest.raises(StoreError, match="not a session file"):
            store.append(session, msg(1))
    text = CliRunner().invoke(main, ["sessions", "--store", f"jsonl:///{folder}"])
    assert text.exit_code == 0
    assert "pipe\tunreadable" in text.output
