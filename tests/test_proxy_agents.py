"""Keep a session alive: the real Claude Code and Codex CLIs under `sessionctx run`, offline,
against the strict stub (tests/agent_clis.py: pinned npm packages, a loopback-only network
namespace). A session the API refuses fails without the proxy and goes on through it; the stub
never receives an invented result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.agent_clis import Agents, require
from tests.test_agent_clis import SESSION, transcript_text_before_result

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def agents(tmp_path: Path) -> Agents:
    require()
    return Agents(tmp_path)


def _through_run(agents: Agents, *command: str) -> list[str]:
    return ["env", f"PYTHONPATH={SRC}", sys.executable, "-m", "sessionctx.cli", "run",
            "--store", f"sqlite:///{agents.root / 'audit.db'}", "--", *command]


def _results(request: dict[str, object]) -> list[dict[str, object]]:
    body = request["body"]
    assert isinstance(body, dict)
    return [b for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def test_claude_code_resumes_a_refused_session_through_sessionctx_run(agents: Agents) -> None:
    agents.place_claude(transcript_text_before_result(), SESSION)
    direct = agents.resume_claude(SESSION)
    assert direct.returncode != 0 and direct.refused()

    claude = str(agents.modules / ".bin" / "claude")
    run = agents.run(_through_run(agents, claude, "-p", "continue", "--resume", SESSION,
                                  "--output-format", "json"))
    assert run.returncode == 0, run.stderr
    assert run.requests and not run.refused()
    assert json.loads(run.stdout)["result"] == "answer 1"
    assert "repaired" in run.stderr.splitlines()[-1]
    for request in run.requests:  # the one result sent is the tool's own
        assert [json.dumps(r["content"]) for r in _results(request)] in (
            [], ['"a.txt"'], ['[{"type": "text", "text": "a.txt"}]'])


def test_codex_goes_through_sessionctx_run(agents: Agents) -> None:
    codex = str(agents.modules / ".bin" / "codex")
    run = agents.run(_through_run(agents, codex, "exec", "--skip-git-repo-check", "say hi"))
    assert run.returncode == 0, run.stderr
    assert run.requests and not run.refused()
    assert all(r["path"] == "/v1/responses" for r in run.requests)
    summary = run.stderr.splitlines()[-1]
    assert summary.startswith(f"sessionctx: {len(run.requests)} requests")
