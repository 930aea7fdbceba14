"""One verdict everywhere: `check --provider P` exits 0 exactly when the body `build --provider
P` sends with the same options passes P's validator; what is broken as stored is listed under
the verdict, at file lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.providers import PROVIDERS, validate
from tests.conftest import FIXTURES

SESSIONS = sorted(p for p in FIXTURES.rglob("*.*")
                  if p.suffix in (".json", ".jsonl", ".traj") and p.is_file())
OPTIONS = [(), ("--placeholder-tools",), ("--tools-as-text", "--thinking-as-text")]


def _body_passes(path: Path, provider: str, options: tuple[str, ...]) -> bool:
    built = CliRunner().invoke(main, ["build", str(path), "--provider", provider, "--quiet",
                                      *options])
    if built.exit_code != 0:
        return False
    return validate(json.loads(built.stdout), provider) == []


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: f"{p.parent.name}/{p.name[:24]}")
def test_check_exits_on_what_build_sends(path: Path, provider: str) -> None:
    for options in OPTIONS:
        checked = CliRunner().invoke(main, ["check", str(path), "--provider", provider,
                                            *options])
        assert checked.exit_code in (0, 1), checked.output
        assert (checked.exit_code == 0) == _body_passes(path, provider, options), \
            (options, checked.output)


def test_the_fixtures_are_there() -> None:
    formats = {p.parent.name for p in SESSIONS}
    assert {"claude-code", "gemini-cli", "codex", "pi", "openhands", "swe-agent"} <= formats


@pytest.mark.parametrize("name", ["claude-code/06381696-0074-49f8-863e-6ad4fac507f9.jsonl",
                                  "gemini-cli/tool-result-cancelled.json"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_healthy_agent_file_is_ready(name: str, provider: str) -> None:
    checked = CliRunner().invoke(main, ["check", str(FIXTURES / name), "--provider", provider,
                                        "--placeholder-tools"])
    assert checked.exit_code == 0, checked.output
    assert f"ready to send to {provider}" in checked.stdout


def test_what_is_broken_as_stored_is_listed_at_file_lines(tmp_path: Path) -> None:
    path = Path("examples/interrupted.jsonl").resolve()
    checked = CliRunner().invoke(main, ["check", str(path), "--provider", "anthropic",
                                        "--placeholder-tools", "--json"])
    assert checked.exit_code == 0, checked.output
    data = json.loads(checked.stdout)
    assert data["ok"] is True and data["problems"] == []
    kinds = {p["kind"] for p in data["as_stored"]}
    assert {"dropped_unpaired_call", "anthropic: as stored"} <= kinds
    lines = len(path.read_text().splitlines())
    for problem in data["as_stored"]:
        assert 1 <= problem["record"]["line"] <= lines, problem
    text = CliRunner().invoke(main, ["check", str(path), "--provider", "anthropic",
                                     "--placeholder-tools"]).stdout
    assert "ready to send to anthropic" in text
    assert "messages[" not in text
    assert "next: `sessionctx repair" in text and "--dry-run`" in text


def test_a_body_that_cannot_be_built_names_the_ways_out() -> None:
    name = "claude-code/06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
    checked = CliRunner().invoke(main, ["check", str(FIXTURES / name), "--provider",
                                        "anthropic"])
    assert checked.exit_code == 1
    assert "the body built for anthropic (claude-opus-4-8) breaks 1 rule" in checked.stdout
    assert "--tools FILE (the agent's definitions), --tools-as-text or --placeholder-tools" \
        in checked.stdout
    assert "as stored (2 problems):" in checked.stdout  # not "worked around": it is not


def test_build_says_what_it_changed_and_the_pending_calls_unless_quiet() -> None:
    args = ["build", "examples/interrupted.jsonl", "--provider", "anthropic",
            "--tools", "examples/tools.json"]
    loud = CliRunner().invoke(main, args)
    assert loud.exit_code == 0, loud.output
    assert "changes (`sessionctx explain` says why)" in loud.stderr
    assert "1 pending call with no result" in loud.stderr and "patch-1" in loud.stderr
    json.loads(loud.stdout)  # the body alone on stdout
    quiet = CliRunner().invoke(main, [*args, "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == loud.stdout
