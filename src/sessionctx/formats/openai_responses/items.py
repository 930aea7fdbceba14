"""OpenAI Responses items as native messages: the one mapping Codex rollouts, Responses item
lists and the OpenAI Agents SDK adapter share.

A call of any kind (function, custom tool, computer, local shell, shell, apply_patch, tool
search, program) becomes a toolCall block keyed by its `call_id`, and its output a toolResult
message. Reasoning becomes a thinking block whose thinkingSignature is the JSON-encoded item
(pi's convention), so the openai-responses provider can replay it, by id or by
encrypted_content, to the model that wrote it. An item the server ran and answered itself (web
search, file search, code interpreter, image generation, MCP) needs no output: it becomes a
text block saying what it held, so it reaches every provider and never reads as a dangling
call; in a turn of a named model the block keeps the item too (`responsesItem`), which goes
back as it is to that model, as Codex and the Agents SDK send it. Items with nothing a model
reads (item references, compaction blobs, settings) are left to the caller, who keeps them as
context rows.

`Turns` groups consecutive model items into one assistant message, as one Responses turn;
`item_message` maps one item to one message, for a caller that must keep that mapping exact.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sessionctx.formats.common import (
    Obj,
    as_list,
    data_url_image,
    is_in,
    parse_arguments,
    server_block,
    text_block,
)
from sessionctx.messages import RESPONSES_ITEM

# Each kind of call the API pairs with an output item.
CALL_OUTPUT = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "tool_search_call": "tool_search_output",
    "program": "program_output",
}
CALLS = frozenset(CALL_OUTPUT)
OUTPUTS = frozenset(CALL_OUTPUT.values())
# Items the server ran and answered within the item itself: no output item follows them.
SERVER_ITEMS = frozenset({"web_search_call", "file_search_call", "code_interpreter_call",
                          "image_generation_call", "mcp_call", "mcp_list_tools",
                          "mcp_approval_request"})
# Items that carry nothing a model reads as text: references to server-side state, opaque
# compaction blobs and request settings.
OPAQUE_ITEMS = frozenset({"item_reference", "compaction", "compaction_trigger",
                          "additional_tools", "configuration_update"})
ITEM_TYPES = frozenset({"message", "reasoning", "mcp_approval_response", *CALLS, *OUTPUTS,
                        *SERVER_ITEMS, *OPAQUE_ITEMS})
INPUT_ROLES = frozenset({"user", "system", "developer"})
# The tool a call of a kind with no `name` field stands for.
_TOOL_NAMES = {"computer_call": "computer", "local_shell_call": "local_shell",
               "shell_call": "shell", "apply_patch_call": "apply_patch",
               "tool_search_call": "tool_search", "program": "program"}


def item_type(item: Obj) -> str:
    """An item's type; an easy input message (`{role, content}`) has none and is a message."""
    kind = item.get("type")
    if isinstance(kind, str):
        return kind
    return "message" if "role" in item else ""


def is_model_item(item: Obj) -> bool:
    """Whether the model wrote this item (what may follow reasoning in one response)."""
    kind = item_type(item)
    if kind == "message":
        return not is_in(item.get("role"), INPUT_ROLES)
    return kind not in OUTPUTS and kind not in ("mcp_approval_response", "item_reference")


def lone_reasoning(items: Sequence[Obj], keep: list[bool]) -> list[int]:
    """The reasoning items no kept item the model wrote follows (the API refuses them), in
    order; each is marked off in `keep` too."""
    lone: list[int] = []
    for i in range(len(items) - 1, -1, -1):
        if not keep[i] or item_type(items[i]) != "reasoning":
            continue
        j = i + 1
        while j < len(items) and not keep[j]:
            j += 1
        if j < len(items) and is_model_item(items[j]):
            continue
        keep[i] = False
        lone.append(i)
    return lone[::-1]


def joins_turn(item: Obj) -> bool:
    """Whether an item is part of the model's turn: what `Turns` groups into one message."""
    kind = item_type(item)
    return kind == "reasoning" or kind in CALLS or kind in SERVER_ITEMS or (
        kind == "message" and item.get("role") == "assistant")


def output_call_id(item: Obj) -> str:
    """The call an output answers (a local shell output names it by `id`)."""
    call_id = item.get("call_id") or item.get("id") or ""
    return call_id if isinstance(call_id, str) else str(call_id)


def native_call_id(item: Obj) -> str:
    """The toolCall id a call item gets: its call_id, with its item id after a '|' when it
    has a different one (pi's convention for Responses calls)."""
    call_id = item.get("call_id") or item.get("id") or ""
    if isinstance(item.get("id"), str) and item.get("call_id") and item["id"] != call_id:
        return f"{call_id}|{item['id']}"
    return str(call_id)


def content_blocks(content: Any, lost: list[str], where: str = "content") -> list[Obj]:
    """A message's content as native blocks; a part with no native equivalent is named in
    `lost` (the item itself stays in the record)."""
    if isinstance(content, str):
        return [text_block(content)] if content else []
    out: list[Obj] = []
    for part in as_list(content):
        ptype = part.get("type") if isinstance(part, dict) else None
        if ptype in ("input_text", "output_text", "text", "summary_text", "reasoning_text"):
            out.append(text_block(str(part.get("text", ""))))
        elif ptype == "refusal":
            out.append(text_block(str(part.get("refusal", ""))))
        elif ptype == "input_image" and data_url_image(part.get("image_url")):
            out.append(data_url_image(part.get("image_url")) or {})
        elif ptype == "input_file":
            out.append(part)  # a Responses file part, in the shape providers read
        else:
            lost.append(f"{where} part {json.dumps(part)[:60]}")
    return out


def output_blocks(item: Obj, lost: list[str]) -> list[Obj]:
    """What an output item returned, as native blocks."""
    kind = item_type(item)
    if kind == "shell_call_output":
        return [text_block(_shell_text(chunk)) for chunk in as_list(item.get("output"))
                if isinstance(chunk, dict)]
    if kind == "program_output" and isinstance(item.get("result"), str):
        return [text_block(item["result"])]
    output = item.get("output")
    if output is None and isinstance(item.get("status"), str):
        return [text_block(item["status"])]  # apply_patch output without a log: its outcome
    if isinstance(output, dict):
        image = data_url_image(output.get("image_url"))  # a computer screenshot
        if image is not None:
            return [image]
        if isinstance(output.get("content"), str):
            return [text_block(output["content"])]
        output = output.get("content")
    if output is None and kind == "tool_search_output":
        return [text_block(json.dumps(item.get("tools", []), ensure_ascii=False))]
    return content_blocks(output, lost, "tool output")


def _shell_text(chunk: Obj) -> str:
    parts = [str(chunk[k]) for k in ("stdout", "stderr") if chunk.get(k)]
    outcome = chunk.get("outcome")
    if isinstance(outcome, dict):
        if outcome.get("type") == "exit":
            parts.append(f"exit code {outcome.get('exit_code')}")
        elif outcome.get("type"):
            parts.append(str(outcome["type"]))
    return "\n".join(parts)


def result_message(item: Obj, call_id: str, name: str, lost: list[str]) -> Obj:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": output_blocks(item, lost),
            "isError": item.get("status") in ("incomplete", "failed")}


def call_block(item: Obj, call_id: str) -> Obj:
    """A call item as a toolCall block with id `call_id`."""
    kind = item_type(item)
    name = item.get("name")
    if not isinstance(name, str) or not name:
        name = _TOOL_NAMES.get(kind, kind)
    if kind == "function_call":
        args = parse_arguments(item.get("arguments"))
    elif kind == "custom_tool_call":
        args = {"input": item.get("input", "")}
    elif kind == "program":
        args = {"code": item.get("code", "")}
    else:
        key = next((k for k in ("action", "operation", "arguments") if k in item), None)
        args = item[key] if key is not None else {}
        if not isinstance(args, dict):
            args = {key or "input": args}
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": args}


def thinking_text(item: Obj) -> str:
    """What a reasoning item says: its summary, then its content text."""
    parts = [s.get("text", "") for s in as_list(item.get("summary")) if isinstance(s, dict)]
    content = item.get("content")
    if isinstance(content, list):
        parts += [c.get("text", "") for c in content if isinstance(c, dict)]
    return "\n\n".join(p for p in parts if isinstance(p, str) and p)


def thinking_block(item: Obj) -> Obj:
    """Reasoning as a thinking block, the item itself as its signature (to replay it)."""
    return {"type": "thinking", "thinking": thinking_text(item),
            "thinkingSignature": json.dumps(item, ensure_ascii=False)}


def item_message(item: Obj, lost: list[str]) -> Obj | None:
    """The one native message an item becomes, or None for an item with nothing a model
    reads. Calls keep their `call_id` as it is, so each output pairs on its own."""
    kind = item_type(item)
    if kind == "message":
        role = item.get("role")
        content = content_blocks(item.get("content"), lost)
        if role in ("system", "developer"):
            return {"role": "system", "content": "".join(b.get("text", "") for b in content)}
        return {"role": "assistant" if role == "assistant" else "user", "content": content}
    if kind in CALLS:
        return {"role": "assistant", "content": [call_block(item, output_call_id(item))]}
    if kind in OUTPUTS:
        return result_message(item, output_call_id(item), "", lost)
    if kind == "reasoning":  # with no model named, nothing could replay it: no signature
        return {"role": "assistant", "content": [{"type": "thinking",
                                                  "thinking": thinking_text(item)}]}
    if kind in SERVER_ITEMS:
        return {"role": "assistant", "content": [server_block(item, lost)]}
    if kind == "mcp_approval_response":
        return {"role": "user", "content": [server_block(item, lost)]}
    return None


class Turns:
    """Turns a sequence of Responses items into native messages (with their source items):
    consecutive model items form one assistant message of `model`."""

    def __init__(self, model: str = "") -> None:
        self.model = model
        self.ids: dict[str, str] = {}  # call_id -> toolCall id used in the native message
        self.names: dict[str, str] = {}
        self.turn: list[Obj] = []
        self.turn_items: list[Obj] = []
        self.block_items: list[Obj] = []  # the item each block of the turn came from
        # (message, its items, the item of each of its content blocks)
        self.out: list[tuple[Obj, list[Obj], list[Obj]]] = []

    def close(self) -> None:
        if not self.turn_items:
            return
        has_call = any(b["type"] == "toolCall" for b in self.turn)
        message = {"role": "assistant", "content": self.turn, "api": "openai-responses",
                   "provider": "openai", "model": self.model,
                   "stopReason": "toolUse" if has_call else "stop"}
        self.out.append((message, self.turn_items, self.block_items))
        self.turn, self.turn_items, self.block_items = [], [], []

    def item(self, item: Obj, lost: list[str]) -> bool:
        """Convert one item; False when it has nothing a model reads."""
        kind = item_type(item)
        if not joins_turn(item):
            self.close()
            return self._other(item, lost)
        if kind == "reasoning":
            self.turn.append(thinking_block(item))
        elif kind == "message":
            self.turn.extend(content_blocks(item.get("content"), lost, "assistant content"))
        elif kind in CALLS:
            call_id = output_call_id(item)
            native = native_call_id(item)
            self.ids[call_id] = native
            block = call_block(item, native)
            self.names[call_id] = block["name"]
            self.turn.append(block)
        else:
            block = server_block(item, lost)
            if self.model:  # the model that ran it may take the item itself back
                block[RESPONSES_ITEM] = item
            self.turn.append(block)
        self.turn_items.append(item)
        self.block_items.extend([item] * (len(self.turn) - len(self.block_items)))
        return True

    def _other(self, item: Obj, lost: list[str]) -> bool:
        kind = item_type(item)
        if kind in OUTPUTS:
            call_id = output_call_id(item)
            result = result_message(item, self.ids.get(call_id, call_id),
                                    self.names.get(call_id, ""), lost)
            self.out.append((result, [item], []))
            return True
        if (kind == "message" and is_in(item.get("role"), INPUT_ROLES)) or \
                kind == "mcp_approval_response":
            message = item_message(item, lost)
            if message is not None:
                self.out.append((message, [item], []))
                return True
        return False
