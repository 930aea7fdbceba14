"""The README's "Resume a broken session" commands run as written, on broken copies of real
sessions placed where each agent keeps them; the agents themselves are stand-ins that record
what they were asked to resume."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.repair_helpers import run
from tests.test_repair_formats import PI, claude_variants, codex_variants

README = Path(__file__).resolve().parent.parent / "docs" / "resume.md"


def resume_block() -> str:
    block = re.search(r"```sh\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    return block.group(1)


def test_resume_commands_run_as_written(tmp_path: Path, fixtures: Path) -> None:
    block = resume_block()
    home = tmp_path / "home"
    paths = {fmt: Path(re.search(rf"sessionctx repair (~/{folder}\S+)", block).group(1)  # type: ignore[union-attr]
                       .replace("~", str(home), 1))
             for fmt, folder in (("claude-code", r"\.claude"), ("codex", r"\.codex"),
                                 ("pi", r"\.pi"))}
    originals = {"claude-code": claude_variants(fixtures)["unanswered in the middle"],
                 "codex": codex_variants(fixtures)["killed before the output"],
                 "pi": (fixtures / PI).read_bytes()}
    for fmt, path in paths.items():
        path.parent.mkdir(parents=True)
        path.write_bytes(originals[fmt])
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "resumed.log"
    for agent in ("claude", "codex", "pi"):
        stub = stubs / agent
        stub.write_text(f'#!/bin/sh\necho "{agent} $*" >> {log}\n')
        stub.chmod(0o755)
    env = {**os.environ, "HOME": str(home),
           "PATH": f"{stubs}:{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dry run: nothing written" in done.stdout
    for fmt, path in paths.items():
        assert path.read_bytes() != originals[fmt]
        assert run("check", str(path), "--from", fmt)[0] == 0
        backups = list(path.parent.glob(f"{path.name}.bak-*"))
        assert [b.read_bytes() for b in backups] == [originals[fmt]]
    assert "outcome is unknown" in paths["pi"].read_text()  # --note-unpaired
    assert log.read_text().splitlines() == [
        "claude --resume 06381696-0074-49f8-863e-6ad4fac507f9",
        "codex resume 01997ea4-a70d-7da3-8c20-c736db82a7c5",
        f"pi --session {paths['pi']}"]
