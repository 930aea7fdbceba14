"""The real Claude Code and Codex CLIs, run offline against the strict stub.

`tests/clis/package.json` and its lock pin `@anthropic-ai/claude-code` and `@openai/codex`
exactly; the first use installs them (with their platform binary packages, which npm lists as
optional dependencies) by `npm ci` into a cache folder keyed by the lock's hash
(`$SESSIONCTX_NODE_CACHE`, default `~/.cache/sessionctx/clis-<hash>`, about 800 MB, installed
once).

Each run happens in a network namespace holding only loopback (`unshare -n`, `ip link set lo
up`), with `HOME` and `CODEX_HOME` in a temporary folder: the strict stub (tests/strict_stub.py)
is started inside the same namespace, the CLI talks to it on 127.0.0.1, and nothing can leave the
machine. After the run the stub's log of requests is read back.

Interface:
  - `Agents(tmp_path)`: one isolated home; `.claude(*args, script=...)` / `.codex(*args, ...)`
    run one CLI command and return a `Run` (exit code, stdout, stderr, the stub's `requests`,
    each as tests/strict_stub.py records it; `.refused()` those it refused). `script` is the
    stub's reply script; `stop_when=` (a callable polled while it runs) and `stop_signal=`
    stop the CLI mid-run, e.g. while a scripted tool call is running.
  - `.place_claude(lines, session_id)` / `.place_codex(lines, thread_id)` put a transcript
    where each CLI resumes it and return its path; `.resume_claude(id)` / `.resume_codex(id)`
    resume it with "continue".
  - `require()` skips the test with the reason when node, npm or unshare are missing, except
    under CI=true, where it fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.node_readers import installed

CLI_DIR = Path(__file__).resolve().parent / "clis"
STUB = Path(__file__).resolve().parent / "strict_stub.py"
CLAUDE_VERSION = "2.1.332"
CODEX_VERSION = "0.171.0"


def _missing() -> str | None:
    for tool in ("node", "npm", "unshare", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot make a network namespace (unshare -n): {probe.stderr.strip()}"
    return None


def require() -> None:
    """Skip (fail under CI=true) when the CLIs cannot run here."""
    reason = _missing()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"the agent CLIs must run in CI: {reason}")
    pytest.skip(reason)


def install() -> Path:
    """The installed node_modules folder, installing the pinned CLIs first if needed (with
    their platform binaries, optional packages to npm; Claude Code's own install step then
    links its binary into place, locally; the other install scripts stay off)."""
    require()
    return installed(CLI_DIR, "clis", ("--ignore-scripts",), 1800,
                     then=("node", "node_modules/@anthropic-ai/claude-code/install.cjs"))


PORT = 8765  # free in a fresh namespace, so the configs can name it
_WRAPPER = """
set -u
ip link set lo up
"$STUB_PYTHON" "$STUB_PROGRAM" --port "$STUB_PORT" --log "$STUB_LOG" $STUB_SCRIPT_ARG \\
    > "$STUB_OUT" 2>&1 &
stub=$!
for _ in $(seq 200); do grep -q ready "$STUB_OUT" 2>/dev/null && break; sleep 0.05; done
"$@"
rc=$?
kill "$stub" 2>/dev/null
wait "$stub" 2>/dev/null
exit $rc
"""

CODEX_CONFIG = f"""model = "gpt-5.5"
model_provider = "stub"
check_for_update_on_startup = false
approval_policy = "never"
sandbox_mode = "read-only"
[model_providers.stub]
name = "stub"
base_url = "http://127.0.0.1:{PORT}/v1"
wire_api = "responses"
env_key = "STUB_API_KEY"
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0
[analytics]
enabled = false
[feedback]
enabled = false
[features]
plugins = false
"""


@dataclass
class Run:
    """One CLI command's outcome and what the stub got while it ran."""

    returncode: int
    stdout: str
    stderr: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    def refused(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("problem")]

    def json(self) -> Any:
        return json.loads(self.stdout)


class Agents:
    """An isolated home for both CLIs under `root`, and their runs against the stub."""

    def __init__(self, root: Path, modules: Path | None = None) -> None:
        self.modules = modules if modules is not None else install()
        self.root = root
        self.home = root / "home"
        self.codex_home = self.home / ".codex"
        self.cwd = root / "work"
        self.tmp = root / "tmp"
        for folder in (self.home, self.codex_home, self.cwd, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(CODEX_CONFIG)
        self.runs = 0

    def env(self) -> dict[str, str]:
        keep = {k: os.environ[k] for k in ("PATH", "LANG", "TERM") if k in os.environ}
        return {**keep, "HOME": str(self.home), "CODEX_HOME": str(self.codex_home),
                "TMPDIR": str(self.tmp), "CLAUDE_CODE_TMPDIR": str(self.tmp),
                "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{PORT}",
                "ANTHROPIC_API_KEY": "sk-ant-stub", "STUB_API_KEY": "sk-stub",
                "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_AUTOUPDATER": "1", "DISABLE_BUG_COMMAND": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "NO_COLOR": "1"}

    def run(self, command: list[str], script: list[dict[str, Any]] | None = None,
            stop_when: Callable[[], bool] | None = None, stop_signal: int = signal.SIGKILL,
            timeout: float = 300) -> Run:
        """`command` in a loopback-only namespace with the stub serving `script`. With
        `stop_when`, the command (and the stub) gets `stop_signal` as soon as it returns true:
        SIGKILL leaves a session with a call in flight, as a crash would; SIGINT is a user's
        Ctrl-C, which the CLI handles itself."""
        self.runs += 1
        log = self.root / f"requests-{self.runs}.jsonl"
        out = self.root / f"stub-{self.runs}.out"
        script_arg = ""
        if script is not None:
            path = self.root / f"script-{self.runs}.json"
            path.write_text(json.dumps(script))
            script_arg = f"--script {path}"
        env = {**self.env(), "STUB_PYTHON": sys.executable, "STUB_PROGRAM": str(STUB),
               "STUB_PORT": str(PORT), "STUB_LOG": str(log), "STUB_OUT": str(out),
               "STUB_SCRIPT_ARG": script_arg}
        with subprocess.Popen(["unshare", "-n", "bash", "-c", _WRAPPER, "wrapper", *command],
                              cwd=self.cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                              start_new_session=True) as process:
            deadline = time.monotonic() + timeout
            while process.poll() is None:
                if stop_when is not None and stop_when():
                    os.killpg(process.pid, stop_signal)
                    stop_when = None
                    deadline = min(deadline, time.monotonic() + 30)
                if time.monotonic() > deadline:
                    os.killpg(process.pid, signal.SIGKILL)
                    break
                time.sleep(0.1)
            stdout, stderr = process.communicate()
        with suppress(ProcessLookupError):  # whatever the run left behind (a stub after a
            os.killpg(process.pid, signal.SIGKILL)  # Ctrl-C the CLI's shell did not pass on)
        requests = ([json.loads(line) for line in log.read_text().splitlines()]
                    if log.exists() else [])
        return Run(process.returncode, stdout, stderr, requests)

    # -- Claude Code ---------------------------------------------------------------------------

    def claude(self, *args: str, **kw: Any) -> Run:
        return self.run([str(self.modules / ".bin" / "claude"), *args], **kw)

    def claude_projects(self) -> Path:
        return self.home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(self.cwd))

    def claude_transcript(self, session_id: str) -> Path:
        return self.claude_projects() / f"{session_id}.jsonl"

    def place_claude(self, lines: list[dict[str, Any]], session_id: str) -> Path:
        """Put a transcript where Claude Code resumes it, its `cwd` and `sessionId` matching."""
        path = self.claude_transcript(session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            for line in lines:
                if "sessionId" in line:
                    line = {**line, "sessionId": session_id}
                if "cwd" in line:
                    line = {**line, "cwd": str(self.cwd)}
                out.write(json.dumps(line) + "\n")
        return path

    def resume_claude(self, session_id: str, prompt: str = "continue", **kw: Any) -> Run:
        return self.claude("-p", prompt, "--resume", session_id, "--output-format", "json", **kw)

    # -- Codex ---------------------------------------------------------------------------------

    def codex(self, *args: str, **kw: Any) -> Run:
        return self.run([str(self.modules / ".bin" / "codex"), *args], **kw)

    def codex_rollouts(self) -> list[Path]:
        return sorted((self.codex_home / "sessions").rglob("rollout-*.jsonl"))

    def place_codex(self, lines: list[dict[str, Any]], thread_id: str) -> Path:
        """Put a rollout where Codex finds it, its session id and cwd set to match."""
        folder = self.codex_home / "sessions" / "2026" / "01" / "01"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"rollout-2026-01-01T00-00-00-{thread_id}.jsonl"
        with open(path, "w", encoding="utf-8") as out:
            for line in lines:
                if line.get("type") == "session_meta":
                    payload = {**line["payload"], "id": thread_id, "cwd": str(self.cwd)}
                    line = {**line, "payload": payload}
                elif line.get("type") == "turn_context":
                    line = {**line, "payload": {**line["payload"], "cwd": str(self.cwd)}}
                out.write(json.dumps(line) + "\n")
        return path

    def resume_codex(self, thread_id: str, prompt: str = "continue", **kw: Any) -> Run:
        return self.codex("exec", "--skip-git-repo-check", "resume", thread_id, prompt, **kw)


if __name__ == "__main__":
    print(install())
