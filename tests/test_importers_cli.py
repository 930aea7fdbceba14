"""`--from` on build, check and explain."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.inputs import FORMATS
from tests.conftest import FIXTURES

SWE = str(FIXTURES / "swe-agent" / "function_calling_simple.traj")
GEMINI = str(FIXTURES / "gemini-cli" / "tool-result-cancelled.json")


def test_formats_listed() -> None:
    assert FORMATS[:2] == ("auto", "native") and set(FORMATS[2:]) == {
        "claude-code", "codex", "pi", "gemini-cli", "openai-chat", "anthropic",
        "openai-responses", "gemini-cli-jsonl", "copilot-cli", "aider", "opencode", "goose"}


def test_build_with_a_named_format() -> None:
    outcome = CliRunner().invoke(main, ["build", "--from", "openai-chat", "--json", SWE])
    assert outcome.exit_code == 0, outcome.output
    body = json.loads(outcome.output)
    assert len(body["messages"]) == 12 and body["pending_calls"] == []


def test_explain_with_auto_detection() -> None:
    outcome = CliRunner().invoke(main, ["explain", GEMINI])
    assert outcome.exit_code == 0
    assert "run_shell_command" in outcome.output


def test_wrong_format_named_exits_2_with_one_message() -> None:
    outcome = CliRunner().invoke(main, ["check", "--from", "codex", GEMINI])
    assert outcome.exit_code == 2
    assert "holds no codex records" in outcome.output
    assert outcome.output.count("\n") == 1


def test_unknown_format_says_which_formats_were_tried(tmp_path: Path) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"hello": "world"}')
    outcome = CliRunner().invoke(main, ["check", str(odd)])
    assert outcome.exit_code == 2
    tried = "tried native, codex, pi, claude-code, gemini-cli, anthropic, openai-responses"
    assert tried in outcome.output


def test_unknown_format_name_is_a_usage_error() -> None:
    outcome = CliRunner().invoke(main, ["check", "--from", "zed", SWE])
    assert outcome.exit_code == 2 and "zed" in outcome.output
    outcome = CliRunner().invoke(main, ["check", "--from", "aider", SWE])
    assert outcome.exit_code == 2 and "not an aider file" in outcome.output


def test_importers_report_progress() -> None:
    from sessionctx.inputs import read_input
    seen: list[tuple[int, int]] = []
    path = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
    read_input(str(path), progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] == path.stat().st_size
