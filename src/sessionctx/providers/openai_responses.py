"""OpenAI Responses (docs/provider-rules.md §3): `{"input", "instructions"?}` as message,
function_call, function_call_output and reasoning items, and the server-run items a turn of the
target model goes back with; its tool definitions and choice, validator and capability row."""

from __future__ import annotations

import re
from typing import Any

from sessionctx.providers import documents, tools
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.image_limits import oversized
from sessionctx.providers.policies.reasoning import SERVER_ITEM_TYPES, reasoning_item
from sessionctx.providers.policies.turns import (
    ITEM_ID,
    RESULT,
    Block,
    Prepared,
    data_url,
    json_text,
    raw,
)
from sessionctx.providers.provider import Provider
from sessionctx.providers.violations import Violation, arguments_problem, history

# no error field on a result, system and developer messages anywhere, no role rule; a turn
# goes back to the model that wrote it as its own items, reasoning included
ROWS = (Capability("openai-responses", "", error_flag=False, own_items=True,
                   thinking_apis=frozenset({"openai-responses", "openai-codex-responses"}),
                   system_inline=True, merge_roles=False, first_user=False),)


def render(prep: Prepared, cap: Capability) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for role, blocks, _ in prep.turns:
        if role == "assistant":
            _assistant_items(blocks, items)
        else:
            _input_items(role, blocks, items)
    body: dict[str, Any] = {"input": items}
    if any(i["type"] == "reasoning" and "id" not in i for i in items):
        # replayed by content, as Codex does: not stored, and the new turn's own reasoning
        # asked back encrypted so it can be replayed the same way
        body["store"] = False
        body["include"] = ["reasoning.encrypted_content"]
    system = prep.system_text()
    if system:
        body["instructions"] = system
    return body


def _assistant_items(blocks: list[Block], out: list[dict[str, Any]]) -> None:
    text: list[str] = []
    for block in blocks:
        if block["type"] == "text":
            text.append(block["text"])
            continue
        if text:
            out.append({"type": "message", "role": "assistant", "content": "".join(text)})
            text = []
        if block["type"] == "toolCall":
            call = {"type": "function_call", "call_id": block["id"], "name": block["name"],
                    "arguments": json_text(block["arguments"])}
            if block.get(ITEM_ID):
                call["id"] = block["_sessionctx_item_id"]
            out.append(call)
        elif block["type"] == "serverItem":
            out.append(dict(block["item"]))
        elif block["type"] == "thinking":
            signature = block["thinkingSignature"]
            item = reasoning_item(signature or "") or {
                "type": "reasoning", "id": signature, "summary": []}
            out.append(_clean_reasoning(item))
        else:
            out.append(raw(block))
    if text:
        out.append({"type": "message", "role": "assistant", "content": "".join(text)})


def _input_items(role: str, blocks: list[Block], out: list[dict[str, Any]]) -> None:
    content: list[dict[str, Any]] = []
    for block in blocks:
        if block["type"] == RESULT:
            out.append({"type": "function_call_output", "call_id": block["id"],
                        "output": _output(block["content"])})
        else:
            content.append(_input_part(block))
    if content:
        out.append({"type": "message", "role": "system" if role == "system" else "user",
                    "content": content})


def _clean_reasoning(item: dict[str, Any]) -> dict[str, Any]:
    keep = ("type", "id", "summary", "encrypted_content", "content", "status")
    out = {k: v for k, v in item.items() if k in keep and v is not None}
    out.setdefault("summary", [])
    return out


def _output(content: list[Block]) -> Any:
    texts: list[str] = []
    for b in content:
        if b["type"] != "text":
            return [_input_part(b) for b in content]
        texts.append(b["text"])
    return "\n".join(texts)


def _input_part(block: Block) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "input_text", "text": block["text"]}
    if block["type"] == "image":
        return {"type": "input_image", "image_url": data_url(block), "detail": "auto"}
    if block["type"] == "document":
        if "text" in block:
            return {"type": "input_text", "text": documents.text_part(block)}
        return {"type": "input_file", "file_data": data_url(block),
                "filename": documents.file_name(block)}
    if block["type"] == "thinking":
        return {"type": "input_text", "text": block["thinking"]}
    return raw(block)


def validate(body: dict[str, Any], cap: Capability) -> list[Violation]:
    items, out = history(body, "input", "a list of items")
    if items is None:
        return out
    pattern = re.compile(cap.id_pattern)
    calls: dict[str, int] = {}
    answered: set[str] = set()
    pics: list[tuple[str, Any]] = []  # each image's path and data URL
    for i, item in enumerate(items):
        kind = item.get("type") or item_kind(item)  # a path is written only for a violation
        if kind == "function_call":
            cid = item.get("call_id")
            if not isinstance(cid, str) or len(cid) > cap.id_max_len or not pattern.fullmatch(cid):
                out.append(Violation(f"input[{i}].call_id", "string too long or invalid: expected "
                                     f"at most {cap.id_max_len} characters"))
            elif cid in calls:
                out.append(Violation(f"input[{i}].call_id", f"duplicate call_id {cid}"))
            else:
                calls[cid] = i
            if (why := arguments_problem(item.get("arguments"))) is not None:
                out.append(Violation(f"input[{i}].arguments", why))
            if item.get("id") is not None and not _after_reasoning(items, i):
                out.append(Violation(f"input[{i}].id", f"Item '{item['id']}' of type "
                                     "'function_call' was provided without its required "
                                     "'reasoning' item"))
        elif kind == "function_call_output":
            cid = item.get("call_id")
            if cid not in calls:
                out.append(Violation(f"input[{i}]", "No tool call found for function call "
                                     f"output with call_id {cid}"))
            elif cid in answered:
                out.append(Violation(f"input[{i}]", f"second output for call_id {cid}"))
            answered.add(str(cid))
            _check_output(item.get("output"), i, out, pics)
        elif kind == "reasoning":
            if not item.get("encrypted_content") and not str(item.get("id", "")).startswith("rs_"):
                out.append(Violation(f"input[{i}]", "reasoning items need their id and "
                                     "encrypted_content"))
            if i + 1 == len(items) or not model_item(items[i + 1]):
                out.append(Violation(f"input[{i}]", f"Item '{item.get('id')}' of type "
                                     "'reasoning' was provided without its required following "
                                     "item"))
        elif kind == "message":
            _check_message(item, i, out, pics)
        elif kind in SERVER_ITEM_TYPES:
            if not isinstance(item.get("id"), str) or not item["id"]:
                out.append(Violation(f"input[{i}].id", f"an item of type {kind!r} needs its id"))
        else:
            out.append(Violation(f"input[{i}]", f"unsupported item type {kind!r}"))
    for cid, at in calls.items():
        if cid not in answered:
            out.append(Violation(f"input[{at}]", f"No tool output found for function call {cid}"))
    instructions = body.get("instructions")
    if instructions is not None and not str(instructions).strip():
        out.append(Violation("instructions", "instructions must not be blank"))
    out.extend(oversized(pics, cap))
    return out


def item_kind(item: dict[str, Any]) -> Any:
    """An item's type: a message may leave it out (the API's shorter spelling)."""
    return item.get("type", "message" if "role" in item else None)


def model_item(item: dict[str, Any]) -> bool:
    """An item the model wrote, other than reasoning's: what reasoning may be followed by
    (another reasoning item too)."""
    kind = item_kind(item)
    if kind == "message":
        return item.get("role") == "assistant"
    return kind in ("function_call", "reasoning") or kind in SERVER_ITEM_TYPES


def _after_reasoning(items: list[dict[str, Any]], i: int) -> bool:
    j = i - 1
    while j >= 0 and items[j].get("type") != "reasoning" and model_item(items[j]):
        j -= 1
    return j >= 0 and items[j].get("type") == "reasoning"


def _check_output(output: Any, i: int, out: list[Violation],
                  pics: list[tuple[str, Any]]) -> None:
    if isinstance(output, str):
        return
    if not isinstance(output, list):
        out.append(Violation(f"input[{i}].output", "output must be a string or a list of parts"))
        return
    for j, p in enumerate(output):
        if p.get("type") not in ("input_text", "input_image", "input_file"):
            out.append(Violation(f"input[{i}].output[{j}]", f"unsupported part {p.get('type')!r}"))
        elif p.get("type") == "input_image":
            pics.append((f"input[{i}].output[{j}].image_url", p.get("image_url")))


def _check_message(item: dict[str, Any], i: int, out: list[Violation],
                   pics: list[tuple[str, Any]]) -> None:
    role = item.get("role")
    content = item.get("content")
    if role not in ("user", "assistant", "system", "developer"):
        out.append(Violation(f"input[{i}].role", f"unknown role {role!r}"))
    if isinstance(content, str) and "type" not in item:  # the shorter spelling: one text part
        content = [{"type": "output_text" if role == "assistant" else "input_text",
                    "text": content}]
    if isinstance(content, str):
        if not content or content.isspace():  # as strip, without its copy
            out.append(Violation(f"input[{i}].content", "empty message content"))
        return
    if not isinstance(content, list) or not content:
        out.append(Violation(f"input[{i}].content", "message content must not be empty"))
        return
    for j, p in enumerate(content):
        kind = p.get("type")
        if kind in ("input_image", "input_file") and role != "user":
            out.append(Violation(f"input[{i}].content[{j}]", "images and files only in user "
                                 "messages"))
        elif kind == "input_text":
            text = p.get("text", "")
            if (not text or text.isspace()) if isinstance(text, str) else \
                    not str(text).strip():  # as strip, without the copy of a string
                out.append(Violation(f"input[{i}].content[{j}]", "empty text part"))
        elif kind not in ("input_image", "input_file") and not (
                kind == "output_text" and role == "assistant"):  # the model's text, as sent
            out.append(Violation(f"input[{i}].content[{j}]", f"unsupported part {kind!r}"))
        if kind == "input_image":
            pics.append((f"input[{i}].content[{j}].image_url", p.get("image_url")))


# ---------------------------------------------------------------- tools

def render_tools(defined: list[tools.Tool], choice: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": [{"type": "function", **tools.definition(t, "parameters"),
                                      "strict": False} for t in defined]}
    if choice is not None:
        out["tool_choice"] = tools.openai_choice(choice, nested=False)
    return out


def tool_violations(body: dict[str, Any]) -> list[Violation]:
    return tools.checked(body, _found, tools.named_choice(body), [])


def _found(entries: list[tuple[str, Any]], out: list[Violation]) -> list[tuple[str, Any, Any]]:
    """The function definitions: the API's other tool types (custom, web_search, tool_search…)
    carry no name or schema of that shape."""
    return [(path, t.get("name"), t.get("parameters")) for path, t in tools.objects(entries, out)
            if t.get("type", "function") == "function"]


PROVIDER = Provider("openai-responses", "gpt-5.1", ROWS, render, validate, render_tools,
                    tool_violations, maker="OpenAI")
