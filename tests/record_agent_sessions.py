"""Record real sessions with the pinned Claude Code and Codex CLIs against the strict stub.

    PYTHONPATH=src python -m tests.record_agent_sessions tests/fixtures

writes the sessions each agent stores when a tool call is cut short, results the agent wrote for
itself included (the stub scripts one real tool call; the CLI is stopped while the tool runs):
  claude-code/recorded-2.1.332-interrupted-call.jsonl   killed mid-call, then resumed: Claude
      Code wrote an is_error tool_result "[Tool call interrupted: …]" and an assistant
      "No response requested." into the file
  codex/recorded-0.171.0-killed-call.jsonl              killed mid-call: the call has no output
  openai-responses/requests/recorded-codex-0.171.0-resume.json   what Codex sent on resuming it
      (model and input): an output "aborted" it made up for the call
  codex/recorded-0.171.0-interrupted-call.jsonl         Ctrl-C mid-call: Codex wrote an output
      "…aborted by user" and a `<turn_aborted>` user message
Temporary paths are replaced by /home/user and /home/user/project.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.agent_clis import Agents

SLOW = "python3 -c 'import time; time.sleep(120)'"
CLAUDE_SESSION = "5b0e7c1e-3a52-4d6e-9f0a-2c1d4e8b7a61"


def _anonymise(text: str, root: Path) -> str:
    text = text.replace(str(root / "home"), "/home/user").replace(str(root / "work"),
                                                                   "/home/user/project")
    dashed = re.sub(r"[^A-Za-z0-9]", "-", str(root / "work"))
    return text.replace(dashed, "-home-user-project").replace(str(root), "/home/user")


def _after(seconds: float, ready: Callable[[], bool]) -> Callable[[], bool]:
    """True once `ready` has held for `seconds` (the tool has started)."""
    since: list[float] = []

    def check() -> bool:
        if not since and ready():
            since.append(time.monotonic())
        return bool(since) and time.monotonic() - since[0] > seconds
    return check


def claude_interrupted(root: Path) -> str:
    agents = Agents(root)
    path = agents.claude_transcript(CLAUDE_SESSION)
    script = [{"calls": [{"name": "Bash", "input": {"command": SLOW,
                                                    "description": "Wait for the build"}}]}]
    agents.claude("-p", "run the build", "--output-format", "json", "--allowedTools", "Bash",
                  "--session-id", CLAUDE_SESSION, script=script,
                  stop_when=lambda: path.exists() and '"tool_use"' in path.read_text())
    resumed = agents.resume_claude(CLAUDE_SESSION)
    assert resumed.returncode == 0 and not resumed.refused(), resumed.stderr
    return _anonymise(path.read_text(), root)


def codex_stopped(root: Path, how: int) -> tuple[str, dict[str, object] | None]:
    agents = Agents(root)

    def has_call() -> bool:
        rollouts = agents.codex_rollouts()
        return bool(rollouts) and '"function_call"' in rollouts[0].read_text()

    script = [{"calls": [{"name": "exec_command", "input": {"cmd": SLOW},
                          "id": "call_build1"}]}]
    agents.codex("exec", "--skip-git-repo-check", "run the build", script=script,
                 stop_when=_after(1.5, has_call), stop_signal=how)
    rollout = agents.codex_rollouts()[0]
    text = _anonymise(rollout.read_text(), root)
    if how != signal.SIGKILL:
        return text, None
    thread = json.loads(text.splitlines()[0])["payload"]["id"]
    resumed = agents.resume_codex(thread)
    assert resumed.returncode == 0 and not resumed.refused(), resumed.stderr
    body = resumed.requests[-1]["body"]
    request = json.loads(_anonymise(json.dumps({"model": body["model"],
                                                "input": body["input"]}), root))
    return text, request


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (out / "claude-code" / "recorded-2.1.332-interrupted-call.jsonl").write_text(
            claude_interrupted(Path(tmp) / "claude"))
        killed, request = codex_stopped(Path(tmp) / "killed", signal.SIGKILL)
        (out / "codex" / "recorded-0.171.0-killed-call.jsonl").write_text(killed)
        requests = out / "openai-responses" / "requests"
        requests.mkdir(exist_ok=True)
        (requests / "recorded-codex-0.171.0-resume.json").write_text(
            json.dumps(request, indent=1) + "\n")
        interrupted, _ = codex_stopped(Path(tmp) / "interrupted", signal.SIGINT)
        (out / "codex" / "recorded-0.171.0-interrupted-call.jsonl").write_text(interrupted)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
