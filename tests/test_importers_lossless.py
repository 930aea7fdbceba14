"""Nothing silently lost: every text of the source is in the imported records, or reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionctx.inputs import read_input, read_raw
from sessionctx.records import CHECKPOINT, CONTEXT, MESSAGE, Record
from tests.conftest import FIXTURES


def _strings(value: Any, key: str = "text") -> list[str]:
    """Every string under `key` anywhere in a JSON value."""
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key and isinstance(v, str):
                out.append(v)
            else:
                out.extend(_strings(v, key))
    elif isinstance(value, list):
        for v in value:
            out.extend(_strings(v, key))
    return out


def _model_texts(records: list[Record]) -> set[str]:
    texts: set[str] = set()
    for r in records:
        if r.kind == MESSAGE:
            content = r.view.get("content")
            texts.update([content] if isinstance(content, str) else _strings(content))
        elif r.kind == CHECKPOINT:
            texts.update(_strings(r.view["messages"]))
    return texts


def _source_texts(path: Path) -> list[str]:
    text = path.read_text()
    if path.suffix == ".jsonl":
        objs: list[Any] = [json.loads(x) for x in text.splitlines() if x.strip()]
    else:
        objs = [json.loads(text)]
    out: list[str] = []
    for o in objs:
        if o.get("type") in ("user", "assistant") and "message" in o:  # Claude Code
            content = o["message"]["content"]
            out += [content] if isinstance(content, str) else _strings(content)
            out += [b["content"] for b in content if isinstance(content, list)
                    and b.get("type") == "tool_result" and isinstance(b.get("content"), str)]
        elif o.get("type") == "response_item":  # Codex
            p = o["payload"]
            out += _strings(p.get("content"))
            if isinstance(p.get("output"), str):
                out.append(p["output"])
    return out


@pytest.mark.parametrize("path", sorted((FIXTURES / "claude-code").glob("*.jsonl"))
                         + sorted((FIXTURES / "codex").glob("*.jsonl")), ids=lambda p: p.name)
def test_every_source_text_reaches_the_records(path: Path) -> None:
    result = read_input(str(path))
    texts = _model_texts(result.records)
    missing = [t for t in _source_texts(path) if t not in texts]
    # a system or developer message of several parts is one system text: each part is in it
    systems = [r.view["content"] for r in result.records if r.kind == MESSAGE
               and r.view.get("role") == "system" and isinstance(r.view.get("content"), str)]
    assert not [t for t in missing if not any(t in s for s in systems)]


def test_openai_chat_texts_are_kept() -> None:
    for path in (FIXTURES / "openhands" / "fncall-llm-message.json",
                 FIXTURES / "swe-agent" / "function_calling_simple.traj"):
        doc = json.loads(path.read_text())
        items = doc["history"] if isinstance(doc, dict) else doc
        texts = _model_texts(read_input(str(path)).records)
        assert all(m["content"] in texts for m in items if isinstance(m["content"], str)
                   and m["content"])


def test_claude_fork_keeps_the_abandoned_branch_as_context_rows() -> None:
    path = FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
    objs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    users = [o for o in objs if o.get("type") == "user" and isinstance(
        o["message"]["content"], str)]
    fork = {**users[-1], "uuid": "fork-1", "message": {"role": "user", "content": "redo"}}
    raw = b"".join(json.dumps(o).encode() + b"\n" for o in [*objs, fork])
    result = read_raw(raw, "fork.jsonl")
    rows = [r for r in result.records if r.kind == CONTEXT]
    abandoned = [r for r in rows if r.data["note"] == "entry off the active chain"]
    assert abandoned and all(isinstance(r.data["raw"], dict) for r in abandoned)
    model = [r.view for r in result.records if r.kind == MESSAGE]
    assert model[-1]["content"][0]["text"] == "redo"
    start = objs.index(users[-1])  # the fork replaces this entry and everything after it
    assert {r.data["raw"]["uuid"] for r in abandoned} == {
        o["uuid"] for o in objs[start:] if o.get("type") in ("user", "assistant")}
