"""Record real sessions with the pinned Gemini CLI, opencode, Copilot CLI, Cline's CLI and Goose.

    PYTHONPATH=src python -m tests.record_format_sessions tests/fixtures

Each agent works in a folder holding `app.py` (two lines). The strict stub scripts the same
session for all five, in each agent's own tool names: two calls in one reply (read app.py, count its
lines in the shell), a read of a file that does not exist (an error result), a text answer;
then the session is resumed with a second prompt, answered by one more call and a text. A
second session is cut short: the agent is killed (SIGKILL) while a shell call that sleeps
runs, as a crash would leave it. Written:
  gemini-cli-jsonl/recorded-0.61.0-tools.jsonl, recorded-0.61.0-killed-call.jsonl,
      recorded-0.61.0-killed-then-resumed.jsonl (resumed with "continue")
  opencode/recorded-1.18.33-tools.db (its opencode.db), recorded-1.18.33-tools.export.json
      (what `opencode export` printed for it), recorded-1.18.33-killed-call.db
  copilot-cli/recorded-1.0.102-tools.jsonl, recorded-1.0.102-killed-call.jsonl (events.jsonl),
      recorded-1.0.102-killed-then-resumed.jsonl (the killed session resumed with "continue":
      Copilot CLI wrote a failed result "Tool execution was interrupted before a result was
      recorded. …" for the call)
  cline/recorded-3.0.65-tools.messages.json (one run: no resume without its terminal UI),
      recorded-3.0.65-killed-call.messages.json, recorded-3.0.65-interrupted-call.messages.json
      (Ctrl-C mid-call: Cline aborted the command and wrote "Command failed: Command was
      aborted" as its result)
  goose/recorded-1.52.0-tools.db (its sessions.db: the session resumed by name with the
      second prompt), recorded-1.52.0-killed-call.db, recorded-1.52.0-killed-then-resumed.db
      (Goose has no tool to read a file: it reads with `cat` in its shell)
The Gemini API gives its calls no id, so the Gemini replies carry none. Temporary paths are
replaced by /home/user and /home/user/project; an opencode or Goose store is
checkpointed into one file (its write-ahead log folded in) after that replacement.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agent_clis import Run
from tests.format_agents import (
    CLINE_VERSION,
    COPILOT_VERSION,
    GEMINI_VERSION,
    GOOSE_VERSION,
    OPENCODE_VERSION,
    FormatAgents,
)
from tests.record_agent_sessions import SLOW, _after
from tests.record_agent_sessions import _anonymise as _absolute

APP = 'def main():\n    print("hi")\n'
GEMINI_REFUSAL = ("Please ensure that the number of function response parts is equal to the "
                  "number of function call parts of the function call turn.")
FIRST, SECOND = "count the lines of app.py and run it", "now list the folder"

# Each agent's names for: read a file (its path argument), run a shell command, list files.
TOOLS: dict[str, dict[str, Any]] = {
    "gemini": {"read": ("read_file", "file_path"), "shell": "run_shell_command",
               "list": ("list_directory", {"dir_path": "."}), "absolute": False,
               "match": "streamGenerateContent"},
    "opencode": {"read": ("read", "filePath"), "shell": "bash",
                 "list": ("glob", {"pattern": "*"}), "absolute": True, "match": "tool_choice"},
    "copilot": {"read": ("view", "path"), "shell": "bash",
                "list": ("glob", {"pattern": "*"}), "absolute": True, "match": '"tools"'},
    "cline": {"read": ("read_files", "files"), "shell": "run_commands",
              "list": ("run_commands", {"commands": ["ls"]}), "absolute": True,
              "match": '"tools"'},
    "goose": {"read": ("shell", "command"), "shell": "shell", "list": ("tree", {"path": "."}),
              "absolute": False, "match": '"tools"'},
}


def _anonymise(text: str, root: Path) -> str:
    """Temporary paths replaced, the relative form opencode keeps (`path`) too."""
    text = _absolute(text, root)
    return text.replace(str(root / "work").lstrip("/"), "home/user/project").replace(
        str(root).lstrip("/"), "home/user")


def script(agent: str, cwd: Path) -> list[dict[str, Any]]:
    """The five replies of the recorded session, in `agent`'s tool names."""
    t = TOOLS[agent]
    read, arg = t["read"]
    where = (lambda name: str(cwd / name)) if t["absolute"] else (lambda name: name)
    shell = _shell(agent, "wc -l app.py", "Count the lines of app.py")

    def reads(name: str) -> dict[str, Any]:
        if agent == "goose":
            return {arg: f"cat {name}"}
        return {arg: [{"path": where(name)}]} if agent == "cline" else {arg: where(name)}

    entries: list[dict[str, Any]] = [
        {"calls": [{"name": read, "input": reads("app.py")},
                   {"name": t["shell"], "input": shell}]},
        {"calls": [{"name": read, "input": reads("missing.py")}]},
        {"text": "app.py has 2 lines and prints hi; missing.py does not exist."},
        {"calls": [{"name": t["list"][0], "input": t["list"][1]}]},
        {"text": "That is the folder."}]
    numbered = iter(range(1, 10))
    for e in entries:  # the Gemini API gives its function calls no id; the others, their own
        e["calls"] = [{**c, "id": None if agent == "gemini" else f"call_{next(numbered):02}"}
                      for c in e.get("calls", [])]
    return [{**{k: v for k, v in e.items() if v != []}, "match": t["match"]} for e in entries]


def _shell(agent: str, command: str, description: str) -> dict[str, Any]:
    """A shell call's arguments in `agent`'s tool."""
    if agent == "cline":
        return {"commands": [command]}
    if agent == "goose":
        return {"command": command}
    return {"command": command, "description": description}


def killed_script(agent: str) -> list[dict[str, Any]]:
    shell = _shell(agent, SLOW, "Wait for the build")
    call = {"name": TOOLS[agent]["shell"], "input": shell,
            "id": None if agent == "gemini" else "call_build"}
    return [{"calls": [call],
             "match": TOOLS[agent]["match"]}]


def _ok(run: Run) -> Run:
    assert run.returncode == 0 and not run.refused(), (run.stdout[-2000:], run.stderr[-2000:])
    return run


def _main_requests(agents: FormatAgents, match: str) -> Callable[[], bool]:
    """True once the stub got a request of the agent's own turn."""
    def ready() -> bool:
        log = agents.root / f"requests-{agents.runs}.jsonl"
        return log.exists() and match in log.read_text()
    return ready


def _agents(root: Path) -> FormatAgents:
    agents = FormatAgents(root)
    (agents.cwd / "app.py").write_text(APP)
    return agents


# -- Gemini CLI --------------------------------------------------------------------------------

def gemini_tools(root: Path) -> str:
    agents = _agents(root)
    steps = script("gemini", agents.cwd)
    _ok(agents.gemini("-p", FIRST, script=steps[:3]))
    resumed = agents.gemini("--resume", "latest", "-p", SECOND, script=steps[3:])
    # 0.61.0 sends each call's responses twice on resume (from the call's record and from
    # the user message after it), which the API refuses; it writes that history back.
    turns = [r["problem"] for r in resumed.requests if "streamGenerateContent" in r["path"]]
    assert turns and set(turns) == {GEMINI_REFUSAL}, resumed.stderr[-2000:]
    return _anonymise(_chat_of(agents, FIRST).read_text(), root)


def _chat_of(agents: FormatAgents, prompt: str) -> Path:
    """The chat file holding `prompt` (the longest, should a run have left another)."""
    chats = [c for c in agents.gemini_chats() if json.dumps(prompt) in c.read_text()]
    assert chats, [c.name for c in agents.gemini_chats()]
    return max(chats, key=lambda c: c.stat().st_size)


def gemini_killed(root: Path) -> tuple[str, str]:
    """The chat as the kill left it, and after resuming it with "continue"."""
    agents = _agents(root)
    agents.gemini("-p", "run the build", script=killed_script("gemini"),
                  stop_when=_after(2.0, _main_requests(agents, "streamGenerateContent")))
    chat = _chat_of(agents, "run the build")
    killed = _anonymise(chat.read_text(), root)
    _ok(agents.gemini("--resume", "latest", "-p", "continue",
                      script=[{"text": "Continuing.", "match": TOOLS["gemini"]["match"]}]))
    return killed, _anonymise(chat.read_text(), root)


# -- opencode ----------------------------------------------------------------------------------

def _store(db: Path, root: Path, out: Path) -> None:
    """A SQLite store `db` (with its write-ahead log) copied to `out` as one file, temporary
    paths replaced."""
    work = Path(tempfile.mkdtemp(prefix="store-copy-", dir=root))
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{db}{suffix}").exists():
            shutil.copyfile(f"{db}{suffix}", work / f"store.db{suffix}")
    conn = sqlite3.connect(work / "store.db")
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info(`{table}`)")
                       if r[2].lower() == "text"]
            for column in columns:
                like = (f"%{str(root).lstrip('/')}%",)
                for (value,) in conn.execute(f"SELECT DISTINCT `{column}` FROM `{table}`"
                                             f" WHERE `{column}` LIKE ?", like).fetchall():
                    conn.execute(f"UPDATE `{table}` SET `{column}` = ? WHERE `{column}` = ?",
                                 (_anonymise(value, root), value))
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("VACUUM")
    finally:
        conn.close()
    shutil.copyfile(work / "store.db", out)


def opencode_tools(root: Path, out_db: Path) -> str:
    agents = _agents(root)
    steps = script("opencode", agents.cwd)
    _ok(agents.opencode("run", FIRST, script=steps[:3]))
    _ok(agents.opencode("run", "--continue", SECOND, script=steps[3:]))
    [session] = sqlite3.connect(agents.opencode_db()).execute("SELECT id FROM session").fetchall()
    exported = _ok(agents.opencode("export", session[0]))
    _store(agents.opencode_db(), root, out_db)
    document = exported.stdout[exported.stdout.index("{"):]
    return _anonymise(json.dumps(json.loads(document), indent=2) + "\n", root)


def opencode_killed(root: Path, out_db: Path) -> None:
    agents = _agents(root)
    agents.opencode("run", "run the build", script=killed_script("opencode"),
                    stop_when=_after(3.0, _main_requests(agents, "tool_choice")))
    _store(agents.opencode_db(), root, out_db)


# -- Copilot CLI -------------------------------------------------------------------------------

def copilot_tools(root: Path) -> str:
    agents = _agents(root)
    steps = script("copilot", agents.cwd)
    _ok(agents.copilot("-p", FIRST, script=steps[:3]))
    [events] = agents.copilot_events()
    _ok(agents.copilot(f"--resume={events.parent.name}", "-p", SECOND, script=steps[3:]))
    return _anonymise(events.read_text(), root)


def copilot_killed(root: Path) -> tuple[str, str]:
    """The events as the kill left them, and after resuming with "continue"."""
    agents = _agents(root)

    def started() -> bool:
        found = agents.copilot_events()
        return bool(found) and '"tool.execution_start"' in found[0].read_text()

    agents.copilot("-p", "run the build", script=killed_script("copilot"),
                   stop_when=_after(1.5, started), stop_signal=signal.SIGKILL)
    [events] = agents.copilot_events()
    killed = _anonymise(events.read_text(), root)
    _ok(agents.copilot(f"--resume={events.parent.name}", "-p", "continue",
                       script=[{"text": "Continuing.", "match": TOOLS["copilot"]["match"]}]))
    return killed, _anonymise(events.read_text(), root)


# -- Cline -------------------------------------------------------------------------------------

def cline_tools(root: Path) -> str:
    """One run only: 3.0.65 resumes a session (`--id`) in its terminal UI alone."""
    agents = _agents(root)
    _ok(agents.cline(FIRST, "--json", script=script("cline", agents.cwd)[:3]))
    [session] = agents.cline_sessions()
    return _anonymise(session.read_text(), root)


def cline_stopped(root: Path, how: int) -> str:
    """Cline stopped by `how` while its shell call runs: SIGKILL as a crash, SIGINT as a
    user's Ctrl-C (Cline then aborts the command and writes its failure as the result)."""
    agents = _agents(root)
    agents.cline("run the build", "--json", script=killed_script("cline"),
                 stop_when=_after(2.0, _main_requests(agents, '"tools"')), stop_signal=how)
    [session] = agents.cline_sessions()
    return _anonymise(session.read_text(), root)


# -- Goose -------------------------------------------------------------------------------------

def goose_tools(root: Path, out_db: Path) -> None:
    agents = _agents(root)
    steps = script("goose", agents.cwd)
    _ok(agents.goose("run", "-n", "recorded", "-t", FIRST, script=steps[:3]))
    _ok(agents.goose("run", "-r", "-n", "recorded", "-t", SECOND, script=steps[3:]))
    _store(agents.goose_db(), root, out_db)


def goose_killed(root: Path, out_killed: Path, out_resumed: Path) -> None:
    """The store as the kill left it, and after resuming the session with "continue"."""
    agents = _agents(root)
    agents.goose("run", "-n", "killed", "-t", "run the build", script=killed_script("goose"),
                 stop_when=_after(2.0, _main_requests(agents, '"tools"')))
    _store(agents.goose_db(), root, out_killed)
    _ok(agents.goose("run", "-r", "-n", "killed", "-t", "continue",
                     script=[{"text": "Continuing.", "match": TOOLS["goose"]["match"]}]))
    _store(agents.goose_db(), root, out_resumed)


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        gem = out / "gemini-cli-jsonl"
        (gem / f"recorded-{GEMINI_VERSION}-tools.jsonl").write_text(
            gemini_tools(base / "gemini-tools"))
        killed, resumed = gemini_killed(base / "gemini-killed")
        (gem / f"recorded-{GEMINI_VERSION}-killed-call.jsonl").write_text(killed)
        (gem / f"recorded-{GEMINI_VERSION}-killed-then-resumed.jsonl").write_text(resumed)
        oc = out / "opencode"
        (oc / f"recorded-{OPENCODE_VERSION}-tools.export.json").write_text(
            opencode_tools(base / "opencode-tools", oc / f"recorded-{OPENCODE_VERSION}-tools.db"))
        opencode_killed(base / "opencode-killed",
                        oc / f"recorded-{OPENCODE_VERSION}-killed-call.db")
        cop = out / "copilot-cli"
        (cop / f"recorded-{COPILOT_VERSION}-tools.jsonl").write_text(
            copilot_tools(base / "copilot-tools"))
        killed, resumed = copilot_killed(base / "copilot-killed")
        (cop / f"recorded-{COPILOT_VERSION}-killed-call.jsonl").write_text(killed)
        (cop / f"recorded-{COPILOT_VERSION}-killed-then-resumed.jsonl").write_text(resumed)
        cline = out / "cline"
        (cline / f"recorded-{CLINE_VERSION}-tools.messages.json").write_text(
            cline_tools(base / "cline-tools"))
        (cline / f"recorded-{CLINE_VERSION}-killed-call.messages.json").write_text(
            cline_stopped(base / "cline-killed", signal.SIGKILL))
        (cline / f"recorded-{CLINE_VERSION}-interrupted-call.messages.json").write_text(
            cline_stopped(base / "cline-interrupted", signal.SIGINT))
        goose = out / "goose"
        goose_tools(base / "goose-tools", goose / f"recorded-{GOOSE_VERSION}-tools.db")
        goose_killed(base / "goose-killed", goose / f"recorded-{GOOSE_VERSION}-killed-call.db",
                     goose / f"recorded-{GOOSE_VERSION}-killed-then-resumed.db")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
