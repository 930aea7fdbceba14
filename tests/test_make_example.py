"""`make example` installs only the package's own dependencies (pyproject.toml's, nothing
built, no venv unless the Python has no pip) and shows check, repair --dry-run and report on
the bundled example, run from src/."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _recipe(target: str) -> list[str]:
    text = (ROOT / "Makefile").read_text()
    block = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert block, target
    return [line.strip() for line in block.group(1).splitlines()]


def test_the_example_runs_the_sources_with_their_dependencies_alone(tmp_path: Path) -> None:
    commands = [line for line in _recipe("example") if "$(SESSIONCTX_EXAMPLE) " in line]
    assert [shlex.split(c)[1] for c in commands] == ["check", "repair", "report"]
    assert "--dry-run" in commands[1]
    before = (ROOT / "examples" / "interrupted.jsonl").read_bytes()
    out = tmp_path / "example"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MAKEFLAGS")}
    done = subprocess.run(["make", "--no-print-directory", "example", f"EXAMPLE_DIR={out}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    # pip --target put exactly the declared dependencies beside the sources, nothing built
    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~ ;\[]", w, maxsplit=1)[0].lower() for w in wanted}
    assert (out / "requirements.txt").read_text().split() == wanted
    installed = {p.name.split("-")[0].lower() for p in (out / "lib").glob("*.dist-info")}
    assert installed == names == {"msgspec", "click"}
    has_pip = subprocess.run(["python3", "-c", "import pip"], env=env,
                             capture_output=True).returncode == 0
    assert (out / "venv").exists() is not has_pip  # a venv only for a Python without pip
    assert "examples/interrupted.jsonl: 2 problems before it can be sent" in done.stdout
    assert "dry run: nothing written" in done.stdout
    assert (ROOT / "examples" / "interrupted.jsonl").read_bytes() == before
    assert "<html" in (out / "report.html").read_text()
    # every command ran the tree's own sources, not an installed copy
    assert all(c.startswith("PYTHONPATH=src:") for c in
               done.stdout.splitlines() if " -m sessionctx " in c)
