"""The CLI's --provider options on build and check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.providers import PROVIDERS, validate
from tests.conftest import assistant, call, result, text, user


def session(tmp_path: Path, *messages: dict[str, Any]) -> str:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return str(path)


BROKEN = (user("go"), assistant(call("fs.read:1"), text("  ")), user("between"),
          result("fs.read:1"))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_build_prints_the_body(tmp_path: Path, provider: str) -> None:
    out = CliRunner().invoke(main, ["build", session(tmp_path, *BROKEN), "--provider", provider,
                                    "--system", "be brief"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    assert validate(body, provider) == []
    assert "be brief" in out.output


def test_build_json_has_request_changes_and_pending(tmp_path: Path) -> None:
    path = session(tmp_path, *BROKEN, assistant(call("late")))
    out = CliRunner().invoke(main, ["build", path, "--provider", "anthropic", "--model",
                                    "claude-sonnet-4-5", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert set(data) == {"request", "changes", "pending_calls"}
    kinds = {c["kind"] for c in data["changes"]}
    assert {"tool_id_rewritten", "tool_results_moved", "dropped_unpaired_call"} <= kinds
    assert [p["id"] for p in data["pending_calls"]] == ["late"]


def test_build_provider_rejects_display_view(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["build", session(tmp_path, user("x")), "--provider",
                                    "gemini", "--view", "display"])
    assert out.exit_code == 2


def test_check_lists_what_the_stored_history_would_trigger(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["check", session(tmp_path, *BROKEN), "--provider",
                                    "anthropic", "--json"])
    assert out.exit_code == 1
    data = json.loads(out.output)
    report = data["provider"]
    assert report["violations"] == []
    messages = " ".join(v["message"] for v in report["as_stored"])
    assert "should match pattern" in messages and "tool_result" in messages
    text_out = CliRunner().invoke(main, ["check", session(tmp_path, *BROKEN), "--provider",
                                         "anthropic"])
    assert "anthropic: as stored" in text_out.output


def test_check_clean_history_is_ready(tmp_path: Path) -> None:
    path = session(tmp_path, user("go"), assistant(call("c1")), result("c1"),
                   assistant(text("done")), user("thanks"))
    out = CliRunner().invoke(main, ["check", path, "--provider", "bedrock"])
    assert out.exit_code == 0, out.output
