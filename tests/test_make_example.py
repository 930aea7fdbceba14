"""`make example` installs the package alone (no development extras) and shows check, repair
--dry-run and report on the bundled example; each of its commands runs here as written."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _recipe(target: str) -> list[str]:
    text = (ROOT / "Makefile").read_text()
    block = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert block, target
    return [line.strip() for line in block.group(1).splitlines()]


def test_the_example_venv_holds_the_package_alone() -> None:
    install = [line for line in _recipe("$(EXAMPLE_BIN)/sessionctx") if "pip install" in line]
    assert install == ["$(EXAMPLE_BIN)/pip install -q --disable-pip-version-check -e ."]


def test_the_example_shows_check_repair_and_report(tmp_path: Path) -> None:
    commands = [line for line in _recipe("example") if "sessionctx " in line]
    assert [shlex.split(c)[1] for c in commands] == ["check", "repair", "report"]
    assert "--dry-run" in commands[1]
    before = (ROOT / "examples" / "interrupted.jsonl").read_bytes()
    for command in commands:
        args = shlex.split(command.replace(" || true", ""))[1:]
        args = [str(tmp_path / "report.html") if a.endswith("report.html") else a
                for a in args]
        done = subprocess.run([sys.executable, "-m", "sessionctx", *args], cwd=ROOT,
                              capture_output=True, text=True)
        assert done.returncode in (0, 1), (command, done.stderr)
        assert "Traceback" not in done.stderr
    assert (ROOT / "examples" / "interrupted.jsonl").read_bytes() == before
    assert "<html" in (tmp_path / "report.html").read_text()
