"""The library's front door: `sessionctx.read_session` reads any agent's file as the commands
do, so the documented example gives the same context as `sessionctx build`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import sessionctx
from sessionctx.cli import main
from tests.conftest import FIXTURES

AGENT_FILES = [
    FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl",
    next((FIXTURES / "codex").glob("rollout-*.jsonl")),
    FIXTURES / "gemini-cli" / "tool-result-cancelled.json",
    FIXTURES / "pi" / "large-session.jsonl",
    FIXTURES / "openhands" / "fncall-llm-message.json",
    FIXTURES / "swe-agent" / "function_calling_simple.traj",
    FIXTURES / "anthropic" / "session.messages.json",
    Path("examples/interrupted.jsonl"),
]


@pytest.mark.parametrize("path", AGENT_FILES, ids=lambda p: p.parent.name)
def test_the_documented_read_gives_what_build_gives(path: Path) -> None:
    loaded = sessionctx.read_session(str(path))
    assert not loaded.fatal and loaded.records
    records, _ = sessionctx.select_branch(loaded.records)
    ctx = sessionctx.build_context(records)
    assert ctx.messages
    built = CliRunner().invoke(main, ["build", str(path), "--json"])
    assert built.exit_code == 0, built.output
    assert json.loads(built.stdout)["messages"] == json.loads(json.dumps(ctx.messages))


def test_a_format_can_be_named_and_a_bad_file_is_a_result_not_an_exception(
        tmp_path: Path) -> None:
    claude = AGENT_FILES[0]
    named = sessionctx.read_session(str(claude), "claude-code")
    assert named.format == "claude-code" and named.records
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01 not a session")
    result = sessionctx.read_session(str(junk))
    assert result.fatal and "no known format" in str(result.problems[0])
    with pytest.raises(sessionctx.SessionctxError):
        sessionctx.read_session(str(claude), "no-such-format")
