"""The real Claude Code and Codex CLIs resume what `sessionctx repair` wrote.

Each broken shape (from old and new versions of each agent) is repaired, placed where the CLI
resumes it and resumed with "continue" against the strict stub: every request must be accepted
and none may carry a result the CLI made up for a call (Claude Code's "[Tool call
interrupted…]" / "[Tool use interrupted]", Codex's "aborted"). Shapes that only a later repair
fixes are marked xfail(strict=True) with the missing repair named.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from tests.agent_clis import Agents, Run
from tests.conftest import FIXTURES

Line = dict[str, Any]
SESSION = "3f1e2d4c-5b6a-4978-8d1c-2e3f4a5b6c7d"
THREAD = "01a24300-0000-7000-8000-000000000001"
CLAUDE_INVENTED = ("[Tool call interrupted", "[Tool use interrupted]")


def repair(path: Path) -> None:
    outcome = CliRunner().invoke(main, ["repair", "--no-backup", str(path)])
    assert outcome.exit_code in (0, 1), outcome.output


# -- Claude Code -----------------------------------------------------------------------------

def cc(uuid: str, parent: str | None, role: str, content: Any, version: str = "2.1.332",
       stop: str = "end_turn") -> Line:
    message: Line = ({"role": "user", "content": content} if role == "user" else
                     {"id": f"msg_{uuid}", "type": "message", "role": "assistant",
                      "model": "claude-opus-5-5", "content": content, "stop_reason": stop,
                      "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})
    return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/x",
            "sessionId": SESSION, "version": version, "type": role, "message": message,
            "uuid": uuid, "timestamp": "2026-01-01T00:00:00.000Z"}


def use(cid: str) -> Line:
    return {"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": "ls"}}


def res(cid: str, text: str = "a.txt") -> Line:
    return {"type": "tool_result", "tool_use_id": cid, "content": text}


def chain(*turns: tuple[str, Any], version: str = "2.1.332") -> list[Line]:
    lines: list[Line] = []
    parent = None
    for k, (role, content) in enumerate(turns):
        uuid = f"00000000-0000-4000-8000-{k:012d}"
        lines.append(cc(uuid, parent, role, content, version))
        parent = uuid
    return lines


def text(t: str) -> Line:
    return {"type": "text", "text": t}


def cc_unanswered_end(version: str) -> list[Line]:
    return chain(("user", "list files"), ("assistant", [text("looking"), use("toolu_01")]),
                 version=version)


def cc_unanswered_mid(version: str) -> list[Line]:
    return chain(("user", "list files"), ("assistant", [use("toolu_01")]),
                 ("user", "never mind, say hi"), ("assistant", [text("hi")]), version=version)


def cc_orphan_result(version: str) -> list[Line]:
    return chain(("user", "list files"), ("assistant", [text("sure")]),
                 ("user", [res("toolu_99")]), ("assistant", [text("done")]), version=version)


def cc_pair_repeated(version: str) -> list[Line]:
    return chain(("user", "list files"), ("assistant", [use("toolu_01")]),
                 ("user", [res("toolu_01")]), ("assistant", [use("toolu_01")]),
                 ("user", [res("toolu_01")]), ("assistant", [text("done")]), version=version)


def cc_text_before_result(version: str) -> list[Line]:
    return chain(("user", "list files"), ("assistant", [use("toolu_01")]),
                 ("user", [text("here"), res("toolu_01")]), ("assistant", [text("done")]),
                 version=version)


def cc_old_fixture(version: str) -> list[Line]:
    path = FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def cc_recorded_killed(version: str) -> list[Line]:
    """The recorded session cut back to where Claude Code was killed: a call in flight."""
    path = FIXTURES / "claude-code" / "recorded-2.1.332-interrupted-call.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    end = next(i for i, x in enumerate(lines) if '"tool_use"' in json.dumps(x.get("message")))
    return lines[:end + 1]


CLAUDE_SHAPES: dict[str, Callable[[str], list[Line]]] = {
    "unanswered call at the end": cc_unanswered_end,
    "unanswered call in the middle": cc_unanswered_mid,
    "orphan result": cc_orphan_result,
    "pair repeated with one id": cc_pair_repeated,
    "recorded: killed mid-call": cc_recorded_killed,
}
CLAUDE_CASES = [pytest.param(name, version, id=f"{name} ({version})")
                for name in CLAUDE_SHAPES for version in ("1.0.51", "2.1.332")
                if not name.startswith("recorded")] + [
    pytest.param("recorded: killed mid-call", "2.1.332", id="recorded killed mid-call"),
    pytest.param("old fixture", "1.0", id="old fixture ending on an unanswered call"),
    pytest.param("text before result", "2.1.332", id="text before its tool_result"),
]
CLAUDE_SHAPES["old fixture"] = cc_old_fixture
CLAUDE_SHAPES["text before result"] = cc_text_before_result


def claude_invented(run: Run) -> list[str]:
    found = []
    for request in run.requests:
        for message in (request["body"] or {}).get("messages", []):
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result" and any(
                        mark in json.dumps(block.get("content")) for mark in CLAUDE_INVENTED):
                    found.append(block["tool_use_id"])
    return found


@pytest.mark.parametrize(("shape", "version"), CLAUDE_CASES)
def test_claude_code_resumes_a_repaired_session(tmp_path: Path, shape: str,
                                                version: str) -> None:
    agents = Agents(tmp_path)
    path = agents.place_claude(CLAUDE_SHAPES[shape](version), SESSION)
    repair(path)
    run = agents.resume_claude(SESSION)
    assert not run.refused(), run.refused()[0]["problem"]
    assert run.returncode == 0, run.stdout + run.stderr
    assert claude_invented(run) == []
    # (A file that ends on a user prompt gets Claude Code's own assistant "No response
    # requested." on resume: a reply, not a tool result.)
    assert not any(mark in path.read_text() for mark in CLAUDE_INVENTED)


# -- Codex ---------------------------------------------------------------------------------

def recorded_codex() -> list[Line]:
    path = FIXTURES / "codex" / "recorded-0.171.0-killed-call.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()]


def item(payload: Line) -> Line:
    return {"timestamp": "2026-01-01T00:00:01.000Z", "type": "response_item",
            "payload": payload}


def user_msg(t: str) -> Line:
    return item({"type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": t}]})


def assistant_msg(t: str) -> Line:
    return item({"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": t}]})


def call(cid: str) -> Line:
    return item({"type": "function_call", "name": "exec_command", "call_id": cid,
                 "arguments": json.dumps({"cmd": "ls"})})


def output(cid: str) -> Line:
    return item({"type": "function_call_output", "call_id": cid, "output": "a.txt"})


def reasoning(rid: str) -> Line:
    return item({"type": "reasoning", "id": rid, "summary": [
        {"type": "summary_text", "text": "I will list the files"}], "content": None,
        "encrypted_content": "gAAAA-stub"})


def codex_head() -> list[Line]:
    """The recorded rollout up to its first user prompt (meta, context, instructions)."""
    lines = recorded_codex()
    end = next(i for i, x in enumerate(lines) if x["type"] == "function_call"
               or x.get("payload", {}).get("type") == "function_call")
    return lines[:end]


def numbered(lines: list[Line]) -> list[Line]:
    """Lines given consecutive `ordinal`s when the rollout's version writes them (0.171 does, and
    refuses to resume a rollout whose last line has none)."""
    if "ordinal" not in lines[0]:
        return lines
    return [{**line, "ordinal": k} for k, line in enumerate(lines)]


def old_codex_cut() -> list[Line]:
    """The 2025-09 rollout (no ordinals) cut after its third function_call: that call is left
    unanswered at the end."""
    path = next((FIXTURES / "codex").glob("rollout-2025-*.jsonl"))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    calls = [i for i, x in enumerate(lines) if x.get("payload", {}).get("type") == "function_call"]
    return lines[:calls[2] + 1]


CODEX_SHAPES: dict[str, Callable[[], list[Line]]] = {
    "recorded: killed mid-call": recorded_codex,
    "unanswered call in the middle": lambda: [*codex_head(),
        call("call_a"), user_msg("never mind"), assistant_msg("ok")],
    "orphan output": lambda: [*codex_head(),
        assistant_msg("ok"), output("call_zz"), user_msg("and now?"), assistant_msg("fine")],
    "answered pair then unanswered": lambda: [*codex_head(),
        call("call_a"), output("call_a"), call("call_b")],
    "old rollout (2025-09): unanswered call at the end": old_codex_cut,
    "reasoning before an unanswered call": lambda: [*codex_head(),
        reasoning("rs_1"), call("call_a"), user_msg("never mind"), assistant_msg("ok")],
    "reasoning before an unanswered call at the end": lambda: [*codex_head(),
        reasoning("rs_1"), call("call_a")],
    "reasoning before two calls, one answered": lambda: [*codex_head(),
        reasoning("rs_1"), call("call_a"), call("call_b"), output("call_b")],
}
CODEX_CASES = [pytest.param(name, id=name) for name in CODEX_SHAPES]


def codex_invented(run: Run) -> list[str]:
    return [i["call_id"] for r in run.requests for i in (r["body"] or {}).get("input", [])
            if isinstance(i, dict) and i.get("type") == "function_call_output"
            and i.get("output") == "aborted"]


@pytest.mark.parametrize("shape", CODEX_CASES)
def test_codex_resumes_a_repaired_rollout(tmp_path: Path, shape: str) -> None:
    agents = Agents(tmp_path)
    path = agents.place_codex(numbered(CODEX_SHAPES[shape]()), THREAD)
    repair(path)
    run = agents.resume_codex(THREAD)
    assert not run.refused(), run.refused()[0]["problem"]
    assert run.returncode == 0, run.stdout + run.stderr
    assert codex_invented(run) == []
