"""The real Claude Code and Codex CLIs resume a session `sessionctx compact` compacted: every
request is accepted by the strict stub, the summary comes first, the kept turns after it,
nothing from the summarized part and no made-up result; sessionctx counts what the agent
loads."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from sessionctx.cli import main
from tests.agent_clis import Agents
from tests.test_agent_clis_repair import (
    CLAUDE_INVENTED,
    SESSION,
    THREAD,
    assistant_msg,
    chain,
    codex_head,
    item,
    numbered,
    res,
    text,
    use,
    user_msg,
)
from tests.test_compaction_checkpoint import write_summarizer


def long_session(turns: int) -> list[dict[str, Any]]:
    steps: list[tuple[str, Any]] = [("user", "start the work")]
    for t in range(turns):
        steps += [("assistant", [text(f"step {t} " + "x" * 300), use(f"toolu_{t:03d}")]),
                  ("user", [res(f"toolu_{t:03d}", f"output {t} " + "y" * 1500)]),
                  ("assistant", [text(f"done step {t}")]), ("user", f"next step {t + 1}")]
    steps.append(("assistant", [text("all done")]))
    return chain(*steps)


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def compact(path: Path, tmp_path: Path) -> Any:
    """`compact --json` of the agent's file with a summarizer program, keeping 3000 tokens: its
    report. The file's old bytes stay its first bytes (the checkpoint is appended)."""
    before = path.read_bytes()
    script = write_summarizer(tmp_path)
    out = run("compact", str(path), "--summarizer", f"command:{sys.executable} {script}",
              "--keep-tokens", "3000", "--json")
    assert out.exit_code == 0, out.output
    assert path.read_bytes().startswith(before)
    return json.loads(out.output)


def test_claude_code_resumes_a_compacted_session(tmp_path: Path) -> None:
    agents = Agents(tmp_path)
    original = long_session(30)
    path = agents.place_claude(original, SESSION)
    info = compact(path, tmp_path)
    assert info["wrote"] == "compact_boundary"
    added = [json.loads(x) for x in path.read_text().splitlines()[len(original):]]
    assert added[0]["subtype"] == "compact_boundary" and added[0]["parentUuid"] is None
    assert added[1]["isCompactSummary"] is True and added[1]["parentUuid"] == added[0]["uuid"]
    counted = json.loads(run("budget", str(path), "--window", "1000000", "--json").output)

    resumed = agents.resume_claude(SESSION)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.requests and not resumed.refused()
    sent = resumed.requests[0]["body"]["messages"]
    flat = json.dumps(sent)
    first = json.dumps(sent[0])
    assert "This session continues an earlier conversation" in first
    assert "## Current state" in first
    assert "next step 30" in flat and "output 29" in flat  # kept turns
    assert "step 0 x" not in flat and "output 3 y" not in flat  # summarized turns
    assert not any(mark in flat for mark in CLAUDE_INVENTED)
    assert not any(mark in path.read_text() for mark in CLAUDE_INVENTED)
    # sessionctx counted the messages Claude Code sent (plus its own system text and prompt)
    chat = [m for m in sent if m["role"] != "system"]
    assert info["messages"] <= len(chat) <= info["messages"] + 1
    assert counted["tokens"] < info["tokensBefore"]


def long_rollout(turns: int) -> list[dict[str, Any]]:
    items = codex_head()
    for t in range(turns):
        items.append(user_msg(f"step {t} please " + "x" * 300))
        items.append(item({"type": "function_call", "name": "exec_command",
                           "call_id": f"call_{t:03d}", "arguments": json.dumps({"cmd": "ls"})}))
        items.append(item({"type": "function_call_output", "call_id": f"call_{t:03d}",
                           "output": f"output {t} " + "y" * 1500}))
        items.append(assistant_msg(f"done step {t}"))
    return numbered(items)


def test_codex_resumes_a_compacted_rollout(tmp_path: Path) -> None:
    agents = Agents(tmp_path)
    original = long_rollout(30)
    path = agents.place_codex(original, THREAD)
    assert compact(path, tmp_path)["wrote"] == "compacted"
    (line,) = [json.loads(x) for x in path.read_text().splitlines()[len(original):]]
    assert line["ordinal"] == original[-1]["ordinal"] + 1
    history = line["payload"]["replacement_history"]
    assert "## Current state" in json.dumps(history[0])

    resumed = agents.resume_codex(THREAD)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.requests and not resumed.refused()
    sent = json.dumps(resumed.requests[0]["body"]["input"])
    assert "This session continues an earlier conversation" in sent
    assert "output 29" in sent and "step 29 please" in sent  # kept turns
    assert "step 0 please" not in sent and "output 3 y" not in sent  # summarized turns
    assert '"output": "aborted"' not in sent
