"""The small things a newcomer meets first: messages that finish their sentences, counts in
the right number, one warning per tool, an import that does not double a session, a pipe that
closes early, options that would do nothing refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.store.open import _path_of, default_url, store_name
from tests.conftest import FIXTURES, assistant, call, result, user

EXAMPLE = str(Path("examples/interrupted.jsonl").resolve())
OPENHANDS = FIXTURES / "openhands" / "fncall-llm-message.json"


def _run(*args: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(main, list(args), input=stdin)


def _session(tmp_path: Path, *messages: dict[str, Any], name: str = "s.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return str(path)


def test_repair_of_an_llm_log_does_not_say_nothing_to_repair_and_then_list_a_problem(
        tmp_path: Path) -> None:
    items = json.loads(OPENHANDS.read_text())
    reply = {"id": "c", "object": "chat.completion",
             "choices": [{"index": 0, "message": items[-2]}]}
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"messages": items[:-2], "response": reply}))
    out = _run("repair", str(log))
    assert out.exit_code == 1
    assert "nothing to repair" not in out.output
    assert "the file is unchanged: repair cannot take out of it what is left" in out.output
    assert "1 problem left (`sessionctx build` leaves them out of what it sends)" in out.output
    left = [line for line in out.output.splitlines() if "not repaired:" in line]
    assert len(left) == 1 and "dropped_unpaired_call: call finish" in left[0]
    assert "1 call had no result" in out.output


def test_repair_of_stdin_says_why_in_a_whole_sentence() -> None:
    out = _run("repair", "-", stdin="x\n")
    assert out.exit_code == 2
    assert "stdin is not a file: save the session to a file and repair that" in out.output


def test_explain_takes_json_and_a_provider() -> None:
    out = _run("explain", EXAMPLE, "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["format"] == "native" and data["messages"] == 6 and data["repairs"] == 2
    line4 = next(r for r in data["records"] if r["record"] == {"line": 4})
    assert line4["context"] == [] and {c["kind"] for c in line4["changes"]} == {
        "dropped_unpaired_call", "dropped_empty_message"}
    assert [p["id"] for p in data["pending_calls"]] == ["patch-1"]
    plain = _run("explain", EXAMPLE).stdout
    gemini = _run("explain", EXAMPLE, "--provider", "gemini").stdout
    assert "call_signature_placeholder_added" in gemini
    assert "call_signature_placeholder_added" not in plain
    assert "9 records stored, 6 messages for the model, 2 repairs" in plain


def test_importing_a_file_twice_does_not_double_the_session(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    path = _session(tmp_path, user("go"), assistant(call("c1")), result("c1"))
    first = _run("import", path, "--session", "s", "--store", store)
    assert first.exit_code == 0 and "imported 3 records into s" in first.output
    again = _run("import", path, "--session", "s", "--store", store)
    assert again.exit_code == 0
    assert "s already holds the first 3 records of" in again.output
    assert "imported 0 records into s (nothing)" in again.output
    with open(path, "a") as f:  # the agent went on
        f.write(json.dumps(user("more")) + "\n")
    grown = _run("import", path, "--session", "s", "--store", store)
    assert "imported 1 record into s (seq 4..4)" in grown.output
    listed = _run("sessions", "--store", store, "--json")
    assert json.loads(listed.stdout)["sessions"][0]["records"] == 4
    forced = _run("import", path, "--session", "s", "--store", store, "--again")
    assert "imported 4 records into s (seq 5..8)" in forced.output


def test_sessions_on_an_empty_store_says_so(tmp_path: Path) -> None:
    out = _run("sessions", "--store", f"sqlite:///{tmp_path}/empty.db")
    assert out.exit_code == 0
    assert out.output == (f"no sessions in {tmp_path}/empty.db; `sessionctx import FILE "
                          "--session ID` adds one\n")


def test_a_store_path_has_one_leading_slash(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert _path_of(f"sqlite:///{tmp_path}/x.db") == f"{tmp_path}/x.db"
    assert _path_of("sqlite:////var/x.db") == "/var/x.db"
    monkeypatch.delenv("SESSIONCTX_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_url() == f"sqlite:///{tmp_path}/sessionctx/sessions.db"
    assert store_name(None) == f"{tmp_path}/sessionctx/sessions.db"
    assert store_name("postgresql://u:secret@h/db") == "the PostgreSQL store"


def test_counts_take_their_nouns_number(tmp_path: Path) -> None:
    one = _session(tmp_path, user("hi"))
    assert "ready to send as stored (1 message)" in _run("check", one).output
    assert "1 message for the model" in _run("build", one).output
    out = _run("check", EXAMPLE)
    assert "2 problems before it can be sent" in out.output
    assert "1 pending call with no result" in out.output


def test_calls_to_an_undefined_tool_are_one_warning_per_tool(tmp_path: Path) -> None:
    messages: list[dict[str, Any]] = [user("go")]
    for i in range(27):
        for name in ("grep", "ls"):
            messages += [assistant(call(f"{name}{i}", name)), result(f"{name}{i}", name=name)]
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": [{"name": "bash", "inputSchema": {
        "type": "object"}}]}))
    out = _run("build", _session(tmp_path, *messages), "--provider", "anthropic", "--tools",
               str(tools), "--quiet")
    assert out.exit_code == 0, out.output
    warnings = [line for line in out.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 2
    assert warnings[0] == ("sessionctx: warning: 27 calls to tool 'grep', which the "
                           "definitions do not name (line 2, line 6, line 10, line 14, "
                           "line 18, …)")


def test_a_closed_pipe_is_not_a_verdict() -> None:
    big = str(FIXTURES / "pi" / "large-session.jsonl")
    for args in (["build", big, "--json"], ["explain", big]):
        proc = subprocess.Popen([sys.executable, "-m", "sessionctx", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(10)
        proc.stdout.close()  # as `| head -c 10` does
        err = proc.stderr.read()
        assert proc.wait() == 141, args
        assert err == b"", err


def test_options_that_would_do_nothing_are_refused() -> None:
    pretty = _run("check", EXAMPLE, "--pretty")
    assert pretty.exit_code == 2 and "--pretty indents JSON output; add --json" in pretty.output
    assert _run("check", EXAMPLE, "--pretty", "--json").exit_code == 1  # a verdict
    body = _run("build", EXAMPLE, "--provider", "openai-chat", "--pretty", "--quiet")
    assert body.exit_code == 0 and body.stdout.startswith("{\n")
    model = _run("build", EXAMPLE, "--provider", "anthropic", "--model", "gpt-5")
    assert model.exit_code == 2
    assert "'gpt-5' is an OpenAI model, which anthropic does not serve" in model.output
    assert _run("build", EXAMPLE, "--provider", "gemini", "--model",
                "claude-opus-4-8").exit_code == 2
    served = _run("build", EXAMPLE, "--provider", "bedrock", "--model",
                  "us.anthropic.claude-sonnet-4-5", "--placeholder-tools", "--quiet")
    assert served.exit_code == 0, served.output


def test_check_points_at_repair_when_repair_can_help(tmp_path: Path) -> None:
    out = _run("check", EXAMPLE)
    assert out.output.rstrip().endswith(
        f"next: `sessionctx repair {EXAMPLE} --dry-run` shows what a repair takes out of "
        "the file")
    clean = _run("check", _session(tmp_path, user("go"), assistant(call("c1")), result("c1")))
    assert "next:" not in clean.output
