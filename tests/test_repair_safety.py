"""Repair never loses the original: backups, dry runs, a file still being written, kill -9."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sessionctx.writeback as repair_module
from sessionctx.errors import SessionChanged
from sessionctx.writeback import RepairError, repair
from tests.repair_helpers import run
from tests.test_repair_formats import CLAUDE, PI


@pytest.fixture
def broken(tmp_path: Path, fixtures: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes((fixtures / CLAUDE).read_bytes())
    return path


def test_dry_run_prints_the_diff_and_writes_nothing(broken: Path) -> None:
    original = broken.read_bytes()
    code, out = run("repair", str(broken), "--dry-run")
    assert code == 0
    assert out.startswith(f"--- {broken} (stored)\n+++ {broken} (repaired)\n@@ -14 +13,0 @@\n-")
    assert "dropped_unpaired_call" in out and "dry run: nothing written" in out
    assert broken.read_bytes() == original
    assert list(broken.parent.iterdir()) == [broken]


def test_default_backup_is_timestamped_and_never_overwritten(broken: Path) -> None:
    original = broken.read_bytes()
    first = repair(str(broken))
    assert first.written and first.backup is not None
    assert Path(first.backup).name.startswith("session.jsonl.bak-20")
    assert Path(first.backup).read_bytes() == original
    broken.write_bytes(original)  # broken again within the same second
    second = repair(str(broken))
    assert second.backup not in (None, first.backup)
    assert Path(first.backup).read_bytes() == original
    assert Path(second.backup or "").read_bytes() == original


def test_named_backup_and_no_backup(broken: Path, tmp_path: Path) -> None:
    original = broken.read_bytes()
    taken = tmp_path / "taken"
    taken.write_bytes(b"keep me")
    code, out = run("repair", str(broken), "--backup", str(taken))
    assert code == 2 and "cannot be written" in out
    assert broken.read_bytes() == original and taken.read_bytes() == b"keep me"
    code, _ = run("repair", str(broken), "--backup", str(tmp_path / "kept.jsonl"))
    assert code == 0 and (tmp_path / "kept.jsonl").read_bytes() == original
    broken.write_bytes(original)
    code, _ = run("repair", str(broken), "--no-backup")
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.jsonl", "session.jsonl",
                                                          "taken"]
    code, out = run("repair", str(broken), "--backup", "x", "--no-backup")
    assert code == 2 and "not both" in out


def test_a_file_appended_to_during_the_repair_is_left_untouched(
        broken: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = broken.read_bytes()
    appended = b'{"type":"user","uuid":"late","parentUuid":null,"message":{"role":"user",' \
               b'"content":"still typing"}}\n'
    planned = repair_module.plan_repair

    def agent_still_writing(*args: object, **kwargs: object) -> repair_module.Plan:
        plan = planned(*args, **kwargs)  # type: ignore[arg-type]
        with open(broken, "ab") as f:
            f.write(appended)
        return plan

    monkeypatch.setattr(repair_module, "plan_repair", agent_still_writing)
    code, out = run("repair", str(broken))
    assert code == 2 and "changed while it was being repaired" in out
    assert broken.read_bytes() == original + appended
    assert list(broken.parent.iterdir()) == [broken]  # no backup, no temporary file
    broken.write_bytes(original)
    with pytest.raises(SessionChanged):
        repair(str(broken))


def test_unreadable_and_unsupported_inputs_exit_2(tmp_path: Path) -> None:
    code, out = run("repair", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "missing.jsonl" in out and "Traceback" not in out
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert run("repair", str(empty))[0] == 2
    with pytest.raises(RepairError):
        repair(str(empty))
    assert run("repair", "-")[0] == 2


_KILLER = """
import sys
from sessionctx.writeback import repair
repair(sys.argv[1], backup=sys.argv[2])
"""


def test_kill_9_at_random_points_leaves_the_old_file_or_the_new_one(tmp_path: Path,
                                                                     fixtures: Path) -> None:
    original = (fixtures / PI).read_bytes()
    path = tmp_path / "session.jsonl"
    path.write_bytes(original)
    repaired = repair(str(path), backup=False)
    assert repaired.written
    new = path.read_bytes()
    rng = random.Random(13)
    outcomes = set()
    for attempt in range(12):
        path.write_bytes(original)
        proc = subprocess.Popen([sys.executable, "-c", _KILLER, str(path),
                                 str(tmp_path / f"backup-{attempt}")])
        time.sleep(rng.uniform(0.05, 1.2))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        now = path.read_bytes()
        assert now in (original, new)
        outcomes.add(now == new)
    assert outcomes, "no run was observed"
