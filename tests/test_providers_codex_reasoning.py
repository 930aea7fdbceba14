"""Codex reasoning goes back to the model that wrote it as Codex sends it: by its content."""

from __future__ import annotations

import json

from sessionctx.changes import ChangeKind
from sessionctx.context import build_context
from sessionctx.inputs import read_input
from sessionctx.providers import build_request, validate
from tests.conftest import FIXTURES

CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))


def _stored_reasoning() -> list[dict[str, object]]:
    lines = [json.loads(x) for x in CODEX.read_text().splitlines()]
    return [o["payload"] for o in lines
            if o["type"] == "response_item" and o["payload"]["type"] == "reasoning"]


def test_the_same_model_gets_every_reasoning_item_with_its_encrypted_content() -> None:
    stored = _stored_reasoning()
    assert stored and all("id" not in r and r["encrypted_content"] for r in stored)
    ctx = build_context(read_input(str(CODEX)).records)
    req = build_request(ctx, "openai-responses", "gpt-5-codex")
    sent = [i for i in req.body["input"] if i["type"] == "reasoning"]
    assert [i["encrypted_content"] for i in sent] == [r["encrypted_content"] for r in stored]
    assert all("id" not in i for i in sent)
    assert req.body["store"] is False
    assert req.body["include"] == ["reasoning.encrypted_content"]
    assert ChangeKind.THINKING_DROPPED not in [c.kind for c in req.changes]
    assert validate(req.body, "openai-responses", "gpt-5-codex") == []


def test_another_model_drops_it_and_says_why() -> None:
    ctx = build_context(read_input(str(CODEX)).records)
    req = build_request(ctx, "openai-responses", "gpt-5")
    assert not [i for i in req.body["input"] if i["type"] == "reasoning"]
    assert "store" not in req.body
    dropped = [c for c in req.changes if c.kind == ChangeKind.THINKING_DROPPED]
    assert dropped and all(
        "goes back only to the API and model that produced it" in c.reason for c in dropped)
    assert validate(req.body, "openai-responses", "gpt-5") == []


def test_an_item_with_nothing_to_replay_it_by_says_so() -> None:
    ctx = build_context(read_input(str(CODEX)).records)
    first = next(m for m in ctx.messages if m["role"] == "assistant")
    block = next(b for b in first["content"] if b["type"] == "thinking")
    item = json.loads(block["thinkingSignature"])
    del item["encrypted_content"]
    block["thinkingSignature"] = json.dumps(item)
    req = build_request(ctx, "openai-responses", "gpt-5-codex")
    reasons = [c.reason for c in req.changes if c.kind == ChangeKind.THINKING_DROPPED]
    assert reasons == ["reasoning from openai-responses/gpt-5-codex cannot be replayed to "
                       "openai-responses/gpt-5-codex: its reasoning item has neither an id nor "
                       "encrypted_content"]
