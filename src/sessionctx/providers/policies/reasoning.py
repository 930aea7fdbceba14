"""Reasoning replay (docs/provider-rules.md §1.4, §3, §4, §5): thinking, Responses reasoning items
and thought signatures go back only to the API and model that produced them, first in their turn.

The reader drops the reasoning of another API or model as it reads; what is left is decided
once a turn's calls are known: leading reasoning with a signature the provider takes is
replayed, other reasoning is dropped or, by option, sent as plain text, and item ids on calls
stand or fall with it.

A Responses turn going back to the model that wrote it goes back as its own items, in their
order: server-run items (web search, MCP, code interpreter, ...) as they were stored, not as
text. The API asks only that a reasoning item be followed by the item it produced, so there
reasoning may stand anywhere in its turn, as long as what follows it goes back as itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sessionctx import decoding
from sessionctx.changes import ChangeKind
from sessionctx.messages import RESPONSES_ITEM, Message, StoredBlock, TextBlock, ThinkingBlock
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.turns import (
    ITEM_ID,
    Block,
    Prepared,
    ServerItemBlock,
    Turn,
    dropped,
    string,
)

_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*")


def own_reasoning(api: str | None, model: str | None, cap: Capability, target: str) -> bool:
    """Whether a message's reasoning, item ids and signatures may go back to `target`."""
    return api in cap.thinking_apis and model == target


THINKING_DROPPED = ChangeKind.THINKING_DROPPED
FOREIGN = "reasoning goes back only to the API and model that produced it"
NOT_FIRST = "it would not come first in its turn"
AFTER_TEXT = ("the server-run item that followed it goes as text (an approval request, or an "
              "item without its id), not as itself")

# The server-run items the Responses API takes back as input items (the SDK's input item
# types; each needs its id). An MCP approval request stays text: its answer is a user's item.
SERVER_ITEM_TYPES = frozenset({"web_search_call", "file_search_call", "code_interpreter_call",
                               "image_generation_call", "mcp_call", "mcp_list_tools"})


def own_items(api: str | None, model: str | None, cap: Capability, target: str) -> bool:
    """Whether a Responses turn goes back to `target` as its own items: to the model that
    wrote it, as its reasoning does."""
    return cap.own_items and own_reasoning(api, model, cap, target)


def server_item(block: Block) -> dict[str, Any] | None:
    """The Responses item a server-run call's text block stands for, when it can go back as
    that item (a kind the API takes as input, with its id); None otherwise."""
    item = block.get(RESPONSES_ITEM) if block["type"] == "text" else None
    if isinstance(item, dict) and item.get("type") in SERVER_ITEM_TYPES and \
            isinstance(item.get("id"), str):
        return item
    return None


def stays_text(block: Block | None) -> bool:
    """A server-run call's text block that cannot go back as its item."""
    return block is not None and RESPONSES_ITEM in block and server_item(block) is None


def log_thinking(prep: Prepared, index: int | None, api: str | None, model: str | None,
                 cap: Capability, target: str, dropped: int, converted: int,
                 why: str = FOREIGN) -> None:
    if dropped:
        prep.log_one((THINKING_DROPPED, f"reasoning from {api or '?'}/{model or '?'} cannot "
                      f"be replayed to {cap.provider}/{target}: {why}", index, None,
                      {"count": dropped}))
    if converted:
        prep.log(ChangeKind.THINKING_AS_TEXT,
                 "reasoning from another model was turned into plain text",
                 index, count=converted)


def log_item_removed(prep: Prepared, index: int | None, item_id: str,
                     block: Block | StoredBlock | None = None) -> None:
    prep.log(ChangeKind.REASONING_ID_REMOVED,
             "a function_call item id needs its reasoning item, which is "
             "not replayed; call_id still pairs the result", index, block=block, id=item_id)


def canonical_thinking(block: StoredBlock) -> ThinkingBlock:
    """A stored thinking block with its text, its signature (under either stored key) and
    whether it is redacted."""
    return {"type": "thinking", "thinking": string(block.get("thinking")) or "",
            "thinkingSignature": string(block.get("thinkingSignature", block.get("signature"))),
            "redacted": bool(block.get("redacted"))}


def thinking_text(block: StoredBlock) -> TextBlock | None:
    """Stored reasoning that cannot be replayed, as plain text; None when it has no text."""
    text = block.get("thinking")
    if isinstance(text, str) and text.strip():
        return {"type": "text", "text": text}
    return None


def not_replayable(block: ThinkingBlock, api: str | None, model: str | None, cap: Capability,
                   target: str) -> str | None:
    """Why this reasoning cannot go back to `target`, or None when it can: only to the API and
    model that produced it, with a signature the provider takes."""
    signature = block.get("thinkingSignature")
    if not own_reasoning(api, model, cap, target):
        return FOREIGN
    if not signature:
        return "it carries no signature to replay it with"
    if not signature_fits(signature, cap):
        return "its signature is not valid base64"
    if cap.own_items and reasoning_item(signature) is None:
        return "its reasoning item has neither an id nor encrypted_content"
    return None


def signature_fits(signature: str, cap: Capability) -> bool:
    """A signature the provider can take: where signatures are bytes (Gemini), base64 in the
    standard or URL-safe alphabet, with or without padding; a corrupted one is rejected."""
    if not cap.base64_signatures:
        return True
    body = signature.rstrip("=")
    padding = len(signature) - len(body)
    return bool(_BASE64.fullmatch(body)) and len(body) % 4 != 1 and padding <= 2 and \
        (padding == 0 or len(signature) % 4 == 0)


def reasoning_item(signature: str) -> dict[str, Any] | None:
    try:
        item = decoding.parse_text(signature)
    except decoding.Malformed:
        return None
    if isinstance(item, dict) and item.get("type") == "reasoning" and (
            isinstance(item.get("id"), str) or isinstance(item.get("encrypted_content"), str)):
        return item  # an item without an id (Codex writes none) goes back by its content
    return None


@dataclass(slots=True)
class Replay:
    """Decides the reasoning of turns the reader noted: `bound` are the indices of messages
    with item ids or call signatures; `items`: whether a Responses turn may go back to its
    model as its own items (not when its calls are sent as text)."""

    prep: Prepared
    messages: list[Message]
    cap: Capability
    model: str
    as_text: bool
    bound: set[int]
    items: bool = True

    def run(self, turns: list[Turn], positions: list[int], thinking: set[int]) -> list[Turn]:
        """The reasoning pass, over the placed turns at `positions` (those of messages with
        reasoning, `thinking`, or bound calls); a turn it leaves empty is dropped."""
        emptied = False
        for position in positions:
            role, blocks, index = turns[position]
            blocks = self.blocks(blocks, index, index in thinking)
            turns[position] = (role, blocks, index)
            if not blocks:
                dropped(self.prep, turns[position])
                emptied = True
        return [t for t in turns if t[1]] if emptied else turns

    def blocks(self, blocks: list[Block], index: int | None, thinking: bool) -> list[Block]:
        """Reasoning of the target model goes back where it may (the reader already dropped
        any other model's); item ids on calls stand or fall with it, and a corrupted thought
        signature goes nowhere."""
        message = self.messages[index or 0]
        api, model = string(message.get("api")), string(message.get("model"))
        if self.cap.base64_signatures:
            self._corrupt_signatures(blocks, index)
        replay = False
        if thinking:
            blocks, replay = self._thinking(blocks, index, api, model)
        if index not in self.bound:
            return blocks
        out: list[Block] = []
        for block in blocks:
            if block["type"] == "toolCall":
                drop_item = not replay and ITEM_ID in block
                drop_signature = "thoughtSignature" in block and \
                    not signature_fits(block["thoughtSignature"], self.cap)
                if drop_item:
                    log_item_removed(self.prep, index, block[ITEM_ID], block)
                if drop_item or drop_signature:
                    block = block.copy()
                    if drop_item:
                        del block[ITEM_ID]
                    if drop_signature:
                        del block["thoughtSignature"]
            out.append(block)
        return out

    def _corrupt_signatures(self, blocks: list[Block], index: int | None) -> None:
        corrupt = 0
        for block in blocks:
            if block["type"] == "thinking":
                signature = block.get("thinkingSignature")
            elif block["type"] == "toolCall":
                signature = block.get("thoughtSignature")
            else:
                continue
            if isinstance(signature, str) and signature and \
                    not signature_fits(signature, self.cap):
                corrupt += 1
        if corrupt:
            self.prep.log(ChangeKind.SIGNATURE_CORRUPT,
                          "thought signatures that are not valid base64 "
                          "are rejected (Corrupted thought signature); the reasoning or call "
                          "goes without them", index, count=corrupt)

    def _thinking(self, blocks: list[Block], index: int | None, api: str | None,
                  model: str | None) -> tuple[list[Block], bool]:
        """Keeps the reasoning the provider can replay: leading reasoning, and in a turn that
        goes back as its own items any reasoning whose following item goes back as itself;
        says whether any was kept."""
        kept: list[Block] = []
        dropped = converted = 0
        leading = True
        replay = False
        why = FOREIGN
        anywhere = self.items and own_items(api, model, self.cap, self.model)
        after: list[Block | None] = [None] * len(blocks)  # the first non-reasoning block after
        following: Block | None = None
        for k in range(len(blocks) - 1, -1, -1):
            after[k] = following
            if blocks[k]["type"] != "thinking":
                following = blocks[k]
        for k, block in enumerate(blocks):
            if block["type"] != "thinking":
                leading = False
                kept.append(block)
                continue
            nxt = after[k]
            cause = not_replayable(block, api, model, self.cap, self.model)
            if nxt is not None and cause is None and (
                    leading or (anywhere and not stays_text(nxt))):
                kept.append(block)
                replay = True
                continue
            why = cause or ("nothing of its turn follows it" if nxt is None else
                            AFTER_TEXT if anywhere else NOT_FIRST)
            if self.as_text and block["thinking"].strip():
                kept.append({"type": "text", "text": block["thinking"]})
                converted += 1
                leading = False  # reasoning kept after this text would no longer come first
            else:
                dropped += 1
        log_thinking(self.prep, index, api, model, self.cap, self.model, dropped, converted,
                     why)
        return kept, replay

    def server_items(self, turns: list[Turn]) -> list[Turn]:
        """Server-run calls go back to the model that ran them as their own items, where
        their reasoning stood around them; every other target reads their text."""
        out = turns
        for position, (role, blocks, index) in enumerate(turns):
            if role != "assistant" or index is None:
                continue
            message = self.messages[index]
            if message.get("api") != "openai-responses" or \
                    not any(RESPONSES_ITEM in b for b in blocks) or \
                    not own_items(string(message.get("api")), string(message.get("model")),
                                  self.cap, self.model):
                continue
            if out is turns:
                out = list(turns)
            out[position] = (role, [_as_item(b) for b in blocks], index)
        return out


def _as_item(block: Block) -> Block:
    item = server_item(block)
    if item is None:
        return block
    sent: ServerItemBlock = {"type": "serverItem", "item": item}  # SERVER_ITEM
    return sent
