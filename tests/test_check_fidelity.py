"""`check` says what reaches the model: never "ready" for nothing, and in which format it read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.context import build_context
from sessionctx.inputs import read_input
from sessionctx.providers import PROVIDERS, build_request, validate
from tests.conftest import FIXTURES

CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))


def _only_context_rows(tmp_path: Path) -> Path:
    """The real rollout's non-model lines only: a source that holds records but no message."""
    kept = [line for line in CODEX.read_text().splitlines()
            if json.loads(line)["type"] in ("session_meta", "turn_context", "event_msg")]
    path = tmp_path / "rollout-context-only.jsonl"
    path.write_text("\n".join(kept) + "\n")
    return path


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_validator_reports_an_empty_request(provider: str) -> None:
    ctx = build_context([])
    body = build_request(ctx, provider).body
    violations = validate(body, provider)
    assert violations and "at least one message is required" in violations[0].message


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_real_request_has_no_empty_violation(provider: str) -> None:
    ctx = build_context(read_input(str(FIXTURES / "swe-agent" /
                                       "function_calling_simple.traj")).records)
    body = build_request(ctx, provider).body
    assert not [v for v in validate(body, provider) if "at least one message" in v.message]


def test_check_names_a_source_that_gives_the_model_nothing(tmp_path: Path) -> None:
    path = _only_context_rows(tmp_path)
    outcome = CliRunner().invoke(main, ["check", str(path)])
    assert outcome.exit_code == 1
    assert "nothing would reach the model" in outcome.output
    report = json.loads(CliRunner().invoke(main, ["check", str(path), "--json"]).output)
    assert report["ok"] is False and report["format"] == "codex"
    kinds = [p["kind"] for p in report["problems"]]
    assert kinds == ["nothing_sent"]
    records = len(path.read_text().splitlines())
    assert f"none of the {records} record(s)" in report["problems"][0]["message"]


def test_check_with_a_provider_names_the_empty_body(tmp_path: Path) -> None:
    path = _only_context_rows(tmp_path)
    outcome = CliRunner().invoke(main, ["check", str(path), "--provider", "anthropic",
                                        "--json"])
    assert outcome.exit_code == 1
    report = json.loads(outcome.output)
    assert any(p["kind"] == "anthropic: built body" and "at least one message" in p["message"]
               for p in report["problems"])


@pytest.mark.parametrize(("path", "fmt"), [
    (FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl", "claude-code"),
    (CODEX, "codex"),
    (FIXTURES / "pi" / "large-session.jsonl", "pi"),
    (FIXTURES / "gemini-cli" / "tool-result-cancelled.json", "gemini-cli"),
    (FIXTURES / "openhands" / "fncall-llm-message.json", "openai-chat"),
], ids=lambda v: v if isinstance(v, str) else v.name)
def test_check_json_and_explain_name_the_format_read(path: Path, fmt: str) -> None:
    report = json.loads(CliRunner().invoke(main, ["check", str(path), "--json"]).output)
    assert report["format"] == fmt
    explained = CliRunner().invoke(main, ["explain", str(path)]).output
    assert explained.splitlines()[0] == f"{path}: read as {fmt}"


def test_a_native_file_reads_as_native() -> None:
    report = json.loads(CliRunner().invoke(
        main, ["check", "examples/interrupted.jsonl", "--json"]).output)
    assert report["format"] == "native"
