"""A clone of the repository, with nothing beside it, holds everything its tests read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES, ROOT


def _clone(tmp_path: Path) -> Path:
    clone = tmp_path / "sessionctx"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    assert not (clone.parent / "shared").exists()
    return clone


def _pytest(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(clone / "src")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=600)


def test_fixtures_are_committed() -> None:
    listed = subprocess.run(["git", "ls-files", "tests/fixtures"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.split()
    on_disk = sorted(str(p.relative_to(ROOT)) for p in FIXTURES.rglob("*") if p.is_file())
    assert sorted(listed) == on_disk
    assert "tests/fixtures/SOURCES.md" in listed
    assert any(name.startswith("tests/fixtures/LICENSE.") for name in listed)


def test_a_clone_alone_collects_and_reads_its_fixtures(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    probe = subprocess.run([sys.executable, "-c", "import sessionctx; print(sessionctx.__file__)"],
                           cwd=clone, env={**os.environ, "PYTHONPATH": str(clone / "src")},
                           capture_output=True, text=True, check=True)
    assert Path(probe.stdout.strip()).is_relative_to(clone)
    collected = _pytest(clone, "--collect-only", "-q")
    assert collected.returncode == 0, collected.stdout[-4000:] + collected.stderr[-2000:]
    ran = _pytest(clone, "-x", "tests/test_importers_fixtures.py")
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert " passed" in ran.stdout
