"""The command package: one loader behind every command, one error mapping, `-m` entry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.cli.app import main as app_main


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _screenshots(tmp_path: Path) -> str:
    rows: list[dict[str, Any]] = [{"role": "user", "content": "look"}]
    for i in range(3):
        rows.append({"role": "assistant", "content": [
            {"type": "toolCall", "id": f"c{i}", "name": "browser_use", "arguments": {}}]})
        rows.append({"role": "toolResult", "toolCallId": f"c{i}", "toolName": "browser_use",
                     "content": [{"type": "text", "text": "shot"},
                                 {"type": "image", "data": "iVBORw0KGgo=",
                                  "mimeType": "image/png"}]})
    rows.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    return _write(tmp_path / "shots.jsonl", rows)


def _tokens(*args: str) -> int:
    out = run("budget", *args, "--window", "100000", "--json")
    assert out.exit_code == 0, out.output
    return int(json.loads(out.output)["tokens"])


def test_budget_counts_the_context_the_build_options_make(tmp_path: Path) -> None:
    path = _screenshots(tmp_path)
    one, none, every = (_tokens(path, "--keep-screenshots", n) for n in ("1", "0", "3"))
    assert none < one < every
    assert _tokens(path) == one
    # the same images are kept when another tool is named the browser
    assert _tokens(path, "--browser-tool", "other", "--keep-screenshots", "0") == every


def test_budget_reads_the_branch_leaf_names(tmp_path: Path) -> None:
    path = _write(tmp_path / "tree.jsonl", [
        {"type": "message", "id": "a", "parentId": None,
         "message": {"role": "user", "content": "root"}},
        {"type": "message", "id": "b", "parentId": "a",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "x" * 400}]}},
        {"type": "message", "id": "c", "parentId": "a",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "short"}]}}])
    assert _tokens(path, "--leaf", "b") > _tokens(path) == _tokens(path, "--leaf", "c")
    missing = run("budget", path, "--window", "100000", "--leaf", "zz")
    assert missing.exit_code == 2 and "no entry with id 'zz'" in missing.output


def test_budget_and_import_read_the_format_from_names(tmp_path: Path) -> None:
    path = _write(tmp_path / "cc.jsonl", [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "timestamp": "2025-01-01T00:00:00Z",
         "message": {"role": "user", "content": "hello there"}},
        {"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": "s",
         "timestamp": "2025-01-01T00:00:01Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "text", "text": "hi, how can I help"}]}}])
    assert _tokens(path, "--from", "claude-code") == _tokens(path) > 0
    native = run("budget", path, "--from", "native", "--window", "100000", "--json")
    assert native.exit_code == 2 and "not a native file" in native.output
    url = f"sqlite:///{tmp_path / 's.db'}"
    imported = run("import", path, "--session", "s", "--store", url, "--from", "claude-code")
    assert imported.exit_code == 0, imported.output
    assert _tokens("--session", "s", "--store", url) == _tokens(path)


def test_source_usage_errors_exit_2(tmp_path: Path) -> None:
    path = _screenshots(tmp_path)
    url = f"sqlite:///{tmp_path / 's.db'}"
    for command in ("build", "check", "explain", "budget", "compact", "restore"):
        extra = {"budget": ["--window", "100000"], "compact": ["--dry-run"],
                 "restore": ["--before", "x"]}.get(command, [])
        store_alone = run(command, "--store", url, *extra)
        assert store_alone.exit_code == 2 and "--store needs --session" in store_alone.output
        both = run(command, path, "--session", "s", *extra)
        assert both.exit_code == 2 and "not both" in both.output
        neither = run(command, *extra)
        assert neither.exit_code == 2 and "give PATH" in neither.output


def test_library_errors_exit_2_with_the_message(tmp_path: Path) -> None:
    out = run("sessions", "--store", "ftp://nowhere")
    assert out.exit_code == 2
    assert out.output.startswith("sessionctx: unknown store URL 'ftp://nowhere'")
    assert "Traceback" not in out.output


def test_every_command_is_registered_on_the_one_group() -> None:
    assert main is app_main
    assert {"build", "check", "explain", "sessions", "import", "export", "compact", "restore",
            "budget"} <= set(main.commands)


@pytest.mark.parametrize("command", ["compact", "restore", "budget", "build"])
def test_python_m_sessionctx_cli_knows_every_command(command: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "sessionctx.cli", command, "--help"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"Usage: python -m sessionctx.cli {command}" in proc.stdout


def test_every_library_error_has_one_root() -> None:
    import sessionctx
    from sessionctx import errors
    from sessionctx.compaction import checkpoint, planner, summarizers, target, tokens
    from sessionctx.store import base

    raised = [base.StoreError, base.NotASessionStore, base.SchemaTooNew, base.StoreLocked,
              base.ReadOnlyStore, errors.CompactionError, checkpoint.AuditFailed,
              planner.NothingToCompact, summarizers.SummarizerError, tokens.TokenizerUnavailable,
              target.TargetError, errors.InputError, errors.BadArgument, errors.NoSuchEntry]
    assert all(issubclass(e, sessionctx.SessionctxError) for e in raised)
    assert base.SessionChanged is target.SessionChanged is sessionctx.SessionChanged
    with pytest.raises(errors.BadArgument, match="unknown format"):
        from sessionctx.inputs import read_input
        read_input("x", "no-such-agent")
    with pytest.raises(ValueError, match="unknown provider"):
        from sessionctx.providers.capabilities import capability
        capability("nope")
