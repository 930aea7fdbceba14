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
                                    "--system", "be brief", "--placeholder-tools"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    assert validate(body, provider) == []
    assert "be brief" in out.output


def test_build_json_has_request_changes_and_pending(tmp_path: Path) -> None:
    path = session(tmp_path, *BROKEN, assistant(call("late")))
    out = CliRunner().invoke(main, ["build", path, "--provider", "anthropic", "--model",
                                    "claude-sonnet-4-5", "--json", "--placeholder-tools"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
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
                                    "anthropic", "--json", "--placeholder-tools"])
    assert out.exit_code == 0  # the body build sends is fine
    data = json.loads(out.stdout)
    report = data["provider"]
    assert report["violations"] == [] and data["problems"] == []
    messages = " ".join(v["message"] for v in report["as_stored"])
    assert "should match pattern" in messages and "tool_result" in messages
    assert all(v["record"]["line"] >= 1 for v in report["as_stored"])
    text_out = CliRunner().invoke(main, ["check", session(tmp_path, *BROKEN), "--provider",
                                         "anthropic", "--placeholder-tools"])
    assert "anthropic: as stored" in text_out.output


def test_check_clean_history_is_ready(tmp_path: Path) -> None:
    path = session(tmp_path, user("go"), assistant(call("c1")), result("c1"),
                   assistant(text("done")), user("thanks"))
    out = CliRunner().invoke(main, ["check", path, "--provider", "bedrock",
                                    "--placeholder-tools"])
    assert out.exit_code == 0, out.output


TOOLS = {"tools": [{"name": "bash", "description": "Run a command",
                    "inputSchema": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
                   {"name": "web_search", "type": "web_search_20250305"}]}
CLEAN = (user("go"), assistant(call("c1")), result("c1"), assistant(call("c2", "grep")),
         result("c2", name="grep"), assistant(text("done")), user("thanks"))


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_build_without_definitions_names_the_rule_and_the_ways_out(tmp_path: Path,
                                                                   provider: str) -> None:
    # prevents "Requests which include tool_use or tool_result blocks must define tools." and
    # "The toolConfig field must be defined when using toolUse and toolResult content blocks"
    path = session(tmp_path, *CLEAN)
    out = CliRunner().invoke(main, ["build", path, "--provider", provider])
    assert out.exit_code == 2
    assert f"this history holds tool blocks; {provider} requires tool definitions" in out.output
    for way in ("--tools FILE", "--tools-as-text", "--placeholder-tools"):
        assert way in out.output
    checked = CliRunner().invoke(main, ["check", path, "--provider", provider, "--json"])
    assert checked.exit_code == 1
    report = json.loads(checked.stdout)["provider"]
    assert any("requires tool definitions" in v["message"] for v in report["violations"])
    as_text = CliRunner().invoke(main, ["build", path, "--provider", provider,
                                        "--tools-as-text"])
    assert as_text.exit_code == 0, as_text.output
    assert validate(json.loads(as_text.stdout), provider) == []
    assert "[called tool bash (call c1)" in as_text.output


def test_tools_file_is_sent_and_an_undefined_call_reported(tmp_path: Path) -> None:
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(TOOLS))
    path = session(tmp_path, *CLEAN)
    out = CliRunner().invoke(main, ["build", path, "--provider", "anthropic", "--tools",
                                    str(tools_file), "--tool-choice", "bash", "--json"])
    assert out.exit_code == 0, out.output
    assert "web_search_20250305" in out.output and "provider's own tool" in out.output
    assert "1 call to tool 'grep', which the definitions do not name (line 4)" in out.stderr
    data = json.loads(out.stdout)
    assert data["request"]["tools"][0]["name"] == "bash"
    assert data["request"]["tool_choice"] == {"type": "tool", "name": "bash"}
    assert [u["name"] for u in data["undefined_tools"]] == ["grep"]
    assert validate(data["request"], "anthropic") == []
    checked = CliRunner().invoke(main, ["check", path, "--provider", "gemini", "--tools",
                                        str(tools_file)])
    assert checked.exit_code == 0  # Gemini takes a call to a tool it is not given
    assert "to tool 'grep', which the definitions do not name" in checked.stderr


def test_tool_options_are_checked(tmp_path: Path) -> None:
    path = session(tmp_path, *CLEAN)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    cases = [(["--provider", "anthropic", "--tools", str(bad)], "not JSON"),
             (["--provider", "anthropic", "--tools", str(tmp_path / "none.json")],
              "cannot read tool definitions"),
             (["--tools-as-text"], "go with --provider"),
             (["--provider", "bedrock", "--placeholder-tools", "--tool-choice", "none"],
              "not 'none'"),
             (["--provider", "openai-chat", "--tool-choice", "auto"],
              "needs tool definitions"),
             (["--provider", "gemini", "--tools-as-text", "--placeholder-tools"],
              "takes no --tools")]
    for args, message in cases:
        out = CliRunner().invoke(main, ["build", path, *args])
        assert out.exit_code == 2, (args, out.output)
        assert message in out.output, (args, out.output)
        assert "Traceback" not in out.output


def test_the_bundled_example_builds_with_its_tool_definitions() -> None:
    # what `make example` runs
    root = Path(__file__).resolve().parents[1]
    out = CliRunner().invoke(main, ["build", str(root / "examples" / "interrupted.jsonl"),
                                    "--provider", "anthropic", "--tools",
                                    str(root / "examples" / "tools.json")])
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    assert [t["name"] for t in body["tools"]] == ["bash", "edit"]
    assert validate(body, "anthropic") == []


def test_thinking_and_prefill_options(tmp_path: Path) -> None:
    path = session(tmp_path, user("list the states"))
    out = CliRunner().invoke(main, ["build", path, "--provider", "anthropic", "--model",
                                    "claude-sonnet-4-5", "--prefill", "[", "--thinking", "off"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["messages"][-1] == {
        "role": "assistant", "content": [{"type": "text", "text": "["}]}
    refused = CliRunner().invoke(main, ["build", path, "--provider", "anthropic", "--prefill",
                                        "["])
    assert refused.exit_code == 2
    assert "does not support assistant message prefill" in refused.output
    elsewhere = CliRunner().invoke(main, ["build", path, "--provider", "gemini", "--thinking",
                                          "on"])
    assert elsewhere.exit_code == 2 and "applies to Anthropic" in elsewhere.output
    loop = session(tmp_path, user("go"), assistant(call("c1")), result("c1"))
    checked = CliRunner().invoke(main, ["check", loop, "--provider", "anthropic",
                                        "--placeholder-tools", "--thinking", "on", "--json"])
    data = json.loads(checked.stdout)
    assert data["provider"]["violations"] == []
    assert "tool_loop_as_text" in {c["kind"] for c in data["provider"]["changes"]}
