"""The README's "Keep a session alive" section runs as written: each of its `sessionctx` lines,
with the real Claude Code and Codex CLIs and the section's own SDK program, offline against the
strict stub (tests/agent_clis.py), on sessions the API refuses. Without `sessionctx run --` the
same command fails; with it the session goes on, nothing invented reaches the stub, and
`sessionctx proxy log` lists the call taken out."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_clis import Agents, Run, require
from tests.test_agent_clis import transcript_text_before_result
from tests.test_agent_clis_repair import numbered
from tests.test_proxy_agents import CODEX_REFUSED, outputs_sent, results_sent

ROOT = Path(__file__).resolve().parents[1]
HEADING = "## Keep a session alive: `sessionctx run -- claude`"
README = ROOT / "README.md"


def section() -> str:
    """The section's text in the README."""
    text = README.read_text(encoding="utf-8")
    assert HEADING in text, f"the README has no {HEADING!r}"
    return text.split(HEADING, 1)[1].split("\n## ", 1)[0]


def commands(text: str) -> list[str]:
    (block,) = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [line.strip() for line in block.splitlines() if line.startswith("sessionctx ")]


def program(text: str) -> str:
    (block,) = re.findall(r"```py\n(# my_agent\.py\n.*?)```", text, re.S)
    return str(block)


def test_the_section_shows_claude_code_codex_and_an_sdk_program() -> None:
    lines = commands(section())
    runs = [line.removeprefix("sessionctx run -- ").split()[0] for line in lines
            if line.startswith("sessionctx run -- ")]
    assert runs == ["claude", "codex", "python"]
    assert lines[-1] == "sessionctx proxy log"
    assert "import anthropic" in program(section())


def _bin(agents: Agents) -> Path:
    """A folder of commands as the section names them: the pinned CLIs, this Python, and
    `sessionctx` running this tree's code."""
    folder = agents.root / "bin"
    folder.mkdir()
    targets = {"claude": str(agents.modules / ".bin" / "claude"),
               "codex": str(agents.modules / ".bin" / "codex"),
               "python": sys.executable, "sessionctx": f"{sys.executable} -m sessionctx.cli"}
    for name, target in targets.items():
        path = folder / name
        path.write_text(f'#!/bin/sh\nexec {target} "$@"\n')
        path.chmod(0o755)
    return folder


@pytest.fixture
def agents(tmp_path: Path) -> Agents:
    require()
    return Agents(tmp_path)


def test_the_section_runs_as_written(agents: Agents) -> None:
    text = section()
    claude_line, codex_line, sdk_line, log_line = commands(text)
    session = re.search(r"--resume (\S+)", claude_line)
    thread = re.search(r"exec resume (\S+)", codex_line)
    assert session and thread
    agents.place_claude(transcript_text_before_result(), session[1])
    agents.place_codex(numbered(CODEX_REFUSED["reasoning left without its item"]()), thread[1])
    (agents.cwd / "my_agent.py").write_text(program(text))
    subprocess.run(["git", "init", "-q"], cwd=agents.cwd, check=True)  # Codex wants a repo
    folder = _bin(agents)

    def shell(line: str) -> Run:
        return agents.run(["env", f"PATH={folder}{os.pathsep}{os.environ['PATH']}",
                           f"PYTHONPATH={ROOT / 'src'}", "bash", "-c", line])

    for line in (claude_line, codex_line, sdk_line):
        direct = shell(line.removeprefix("sessionctx run -- "))
        assert direct.returncode != 0 and direct.refused(), line
        run = shell(line)
        assert run.returncode == 0, (line, run.stdout, run.stderr)
        assert run.requests and not run.refused(), line
        assert " repaired (" in run.stderr.splitlines()[-1], line
        # nothing invented: the one result or output sent is the tool's own
        for request in run.requests:
            if request["path"].startswith("/v1/messages"):
                assert [json.dumps(r["content"]) for r in results_sent(request)] in (
                    [], ['"a.txt"'], ['[{"type": "text", "text": "a.txt"}]']), line
        assert set(outputs_sent(run)) <= {"a.txt"}, line
    assert run.stdout.strip().startswith("answer ")  # the SDK program printed the reply
    assert "toolu_01" not in json.dumps(run.requests[-1]["body"])

    log = shell(log_line)
    assert log.returncode == 0, log.stderr
    assert "bash (toolu_01)" in log.stdout
