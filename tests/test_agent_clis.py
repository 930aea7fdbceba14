"""The real Claude Code and Codex CLIs run offline against the strict stub: a tool-using session
is recorded and resumed with every request accepted, and a history the API refuses is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_clis import Agents

SESSION = "0d7c1a52-7e4f-4c1b-9a8e-3f5b6c2d1e90"


@pytest.fixture
def agents(tmp_path: Path) -> Agents:
    return Agents(tmp_path)


def test_claude_code_records_and_resumes_a_tool_using_session(agents: Agents) -> None:
    script = [{"calls": [{"name": "Bash", "input": {"command": "echo hi from the tool",
                                                    "description": "Say hi"}}]},
              {"text": "it said hi"}]
    first = agents.claude("-p", "say hi", "--output-format", "json", "--allowedTools", "Bash",
                          "--session-id", SESSION, script=script)
    assert first.returncode == 0, first.stderr
    assert [r["status"] for r in first.requests] == [200, 200]
    assert all(r["path"] == "/v1/messages?beta=true" for r in first.requests)
    assert first.requests[0]["headers"]["x-api-key"] == "sk-ant-stub"
    sent = first.requests[1]["body"]["messages"]
    results = [b for m in sent if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert len(results) == 1 and "hi from the tool" in json.dumps(results[0]["content"])
    lines = [json.loads(x) for x in agents.claude_transcript(SESSION).read_text().splitlines()]
    assert any(x.get("type") == "assistant" and '"tool_use"' in json.dumps(x) for x in lines)

    again = agents.resume_claude(SESSION)
    assert again.returncode == 0, again.stderr
    assert again.requests and not again.refused()
    assert again.json()["result"] == "answer 1"


def test_codex_records_and_resumes_a_tool_using_session(agents: Agents) -> None:
    script = [{"calls": [{"name": "exec_command", "input": {"cmd": "echo hi from the tool"},
                          "id": "call_hi"}]},
              {"text": "it said hi"}]
    first = agents.codex("exec", "--skip-git-repo-check", "say hi", script=script)
    assert first.returncode == 0, first.stderr
    assert [r["status"] for r in first.requests] == [200, 200]
    assert first.requests[0]["headers"]["authorization"] == "Bearer sk-stub"
    items = first.requests[1]["body"]["input"]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == ["call_hi"]
    assert "hi from the tool" in json.dumps(outputs[0]["output"])
    (rollout,) = agents.codex_rollouts()
    thread = json.loads(rollout.read_text().splitlines()[0])["payload"]["id"]

    again = agents.resume_codex(thread)
    assert again.returncode == 0, again.stderr
    assert again.requests and not again.refused()


def test_the_stub_refuses_what_claude_code_sends_for_text_before_its_result(
        agents: Agents) -> None:
    """A user entry whose text comes before its tool_result: Claude Code sends it as stored and
    the stub, like the API, refuses it (the CLI gives up with a 400)."""
    lines = transcript_text_before_result()
    agents.place_claude(lines, SESSION)
    run = agents.resume_claude(SESSION)
    assert run.returncode != 0
    assert run.refused()
    assert "`tool_use` ids were found without `tool_result` blocks immediately after" in \
        run.refused()[0]["problem"]


def transcript_text_before_result() -> list[dict[str, object]]:
    def entry(uuid: str, parent: str | None, role: str, content: object) -> dict[str, object]:
        return {"parentUuid": parent, "isSidechain": False, "type": role, "uuid": uuid,
                "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x", "sessionId": SESSION,
                "version": "2.1.332", "userType": "external",
                "message": ({"role": "user", "content": content} if role == "user" else
                            {"id": f"msg_{uuid}", "type": "message", "role": "assistant",
                             "model": "claude-opus-5-5", "content": content,
                             "stop_reason": "tool_use", "stop_sequence": None,
                             "usage": {"input_tokens": 1, "output_tokens": 1}})}
    return [
        entry("u1", None, "user", "list the files"),
        entry("a1", "u1", "assistant", [{"type": "tool_use", "id": "toolu_01", "name": "Bash",
                                         "input": {"command": "ls"}}]),
        entry("u2", "a1", "user", [{"type": "text", "text": "here you go"},
                                   {"type": "tool_result", "tool_use_id": "toolu_01",
                                    "content": "a.txt"}]),
        entry("a2", "u2", "assistant", [{"type": "text", "text": "one file"}]),
    ]
