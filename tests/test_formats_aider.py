"""aider's .aider.chat.history.md: split as aider splits it, checked, built for every
provider, reported, imported; repair says there is nothing to repair. The fixture is three
whole runs of aider's own chat history; counts are worked out here from the lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.context import build_context
from sessionctx.formats.detect import detect
from sessionctx.inputs import read_input
from sessionctx.writeback import plan_repair
from tests.conftest import FIXTURES
from tests.format_counts import accepted_bodies

HISTORY = FIXTURES / "aider" / "chat-history.md"


def runs(text: str) -> list[tuple[str, str]]:
    """(role, text) of each run of lines: `#### ` user, `> ` tool, other assistant lines;
    `# ` lines skipped where they stand; runs with nothing but blank lines dropped."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# "):
            continue
        role = "user" if line.startswith("#### ") else "tool" if line.startswith(
            "> ") or line == ">" else "assistant"
        if not out or out[-1][0] != role:
            out.append((role, []))
        out[-1][1].append(line)
    return [(role, "\n".join(lines)) for role, lines in out if "".join(lines).strip()]


def raw_counts(text: str) -> dict[str, int]:
    found = runs(text)
    switches = sum(1 for role, body in found if role == "user" and body.startswith(
        "#### /model ") and "\n" not in body)
    return {"user": sum(r != "assistant" for r, _ in found) - switches,
            "assistant": sum(r == "assistant" for r, _ in found), "switches": switches,
            "headers": text.count("\n# aider chat started at ") + text.startswith(
                "# aider chat started at ")}


def test_the_history_reads_as_aider_splits_it() -> None:
    text = HISTORY.read_text()
    want = raw_counts(text)
    assert want == {"user": 19, "assistant": 3, "switches": 3, "headers": 2}
    result = read_input(str(HISTORY))
    assert result.format == "aider" and result.problems == []
    ctx = build_context(result.records)
    roles = [m["role"] for m in ctx.messages]
    assert {"user": roles.count("user"), "assistant": roles.count("assistant"),
            "switches": sum(r.data.get("note") == "a model switch" for r in result.records),
            "headers": sum(r.data.get("note") == "aider's run header"
                           for r in result.records)} == want
    assert ctx.pending_calls == [] and all(
        b["type"] == "text" for m in ctx.messages for b in m["content"])


def test_a_model_switch_sets_the_model_of_the_replies_after_it() -> None:
    ctx = build_context(read_input(str(HISTORY)).records)
    replies = [m for m in ctx.messages if m["role"] == "assistant"]
    assert {m["model"] for m in replies} == {"gpt-4o"}
    first = next(m for m in ctx.messages if m["role"] == "user")
    assert "  \n" not in first["content"][0]["text"]  # aider's markdown line breaks go
    interrupted = [m for m in ctx.messages if "^C again to exit" in m["content"][0]["text"]]
    assert len(interrupted) == HISTORY.read_text().count("^C again to exit")
    assert all(m["role"] == "user" for m in interrupted)


def test_detected_and_named() -> None:
    assert detect(HISTORY.read_bytes()) == "aider"
    out = CliRunner().invoke(main, ["check", "--from", "aider", "--json", str(HISTORY)])
    assert out.exit_code == 0 and json.loads(out.output)["format"] == "aider"
    begins_with_a_user_line = b"#### hello  \n\nHi! How can I help?\n\n"
    assert detect(begins_with_a_user_line) == "aider"


def test_every_provider_takes_the_body() -> None:
    ctx = build_context(read_input(str(HISTORY)).records)
    accepted_bodies(ctx)


def test_repair_says_there_is_nothing_to_repair(tmp_path: Path) -> None:
    plan = plan_repair(HISTORY.read_bytes(), str(HISTORY))
    assert plan.after == plan.before and plan.fixes == [] and "no tool calls" in plan.note
    copy = tmp_path / ".aider.chat.history.md"
    copy.write_bytes(HISTORY.read_bytes())
    out = CliRunner().invoke(main, ["repair", str(copy)])
    assert out.exit_code == 0 and "holds no tool calls: nothing to repair" in out.output
    assert copy.read_bytes() == HISTORY.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == [".aider.chat.history.md"]  # no backup


def test_report_and_import(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    out = CliRunner().invoke(main, ["report", str(HISTORY), "-o", str(page)])
    assert out.exit_code == 0, out.output
    assert "cache_missing" in page.read_text()
    url = f"sqlite:///{tmp_path}/s.db"
    assert CliRunner().invoke(main, ["import", str(HISTORY), "--session", "a",
                                     "--store", url]).exit_code == 0
    built = CliRunner().invoke(main, ["build", "--store", url, "--session", "a", "--json"])
    direct = CliRunner().invoke(main, ["build", str(HISTORY), "--json"])
    mine: dict[str, Any] = json.loads(built.output)
    assert mine["messages"] == json.loads(direct.output)["messages"]
