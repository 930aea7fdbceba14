"""The agents' own readers load the repaired files: pi with its session loader and
`buildSessionContext`, Claude Code transcripts with the Claude Agent SDK's `getSessionMessages`
(both the published npm packages, run in Node). Each is first shown the broken file, to see
that the check below would catch the fault the repair removes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.inputs import read_input
from sessionctx.records import select_branch
from tests import node_readers
from tests.repair_helpers import assert_repaired
from tests.test_repair_formats import CLAUDE, PI, claude_variants, pi_tree


def unanswered_pi(messages: list[dict[str, Any]]) -> list[str]:
    """The toolCall ids of pi's context with no toolResult after them."""
    open_calls: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            open_calls += [b["id"] for b in message.get("content", [])
                           if b.get("type") == "toolCall"]
        elif message.get("role") == "toolResult" and message["toolCallId"] in open_calls:
            open_calls.remove(message["toolCallId"])
    return open_calls


def sessionctx_messages(path: Path) -> list[dict[str, Any]]:
    records, _ = select_branch(read_input(str(path), "pi").records)
    return build_context(records).messages


@pytest.mark.parametrize("case", ["tree", "real"])
@pytest.mark.parametrize("note", [False, True])
def test_pi_loads_the_repaired_session_with_its_own_code(tmp_path: Path, fixtures: Path,
                                                         case: str, note: bool) -> None:
    original = pi_tree() if case == "tree" else (fixtures / PI).read_bytes()
    path = tmp_path / "session.jsonl"
    path.write_bytes(original)
    before = node_readers.read("pi", str(path))["messages"]
    assert unanswered_pi(before), "the broken session should hold an unanswered call"
    report = assert_repaired(path, original, "pi", *(["--note-unpaired"] if note else []))
    after = node_readers.read("pi", str(path))["messages"]
    assert unanswered_pi(after) == []
    assert after == sessionctx_messages(path)
    notes = [m for m in after if "outcome is unknown" in json.dumps(m)]
    assert len(notes) == (sum(c["kind"] == "interrupted_note_added"
                              for c in report["changes"]) if note else 0)
    assert all(m["role"] == "user" for m in notes)


def unanswered_claude(messages: list[dict[str, Any]]) -> list[str]:
    """tool_use ids with no tool_result in a later user message of the SDK's chain, and the
    tool_results that answer no earlier tool_use."""
    open_calls: list[str] = []
    orphans: list[str] = []
    for entry in messages:
        content = entry["message"].get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                open_calls.append(block["id"])
            elif block.get("type") == "tool_result":
                if entry["type"] == "user" and block["tool_use_id"] in open_calls:
                    open_calls.remove(block["tool_use_id"])
                else:
                    orphans.append(block["tool_use_id"])
    return open_calls + orphans


def _sdk_messages(config: Path, path: Path) -> list[dict[str, Any]]:
    project = config / "projects" / "-work-project"
    project.mkdir(parents=True, exist_ok=True)
    session = json.loads(path.read_bytes().splitlines()[1])["sessionId"]
    shutil.copyfile(path, project / f"{session}.jsonl")
    out = node_readers.read("claude", session, "/work/project",
                            env={"CLAUDE_CONFIG_DIR": str(config)})
    messages: list[dict[str, Any]] = out["messages"]
    return messages


@pytest.mark.parametrize("case", ["as stored", "unanswered in the middle", "orphan result",
                                  "torn last line"])
def test_claude_agent_sdk_reads_the_repaired_transcript(tmp_path: Path, fixtures: Path,
                                                        case: str) -> None:
    original = claude_variants(fixtures)[case]
    path = tmp_path / "session.jsonl"
    path.write_bytes(original)
    before = _sdk_messages(tmp_path / "before", path)
    assert unanswered_claude(before)
    assert_repaired(path, original, "claude-code")
    after = _sdk_messages(tmp_path / "after", path)
    assert unanswered_claude(after) == []
    assert [m["uuid"] for m in after][:3] == [m["uuid"] for m in before][:3]
    assert len(after) >= len(before) - 2  # the lines taken out, nothing more lost
    assert CLAUDE.split("/")[1].split(".")[0] == after[0]["session_id"]
