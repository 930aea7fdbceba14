"""Keep a session alive: the real Claude Code and Codex CLIs under `sessionctx run`, offline,
against the strict stub (tests/agent_clis.py: pinned npm packages, a loopback-only network
namespace). A session the API refuses fails without the proxy and goes on through it; the stub
never receives an invented result; a session with nothing to repair is not touched.

Codex patches an unanswered call (an "aborted" output) and an orphan output itself, so those
never reach the API broken; what it sends as stored, and the API refuses, is a reasoning item
with no item of its own turn after it (Codex killed between the two) and an output written
before its call."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionctx.proxy.audit import entries
from tests.agent_clis import Agents, Run, require
from tests.test_agent_clis import SESSION, transcript_text_before_result
from tests.test_agent_clis_repair import (
    THREAD,
    assistant_msg,
    call,
    codex_head,
    numbered,
    output,
    reasoning,
    user_msg,
)

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def agents(tmp_path: Path) -> Agents:
    require()
    return Agents(tmp_path)


def _through_run(agents: Agents, *command: str) -> list[str]:
    return ["env", f"PYTHONPATH={SRC}", sys.executable, "-m", "sessionctx.cli", "run",
            "--store", f"sqlite:///{agents.root / 'audit.db'}", "--", *command]


def audit(agents: Agents) -> list[dict[str, Any]]:
    """What `sessionctx run` recorded in its audit store."""
    return list(entries(f"sqlite:///{agents.root / 'audit.db'}"))


def results_sent(request: dict[str, object]) -> list[dict[str, object]]:
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
        assert [json.dumps(r["content"]) for r in results_sent(request)] in (
            [], ['"a.txt"'], ['[{"type": "text", "text": "a.txt"}]'])
    logged = audit(agents)  # under the session id Claude Code sends in its header
    assert logged and {e["session_id"] for e in logged} == {SESSION}
    assert all(e["outcome"] == "upstream answered 200" for e in logged)


def test_a_valid_claude_code_request_arrives_byte_identical(agents: Agents) -> None:
    """The same turn twice from the same saved state (home, session id, working folder): once
    direct, once through `sessionctx run`; the stub gets the same bytes and headers."""
    assert agents.claude("-p", "hi").returncode == 0  # Claude Code's first-run state, kept
    saved = agents.root / "saved-home"
    shutil.copytree(agents.home, saved, symlinks=True)
    turn = ("-p", "say hi", "--output-format", "json", "--session-id", SESSION)
    direct = agents.claude(*turn, script=[{"text": "hi é"}])
    shutil.rmtree(agents.home)
    shutil.copytree(saved, agents.home, symlinks=True)
    claude = str(agents.modules / ".bin" / "claude")
    run = agents.run(_through_run(agents, claude, *turn), script=[{"text": "hi é"}])
    assert direct.returncode == 0 and run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["result"] == "hi é" and not run.refused()
    assert [r["raw"] for r in run.requests] == [r["raw"] for r in direct.requests]
    hop = {"connection", "keep-alive", "host"}
    assert [{k: v for k, v in r["headers"].items() if k not in hop} for r in run.requests] == \
        [{k: v for k, v in r["headers"].items() if k not in hop} for r in direct.requests]
    summary = run.stderr.splitlines()[-1]
    assert summary == f"sessionctx: {_requests(len(run.requests))}, none needed a repair"


def test_codex_goes_through_sessionctx_run(agents: Agents) -> None:
    codex = str(agents.modules / ".bin" / "codex")
    run = agents.run(_through_run(agents, codex, "exec", "--skip-git-repo-check", "say hi"))
    assert run.returncode == 0, run.stderr
    assert run.requests and not run.refused()
    assert all(r["path"] == "/v1/responses" for r in run.requests)
    summary = run.stderr.splitlines()[-1]
    assert summary == f"sessionctx: {_requests(len(run.requests))}, none needed a repair"


CODEX_REFUSED = {
    "reasoning left without its item": lambda: [
        *codex_head(), user_msg("list the files"), reasoning("rs_1"), user_msg("never mind"),
        assistant_msg("ok")],
    "output before its call": lambda: [
        *codex_head(), user_msg("list the files"), output("call_a"), call("call_a"),
        assistant_msg("a.txt is there")],
}


def outputs_sent(run: Run) -> list[object]:
    return [i.get("output") for r in run.requests for i in (r["body"] or {}).get("input", [])
            if isinstance(i, dict) and i.get("type") == "function_call_output"]


@pytest.mark.parametrize("shape", list(CODEX_REFUSED))
def test_codex_resumes_a_refused_rollout_through_sessionctx_run(agents: Agents,
                                                                 shape: str) -> None:
    agents.place_codex(numbered(CODEX_REFUSED[shape]()), THREAD)
    direct = agents.resume_codex(THREAD)
    assert direct.returncode != 0 and [r["status"] for r in direct.requests] == [400]

    codex = str(agents.modules / ".bin" / "codex")
    run = agents.run(_through_run(agents, codex, "exec", "--skip-git-repo-check", "resume",
                                  THREAD, "continue"))
    assert run.returncode == 0, run.stderr
    assert run.requests and not run.refused()
    assert "1 repaired" in run.stderr.splitlines()[-1]
    assert set(outputs_sent(run)) <= {"a.txt"}  # only the output the rollout holds, if any
    [logged] = audit(agents)  # under the id Codex sends in its `session-id` header
    sent = {r["headers"].get("session-id") for r in run.requests}
    assert logged["session_id"] and sent == {logged["session_id"]}
    assert logged["api"] == "openai-responses"


def _requests(n: int) -> str:
    return "1 request" if n == 1 else f"{n} requests"
