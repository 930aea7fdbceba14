"""The typed shapes are a contract: every key a message or block of a known kind carries, in the
fixtures' contexts and in the turns the provider step makes of them, is declared in its
TypedDict, and every key the TypedDict requires is there."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from sessionctx import messages
from sessionctx.context import build_context
from sessionctx.inputs import read_input, read_raw
from sessionctx.providers import PROVIDERS, policies
from sessionctx.providers.capabilities import capability
from sessionctx.providers.policies.turns import (
    ITEM_ID,
    RawBlock,
    ResultBlock,
    ServerItemBlock,
    TurnCall,
)
from tests.conftest import FIXTURES, assistant, recs, result, text, user
from tests.test_importers_recorded import recorded_bodies

MESSAGE_SHAPES: dict[str, Any] = {
    "user": messages.UserMessage, "system": messages.SystemMessage,
    "assistant": messages.AssistantMessage, "toolResult": messages.ResultMessage}
BLOCK_SHAPES: dict[str, Any] = {
    "text": messages.TextBlock, "image": messages.ImageBlock,
    "document": messages.DocumentBlock, "thinking": messages.ThinkingBlock,
    "toolCall": messages.CallBlock}
TURN_BLOCK_SHAPES: dict[str, Any] = {**BLOCK_SHAPES, "toolCall": TurnCall,
                                     "toolResult": ResultBlock, "raw": RawBlock,
                                     "serverItem": ServerItemBlock}

FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file()
                       and p.suffix not in (".md", ".yaml") and not p.name.startswith("LICENSE"))
# Recorded API traffic: the session is the body of the last request each recording holds.
RECORDINGS = sorted(FIXTURES.rglob("*.yaml"))


def fixture_context(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".yaml":
        body = json.dumps(recorded_bodies(path)[-1]).encode()
        return build_context(read_raw(body, path.name, "auto").records).messages
    return build_context(read_input(str(path)).records).messages

# What the fixtures lack: a redacted and a signed thinking block, a Responses call id with its
# item id, a Gemini call signature, a document; from `api` and `model`, so that a target of the
# same replays them.
def signed(api: str, model: str) -> list[dict[str, Any]]:
    return [
        user("read it", content=[text("read it"), {
            "type": "document", "mimeType": "text/plain", "text": "notes", "name": "notes.txt"}]),
        assistant({"type": "thinking", "thinking": "", "thinkingSignature": "RW5D",
                   "redacted": True},
                  {"type": "thinking", "thinking": "plan", "thinkingSignature": "c2lnbg=="},
                  {"type": "toolCall", "id": "call_1|fc_1", "name": "bash",
                   "arguments": {"cmd": "ls"}, "thoughtSignature": "dHM="},
                  api=api, provider="p", model=model),
        result("call_1|fc_1", "a b"),
        user("next")]


def problems(obj: Mapping[str, Any], shape: Any, where: str) -> Iterator[str]:
    for key in obj.keys() - shape.__annotations__.keys():
        yield f"{where}: key {key!r} is not declared in {shape.__name__}"
    for key in shape.__required_keys__ - obj.keys():
        yield f"{where}: required key {key!r} of {shape.__name__} is missing"


def message_problems(msgs: list[dict[str, Any]], label: str) -> list[str]:
    found: list[str] = []
    for i, m in enumerate(msgs):
        shape = MESSAGE_SHAPES.get(m.get("role"))  # type: ignore[arg-type]
        if shape is not None:
            found.extend(problems(m, shape, f"{label} message {i}"))
        content = m.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind in BLOCK_SHAPES:
                found.extend(problems(block, BLOCK_SHAPES[kind], f"{label} message {i} block {j}"))
    return found


def turn_problems(turns: list[policies.Turn], label: str) -> list[str]:
    found: list[str] = []

    def walk(blocks: Sequence[Mapping[str, Any]], where: str) -> None:
        for j, block in enumerate(blocks):
            shape = TURN_BLOCK_SHAPES.get(block["type"])
            if shape is None:
                found.append(f"{where} block {j}: a block of type {block['type']!r} in a turn")
                continue
            found.extend(problems(block, shape, f"{where} block {j}"))
            if block["type"] == policies.RESULT:
                walk(block["content"], f"{where} block {j} content")

    for k, turn in enumerate(turns):
        walk(turn[1], f"{label} turn {k}")
    return found


@pytest.mark.parametrize("path", FIXTURE_FILES + RECORDINGS,
                         ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_contexts_carry_only_declared_keys(path: Path) -> None:
    messages = fixture_context(path)
    assert messages
    assert message_problems(messages, path.name) == []


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@pytest.mark.parametrize("repair", [True, False])
def test_turn_blocks_carry_only_declared_keys(provider: str, repair: bool) -> None:
    cap, model = capability(provider)
    contexts = [fixture_context(p) for p in FIXTURE_FILES + RECORDINGS]
    own = build_context(recs(*signed(next(iter(cap.thinking_apis), "?"), model))).messages
    for msgs in [*contexts, own]:
        prep = policies.prepare(msgs, None, cap, model, repair=repair)
        assert turn_problems(prep.turns, provider) == []


def test_the_signed_history_exercises_every_signature_and_id_key() -> None:
    """The keys the issue named are met by the checks above, not only declared."""
    keys: set[str] = set()
    for provider in PROVIDERS:
        cap, model = capability(provider)
        for api in cap.thinking_apis:
            msgs = build_context(recs(*signed(api, model))).messages
            assert message_problems(msgs, provider) == []
            prep = policies.prepare(msgs, None, cap, model)
            keys |= {k for turn in prep.turns for b in turn[1] for k in b}
    assert {ITEM_ID, "thoughtSignature", "thinkingSignature", "redacted"} <= keys


def test_an_undeclared_key_is_found() -> None:
    msgs: list[dict[str, Any]] = [{"role": "assistant", "content": [
        {"type": "toolCall", "id": "c", "name": "n", "arguments": {}, "thoughtSig": "x"}]},
        {"role": "toolResult", "content": "ok", "isError": False, "toolName": "n"}]
    assert message_problems(msgs, "m") == [
        "m message 0 block 0: key 'thoughtSig' is not declared in CallBlock",
        "m message 1: required key 'toolCallId' of ResultMessage is missing"]
