"""The file stays the user's file: owner, group and mode kept, a symlink's target repaired
with the link kept, hard links and read-only files refused (nothing written)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessionctx.compaction.target import FileTarget
from sessionctx.replace import Refused
from sessionctx.writeback import repair
from tests.repair_helpers import run

BROKEN = (b'{"role":"user","content":"list the files"}\n'
          b'{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls",'
          b'"arguments":{}}]}\n'
          b'{"role":"user","content":"never mind"}\n')


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BROKEN)
    path.chmod(0o640)
    return path


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_root_repairing_another_users_file_keeps_their_ownership(session: Path) -> None:
    os.chown(session, 4321, 4322)
    result = repair(str(session), backup=False)
    assert result.written
    info = session.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (4321, 4322, 0o640)


def test_mode_is_kept_and_the_backup_is_the_original(session: Path) -> None:
    before = session.stat()
    result = repair(str(session))
    assert result.written and result.backup
    assert session.stat().st_mode & 0o777 == 0o640
    assert os.stat(result.backup).st_ino == before.st_ino  # the original inode, not a copy
    assert Path(result.backup).read_bytes() == BROKEN


def test_a_symlinks_target_is_repaired_and_the_link_kept(session: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(session)
    code, out = run("repair", str(link))
    assert code == 0, out
    assert link.is_symlink() and os.readlink(link) == str(session)
    assert session.read_bytes() != BROKEN and b"toolCall" not in session.read_bytes()
    backups = [p for p in tmp_path.iterdir() if ".bak-" in p.name]
    assert [p.name.startswith("s.jsonl.bak-") for p in backups] == [True]


def test_a_hard_linked_file_is_refused(session: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    os.link(session, other)
    for extra in ([], ["--force"], ["--backup", str(tmp_path / "kept")]):
        code, out = run("repair", str(session), *extra)
        assert code == 2 and "has 2 hard links" in out, (extra, out)
        assert session.read_bytes() == BROKEN and os.path.samefile(session, other)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["other.jsonl", "s.jsonl"]
    code, out = run("repair", str(session), "--dry-run")  # reading: shown, not refused
    assert code == 0 and "dry run: nothing written" in out, out
    assert session.read_bytes() == BROKEN


def test_a_read_only_file_is_refused(session: Path) -> None:
    session.chmod(0o400)
    code, out = run("repair", str(session))
    assert code == 2 and "is read-only (mode 0400)" in out, out
    assert session.read_bytes() == BROKEN and len(list(session.parent.iterdir())) == 1
    target = FileTarget(str(session))
    with pytest.raises(Refused, match="read-only"):
        target.append({"type": "custom", "id": "x"}, target.snapshot())
    assert session.read_bytes() == BROKEN
