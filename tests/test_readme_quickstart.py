"""The README's quick start runs as written on a broken copy of a real Claude Code session,
placed where Claude Code keeps it, and prints what the README shows (the long diff lines are
cut there, the backup's timestamp differs)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.test_repair_formats import claude_variants

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
STAMP = re.compile(r"\.bak-\d{8}T\d{6}Z")


def _section() -> str:
    text = README.read_text()
    return text[text.index("## My agent won't resume"):text.index("## See it")]


def _matches(shown: str, printed: str) -> bool:
    if shown.endswith("…"):
        return printed.startswith(shown[:-1])
    return STAMP.sub(".bak-STAMP", shown) == STAMP.sub(".bak-STAMP", printed)


def test_the_quick_start_prints_what_the_readme_shows(tmp_path: Path, fixtures: Path) -> None:
    section = _section()
    commands = re.search(r"```sh\n(.*?)```", section, re.S)
    assert commands is not None
    lines = commands.group(1).splitlines()
    assert [line.split()[1] for line in lines[1:4]] == ["check", "repair", "repair"]
    shown = re.findall(r"```text\n(.*?)```", section, re.S)
    assert len(shown) == 3
    home = tmp_path / "home"
    folder = Path(lines[0].split()[1].replace("~", str(home), 1))
    folder.mkdir(parents=True)
    name = lines[1].split()[2]
    (folder / name).write_bytes(claude_variants(fixtures)["unanswered in the middle"])
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "claude").write_text(f'#!/bin/sh\necho "claude $*" > {tmp_path}/resumed\n')
    (stubs / "claude").chmod(0o755)
    env = {**os.environ, "HOME": str(home),
           "PATH": f"{stubs}:{Path(sys.executable).parent}:{os.environ['PATH']}"}
    outputs = []
    for command, code in zip(lines[1:], (1, 0, 0, 0), strict=True):
        done = subprocess.run(["bash", "-c", command], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == code, (command, done.stdout, done.stderr)
        outputs.append(done.stdout)
    for expected, printed in zip(shown, outputs, strict=False):
        got = printed.splitlines()
        want = expected.splitlines()
        assert len(got) >= len(want)
        for w in want:  # each line shown is printed, in order (repair prints its changes too)
            while got and not _matches(w, got[0]):
                got.pop(0)
            assert got, f"{w!r} not in {printed!r}"
            got.pop(0)
    assert (tmp_path / "resumed").read_text() == f"claude --resume {name[:-len('.jsonl')]}\n"
    assert subprocess.run([sys.executable, "-m", "sessionctx", "check", name], cwd=folder,
                          capture_output=True).returncode == 0
