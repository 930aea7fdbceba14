"""Anthropic Messages (docs/provider-rules.md §1): `{"messages", "system"?}`, its tool
definitions and tool choice, its cache breakpoints and its rows of the capability table; the
validator for its history rules is in anthropic_checks.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.messages import DocumentBlock
from sessionctx.providers import tools
from sessionctx.providers.anthropic_checks import (
    CACHE,
    breakpoints,
    marked_blocks,
    spelt_out,
    validate,
)
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies import request_settings
from sessionctx.providers.policies.turns import Block, Prepared, raw
from sessionctx.providers.provider import Provider
from sessionctx.providers.violations import Violation

CACHE_REMOVED = ChangeKind.CACHE_REMOVED
_MB = 1024 * 1024

# Claude models up to 4.5 [1.4, 1.5, 1.6]: a prefill, manual extended thinking
BASE = Capability("anthropic", "claude-", max_images=100, max_image_px=8000, many_images=20,
                  many_image_px=2000, max_image_base64=5 * _MB,
                  thinking_apis=frozenset({"anthropic-messages"}),
                  thinking_rules=True, prefill=True, max_cache_breakpoints=4,
                  max_document_bytes=32 * _MB, max_pdf_pages=100)
# Claude 4.6 and later [1.1, 1.4]: adaptive thinking (a tool choice may force a tool), no prefill
ADAPTIVE = replace(BASE, prefill=False, forced_tool_thinking=True)
ROWS = (
    BASE,
    *(replace(ADAPTIVE, family=family)
      for family in ("claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7",
                     "claude-sonnet-5", "claude-haiku-5")),
    # 600 images per request, and a system message after a user turn [1.1, 1.5]
    replace(ADAPTIVE, family="claude-opus-4-8", max_images=600, mid_system=True),
    replace(BASE, family="claude-opus-5", max_images=600, mid_system=True, prefill=False),
)


def render(prep: Prepared, cap: Capability) -> dict[str, Any]:
    messages = []
    marked: list[dict[str, Any]] = []
    for role, blocks, _ in prep.turns:
        messages.append({"role": role, "content": _blocks(blocks, marked)})
    prep.cache_marks = len(marked)
    body: dict[str, Any] = {"messages": messages}
    system = prep.system_text()
    if system:
        body["system"] = system
    return body


def _blocks(blocks: list[Block], marked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text and calls, the common blocks, are mapped inline; a stored cache breakpoint on
    either is kept (limit_breakpoints then keeps the request within the limit). Each block
    with a breakpoint goes into `marked` too, so the request is walked again only when it
    holds more than the limit."""
    out = []
    for b in blocks:
        block: dict[str, Any]
        if b["type"] == "text":
            block = {"type": "text", "text": b["text"]}
        elif b["type"] == "toolCall":
            block = {"type": "tool_use", "id": b["id"], "name": b["name"],
                     "input": b["arguments"]}
        else:
            out.append(_block(b, marked))
            continue
        if CACHE in b:
            block[CACHE] = b[CACHE]
            marked.append(block)
        out.append(block)
    return out


def _document(block: DocumentBlock) -> dict[str, Any]:
    if "text" in block:
        source = {"type": "text", "media_type": "text/plain", "data": block["text"]}
    else:
        source = {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}
    out: dict[str, Any] = {"type": "document", "source": source}
    if block.get("name"):
        out["title"] = block["name"]
    return out


def limit_breakpoints(body: dict[str, Any], prep: Prepared, limit: int) -> None:
    """The latest `limit` cache breakpoints of tools, system and messages (the prefix order)
    are kept; the earlier ones are removed and logged."""
    if prep.cache_marks is not None and prep.cache_marks <= limit:
        return  # the renderer counted them: within the limit, with no walk of the body
    found = breakpoints(body)
    over = len(found) - limit
    if over <= 0:
        return
    for block, index in found[:over]:
        del block[CACHE]
        prep.log(CACHE_REMOVED, f"A maximum of {limit} blocks with cache_control may be "
                 "provided; the earliest breakpoints were removed, the latest kept",
                 index if index is None else _turn_index(prep, index))


def _turn_index(prep: Prepared, message: int) -> int | None:
    return prep.turns[message][2] if message < len(prep.turns) else None


def _block(block: Block, marked: list[dict[str, Any]]) -> dict[str, Any]:
    """Every block but text and calls, which `_blocks` maps itself."""
    if block["type"] == "toolResult":
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block["id"],
                               "content": _blocks(block["content"], marked)}
        if block["isError"]:
            out["is_error"] = True
        return out
    if block["type"] == "image":
        return {"type": "image", "source": {"type": "base64", "media_type": block["mimeType"],
                                            "data": block["data"]}}
    if block["type"] == "document":
        return _document(block)
    if block["type"] == "thinking":  # the reader sets every key of a thinking block
        if block["redacted"]:
            return {"type": "redacted_thinking", "data": block["thinkingSignature"]}
        return {"type": "thinking", "thinking": block["thinking"],
                "signature": block["thinkingSignature"]}
    copy = raw(block)  # a stored block as it is, breakpoints included
    marked.extend(marked_blocks(copy))
    return copy


def render_tools(defined: list[tools.Tool], choice: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": [tools.definition(t, "input_schema") for t in defined]}
    if choice is not None:
        out["tool_choice"] = _choice(choice)
    return out


def _choice(choice: str) -> dict[str, Any]:
    if choice in ("any", "required"):
        return {"type": "any"}
    if choice in ("auto", "none"):
        return {"type": choice}
    return {"type": "tool", "name": choice}


def needs_definitions(body: dict[str, Any]) -> bool:
    """tool_use or tool_result blocks in a body without tools [1.3]."""
    if body.get("tools"):
        return False
    return any(b.get("type") in ("tool_use", "tool_result") for b in tools.content_blocks(body))


def tool_violations(body: dict[str, Any]) -> list[Violation]:
    out = tools.undefined(needs_definitions(body), "anthropic", "tools", "Requests which "
                          "include tool_use or tool_result blocks must define tools.")
    return tools.checked(body, _found, tools.named_choice(body), out)


def _found(entries: list[tuple[str, Any]], out: list[Violation]) -> list[tuple[str, Any, Any]]:
    return [(path, t.get("name"), t.get("input_schema")) for path, t in tools.objects(entries, out)]


def _kind(block: Any) -> str | None:
    """A block's kind, the redacted kind of thinking as thinking."""
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(kind, str):
        return None
    return "thinking" if kind == "redacted_thinking" else kind


def settings_violations(body: dict[str, Any], cap: Capability, thinking: bool | None,
                        prefill: bool) -> list[Violation]:
    choice = body.get("tool_choice")
    forces = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    return request_settings.violations(body, cap, thinking, prefill, _kind, forces, spelt_out)


def finish(body: dict[str, Any], prep: Prepared, cap: Capability) -> None:
    if cap.max_cache_breakpoints is not None:
        limit_breakpoints(body, prep, cap.max_cache_breakpoints)


PROVIDER = Provider("anthropic", "claude-opus-4-8", ROWS, render, validate, render_tools,
                    tool_violations, needs_definitions=needs_definitions, finish=finish,
                    settings_violations=settings_violations, maker="Anthropic")
