"""`sessionctx run` in front of agents other than Claude Code and Codex: the real Gemini CLI,
Goose, opencode, Copilot CLI and Cline (tests/format_agents.py: pinned npm packages, a
loopback-only network namespace, the strict stub as every provider). A normal turn of
opencode, Copilot CLI (its own key) and Cline goes through unrepaired. Each agent that can
resume a session here resumes one its provider refuses: without the proxy it fails; through
it, it goes on, and what reaches the stub is the session's own content with the refused shape
repaired.

  - Gemini CLI 0.61.0 resumes a chat by sending each call's responses twice (from the call's
    record and from the user message after it), which the Gemini API refuses.
  - Goose, opencode and Copilot CLI keep the ids their model server gave the calls; a server
    that numbers calls per reply leaves two calls with one id, which Anthropic refuses once
    the session moves there. (Copilot CLI rebuilds the rest itself: a result stored before its
    call, a second result for one call and a user message between a call and its result all
    reach the API valid; opencode keeps a call and its result in one part, so neither can be
    apart, and it answers a call left running with "[Tool execution was interrupted]".)
  - Cline 3.0.65 resumes a session (`--id`) only in its terminal UI, so no stored session is
    sent again here."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent_clis import Run
from tests.format_agents import OPENCODE_CONFIG, STUB, FormatAgents
from tests.record_format_sessions import FIRST, GEMINI_REFUSAL, SECOND, _agents, _ok, script
from tests.recorded_cases import COPILOT_TOOLS, goose_edited, goose_reused_id, opencode_edited
from tests.stub_servers import gemini_problem
from tests.test_proxy_agents import _through_run

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def agents(tmp_path: Path) -> FormatAgents:
    return _agents(tmp_path)


def audit_kinds(agents: FormatAgents) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "sessionctx.cli", "proxy", "log", "--store",
                          f"sqlite:///{agents.root / 'audit.db'}", "--json"],
                         env={"PYTHONPATH": str(SRC)}, capture_output=True, text=True,
                         timeout=60, check=True)
    return [c["kind"] for e in json.loads(out.stdout)["entries"] for c in e["changes"]]


def assert_refused_for_the_reused_id(direct: Run) -> None:
    """Sent directly, the one request was refused for its two calls with one id."""
    assert direct.returncode != 0 and [r["status"] for r in direct.requests] == [400]
    assert "tool_use` ids must be unique" in direct.refused()[0]["problem"]


def assert_went_on_with_the_id_renamed(agents: FormatAgents, run: Run,
                                       sent: dict[str, Any]) -> None:
    """Through `run` the session went on: its Anthropic request `sent` accepted, holding the
    session's four calls, each id once, each answered by its own result in order (the reused
    id renamed, no result made up), and that one repair in the audit log."""
    assert sent["path"] == "/v1/messages" and sent["status"] == 200
    assert "Continuing." in run.stdout
    blocks = [b for m in sent["body"]["messages"] if isinstance(m["content"], list)
              for b in m["content"]]
    calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    assert len(calls) == len(set(calls)) == 4 and results == calls
    assert "1 repaired" in run.stderr.splitlines()[-1]
    assert audit_kinds(agents) == ["duplicate_call_id_renamed"]


def test_gemini_cli_resumes_its_doubled_responses_through_sessionctx_run(
        agents: FormatAgents) -> None:
    steps = script("gemini", agents.cwd)
    _ok(agents.gemini("-p", FIRST, script=steps[:3]))
    [chat] = agents.gemini_chats()
    stored = chat.read_bytes()
    direct = agents.gemini("--resume", "latest", "-p", SECOND, script=steps[3:])
    assert direct.requests and {r["problem"] for r in direct.requests} == {GEMINI_REFUSAL}
    chat.write_bytes(stored)  # as the first run left it (the failed resume rewrote it)

    gemini = [str(agents.modules / ".bin" / "gemini"), "-m", "gemini-2.5-flash", "--yolo",
              "-o", "json"]
    run = agents.run(_through_run(agents, *gemini, "--resume", "latest", "-p", SECOND),
                     script=steps[3:])
    assert run.returncode == 0, run.stderr[-2000:]
    assert len(run.requests) == 2 and not run.refused()
    for request in run.requests:
        assert gemini_problem(request["body"]) is None
        sent = [p["functionResponse"]["name"] for c in request["body"]["contents"]
                for p in c["parts"] if "functionResponse" in p]
        assert sent[:3] == ["read_file", "run_shell_command", "read_file"]
    assert json.loads(run.stdout)["response"] == "That is the folder."
    assert "2 repaired" in run.stderr.splitlines()[-1]
    assert set(audit_kinds(agents)) == {"dropped_duplicate_result"}


def test_goose_resumes_a_reused_call_id_on_anthropic_through_sessionctx_run(
        agents: FormatAgents) -> None:
    store = goose_edited(agents.root, goose_reused_id)
    db = agents.goose_db()
    db.parent.mkdir(parents=True)
    shutil.copyfile(store, db)
    with sqlite3.connect(db) as conn:  # the session moved to Anthropic, as a user does
        conn.execute("UPDATE sessions SET working_dir = ?, provider_name = 'anthropic', "
                     "model_config_json = ?", (str(agents.cwd), json.dumps(
                         {"model_name": "claude-sonnet-4-5", "temperature": None,
                          "max_tokens": 16384, "toolshim": False, "toolshim_model": None,
                          "reasoning": False, "supports_vision": True})))
    conn.close()
    stored = db.read_bytes()
    reply = [{"text": "Continuing.", "match": '"tools"'}]
    direct = agents.goose("run", "-r", "-n", "recorded", "-t", "continue", script=reply)
    assert direct.requests and all(r["status"] == 400 for r in direct.requests
                                   if r["path"] == "/v1/messages")
    assert "tool_use` ids must be unique" in direct.refused()[0]["problem"]
    for leftover in (Path(f"{db}-wal"), Path(f"{db}-shm")):  # as before the failed resume
        leftover.unlink(missing_ok=True)
    db.write_bytes(stored)

    goose = str(agents.modules / "@aaif" / "goose-binary-linux-x64" / "bin" / "goose")
    run = agents.run(_through_run(agents, goose, "run", "-r", "-n", "recorded", "-t",
                                  "continue"), script=reply)
    assert run.returncode == 0, run.stderr[-2000:]
    [sent] = [r for r in run.requests if r["path"] == "/v1/messages"]
    assert_went_on_with_the_id_renamed(agents, run, sent)


NORMAL_TURN = {  # the command after the binary, and what its own turn's request holds
    "opencode": (("opencode-linux-x64", "bin", "opencode"), ("run", "say hi"), "tool_choice"),
    "copilot": (("@github", "copilot-linux-x64", "copilot"),
                ("--allow-all-tools", "-p", "say hi"), '"tools"'),
    "cline": (("@cline", "cli-linux-x64", "bin", "cline"), ("say hi", "--json"), '"tools"'),
}


@pytest.mark.parametrize("agent", list(NORMAL_TURN))
def test_a_turn_of_opencode_copilot_and_cline_goes_through_sessionctx_run(
        agents: FormatAgents, agent: str) -> None:
    """Each is configured for the stub as a user would (opencode.json, Copilot's
    COPILOT_PROVIDER_BASE_URL, Cline's stored provider settings): `run` points it at the proxy,
    which passes its valid requests on to the stub as they are."""
    binary, args, match = NORMAL_TURN[agent]
    if agent == "cline":
        agents.cline("--version")  # its provider settings stored, by `cline auth`
        stored = agents.home / ".cline" / "data" / "settings" / "providers.json"
    run = agents.run(_through_run(agents, str(agents.modules.joinpath(*binary)), *args),
                     script=[{"text": "hi é", "match": match}])
    assert run.returncode == 0, run.stderr[-2000:]
    assert "hi é" in run.stdout and run.requests and not run.refused()
    assert all(r["path"] == "/v1/chat/completions" for r in run.requests)
    summary = run.stderr.splitlines()[-1]
    count = len(run.requests)
    assert summary == (f"sessionctx: {count} request{'s' * (count > 1)}, "
                       "none needed a repair")
    if agent == "cline":  # it rewrites its settings each run (the copy): back, its URL kept
        settings = json.loads(stored.read_text())["providers"]["openai-compatible"]
        assert settings["settings"]["baseUrl"] == f"{STUB}/v1"


COPILOT_SESSION = "754dbaa4-cf0f-4373-af21-24a9c5843641"  # the recorded session's id


def test_copilot_resumes_a_reused_call_id_on_anthropic_through_sessionctx_run(
        agents: FormatAgents) -> None:
    """Copilot CLI sends the ids its events hold: a session whose listing call reused the
    first call's id, resumed with its own key on Anthropic, is refused; through `run` it goes
    on, the later call renamed, every result the session's own."""
    events = agents.home / ".copilot" / "session-state" / COPILOT_SESSION / "events.jsonl"
    events.parent.mkdir(parents=True)
    stored = COPILOT_TOOLS.read_text().replace('"call_04"', '"call_01"').replace(
        "/home/user/project", str(agents.cwd)).replace("/home/user", str(agents.home))
    events.write_text(stored)
    byok = ["env", "COPILOT_PROVIDER_TYPE=anthropic", f"COPILOT_PROVIDER_BASE_URL={STUB}",
            "COPILOT_MODEL=claude-sonnet-4-5"]
    copilot = [str(agents.modules / "@github" / "copilot-linux-x64" / "copilot"),
               "--allow-all-tools", f"--resume={COPILOT_SESSION}", "-p", "continue"]
    reply = [{"text": "Continuing.", "match": '"tools"'}]
    direct = agents.run([*byok, *copilot], script=reply)
    assert_refused_for_the_reused_id(direct)
    events.write_text(stored)  # as before the failed resume

    run = agents.run([*byok, *_through_run(agents, *copilot)], script=reply)
    assert run.returncode == 0, run.stderr[-2000:]
    [sent] = run.requests
    assert_went_on_with_the_id_renamed(agents, run, sent)


def _opencode_reused_id(part: dict[str, Any]) -> dict[str, Any] | None:
    return {**part, "callID": "call_01"} if part["callID"] == "call_04" else None


OPENCODE_ON_ANTHROPIC = ("run", "--continue", "-m", "anthropic/claude-sonnet-4-5", "continue")


def _place_opencode_reused_id(agents: FormatAgents) -> list[str]:
    """The recorded session with its listing call given the first call's id, where opencode
    continues it, Anthropic configured as a user would; the command that continues it."""
    config = json.loads(json.dumps(OPENCODE_CONFIG))
    config["provider"]["anthropic"] = {"options": {"baseURL": f"{STUB}/v1",
                                                   "apiKey": "sk-ant-stub"}}
    (agents.cwd / "opencode.json").write_text(json.dumps(config))
    db = agents.opencode_db()
    db.parent.mkdir(parents=True)
    shutil.copyfile(opencode_edited(agents.root, _opencode_reused_id), db)
    with sqlite3.connect(db) as conn:  # the recorded paths back to this run's folders
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            for column in [c[1] for c in conn.execute(f"PRAGMA table_info(`{table}`)")
                           if c[2].lower() == "text"]:
                conn.execute(f"UPDATE `{table}` SET `{column}` = replace(replace(`{column}`, "
                             f"'/home/user/project', ?), '\"/home/user', ?)",
                             (str(agents.cwd), f'"{agents.home}'))
    conn.close()
    return [str(agents.modules / "opencode-linux-x64" / "bin" / "opencode"),
            *OPENCODE_ON_ANTHROPIC]


def test_opencode_sends_a_reused_call_id_to_anthropic(agents: FormatAgents) -> None:
    """opencode sends the call ids its store holds; Anthropic refuses the reused one."""
    direct = agents.run(_place_opencode_reused_id(agents),
                        script=[{"text": "Continuing.", "match": '"tools"'}])
    assert_refused_for_the_reused_id(direct)


def test_opencode_resumes_a_reused_call_id_on_anthropic_through_sessionctx_run(
        agents: FormatAgents) -> None:
    """The session the test above sees refused goes on through `run`: the later call
    renamed, every result the session's own."""
    opencode = _place_opencode_reused_id(agents)
    run = agents.run(_through_run(agents, *opencode),
                     script=[{"text": "Continuing.", "match": '"tools"'}])
    assert run.returncode == 0, run.stderr[-2000:]
    [sent] = run.requests
    assert_went_on_with_the_id_renamed(agents, run, sent)
