"""AWS Bedrock Converse (docs/provider-rules.md §5): `{"messages", "system"?}` with strictly
alternating roles, its toolConfig, its validator and its rows of the capability table."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from sessionctx.providers import documents, tools
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies import request_settings
from sessionctx.providers.policies.image_limits import oversized
from sessionctx.providers.policies.turns import Block, Prepared, raw
from sessionctx.providers.provider import Provider
from sessionctx.providers.violations import Violation, history

FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}

# Any model: 20 images, five documents of at most 4.5 MB, no status on a result, no reasoning
# signature (the rows are matched without an inference profile's region)
BASE = Capability("bedrock", "", max_images=20, max_image_px=8000, error_flag=False,
                  thinking_apis=frozenset({"bedrock-converse-stream", "bedrock-converse"}),
                  reasoning_signature=False, max_documents=5, max_document_bytes=4_500_000)
# Claude: a result's status, signatures, Anthropic's thinking rules, 100 PDF pages
CLAUDE = replace(BASE, family="anthropic.claude", error_flag=True, reasoning_signature=True,
                 thinking_rules=True, forced_tool_thinking=True, max_pdf_pages=100)
ROWS = (
    BASE,
    CLAUDE,
    # Claude 3: manual extended thinking, and a prefill
    replace(CLAUDE, family="anthropic.claude-3", forced_tool_thinking=False, prefill=True),
    # Nova: a result's status, no signatures
    replace(BASE, family="amazon.nova", error_flag=True),
)
# us.anthropic.claude-..., global.amazon.nova-...: a cross-region inference profile of a model
_REGION = re.compile(r"^(?:us|us-gov|eu|apac|jp|au|ca|global)\.")


def render(prep: Prepared, cap: Capability) -> dict[str, Any]:
    messages = []
    names: set[str] = set()  # document names, distinct within the request
    for role, blocks, index in prep.turns:
        content = _blocks(blocks, cap, names)
        if names and any("document" in b for b in content) and \
                not any("text" in b for b in content):
            attached = ", ".join(b["document"]["name"] for b in content if "document" in b)
            content.append({"text": f"[attached: {attached}]"})
            prep.log(documents.DOCUMENT_NOTE_ADDED, "a message with a document must also "
                     "include a text block; one naming the document was added", index)
        messages.append({"role": "user" if role == "system" else role, "content": content})
    body: dict[str, Any] = {"messages": messages}
    system = prep.system_text()
    if system:
        body["system"] = [{"text": system}]
    return body


def _blocks(blocks: list[Block], cap: Capability, names: set[str]) -> list[dict[str, Any]]:
    """Text and calls, the common blocks, are mapped inline."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        if block["type"] == "text":
            out.append({"text": block["text"]})
        elif block["type"] == "toolCall":
            out.append({"toolUse": {"toolUseId": block["id"], "name": block["name"],
                                    "input": block["arguments"]}})
        else:
            out.append(_block(block, cap, names))
    return out


def _block(block: Block, cap: Capability, names: set[str]) -> dict[str, Any]:
    """Every block but text and calls, which `_blocks` maps itself."""
    if block["type"] == "toolResult":
        out: dict[str, Any] = {"toolUseId": block["id"],
                               "content": _blocks(block["content"], cap, names)}
        if block["isError"] and cap.error_flag:
            out["status"] = "error"
        return {"toolResult": out}
    if block["type"] == "image":
        mime = block["mimeType"]
        return {"image": {"format": FORMATS.get(mime, mime), "source": {"bytes": block["data"]}}}
    if block["type"] == "document":
        plain = "text" in block
        return {"document": {"format": "txt" if plain else "pdf",
                             "name": documents.bedrock_name(block, names),
                             "source": {"text": block["text"]} if plain else
                             {"bytes": block["data"]}}}
    if block["type"] == "thinking":
        signature = block["thinkingSignature"]
        if block["redacted"]:
            return {"reasoningContent": {"redactedContent": signature}}
        text: dict[str, Any] = {"text": block["thinking"]}
        if cap.reasoning_signature and signature:
            text["signature"] = signature
        return {"reasoningContent": {"reasoningText": text}}
    return raw(block)


def validate(body: dict[str, Any], cap: Capability) -> list[Violation]:
    messages, out = history(body, "messages")
    if messages is None:
        return out
    pattern = re.compile(cap.id_pattern)
    images = docs = 0
    pics: list[tuple[str, Any]] = []  # each image's path and data
    expect: list[str] = []
    seen: set[str] = set()
    for i, m in enumerate(messages):
        path = f"messages[{i}]"
        role = m.get("role")
        content = m.get("content")
        if role not in ("user", "assistant"):
            out.append(Violation(f"{path}.role", f"invalid role {role!r}"))
        if i == 0 and role != "user":
            out.append(Violation(path, "A conversation must start with a user message"))
        if i and messages[i - 1].get("role") == role:
            out.append(Violation(path, "A conversation must alternate between user and "
                                 "assistant roles."))
        if not isinstance(content, list) or not content:
            out.append(Violation(f"{path}.content", "content must be a non-empty array"))
            content = []
        results = [b["toolResult"].get("toolUseId") for b in content if "toolResult" in b]
        if expect and sorted(map(str, results)) != sorted(expect):
            out.append(Violation(f"{path}.content", "Expected toolResult blocks at "
                                 f"{path}.content for the following Ids: {', '.join(expect)}"))
        elif not expect and results:
            out.append(Violation(f"{path}.content", "The number of toolResult blocks exceeds "
                                 "the number of toolUse blocks of previous turn."))
        expect = []
        if any("document" in b for b in content) and not any("text" in b for b in content):
            out.append(Violation(f"{path}.content", "If you include a ContentBlock with a "
                                 "document field in the array, you must also include a "
                                 "ContentBlock with a text field."))
        for j, b in enumerate(content):
            bpath = f"{path}.content[{j}]"
            images += _check(b, bpath, role, cap, pattern, seen, expect, out, pics)
            docs += _documents(b)
    if cap.max_images is not None and images > cap.max_images:
        out.append(Violation("messages", f"You can include up to {cap.max_images} images"))
    out.extend(oversized(pics, cap))
    if cap.max_documents is not None and docs > cap.max_documents:
        out.append(Violation("messages", f"You can include up to {cap.max_documents} "
                             f"documents; found {docs}"))
    return out


def _documents(block: dict[str, Any]) -> int:
    if "document" in block:
        return 1
    result = block.get("toolResult")
    inner = result.get("content") if isinstance(result, dict) else None
    return sum(1 for c in inner if isinstance(c, dict) and "document" in c) \
        if isinstance(inner, list) else 0


def _check(b: dict[str, Any], path: str, role: Any, cap: Capability, pattern: re.Pattern[str],
           seen: set[str], expect: list[str], out: list[Violation],
           pics: list[tuple[str, Any]]) -> int:
    keys = list(b)
    if len(keys) != 1:
        out.append(Violation(path, f"a content block holds exactly one member, found {keys}"))
        return 0
    key = keys[0]
    value = b[key]
    if key == "text":
        if not str(value).strip():
            out.append(Violation(path, "text blocks must not be empty"))
    elif key == "image":
        if role != "user":
            out.append(Violation(path, "You can only include images and documents if the role "
                                 "is user."))
        if value.get("format") not in FORMATS.values():
            out.append(Violation(path, f"image format {value.get('format')!r} not accepted"))
        source = value.get("source")
        pics.append((f"{path}.image.source.bytes",
                     source.get("bytes") if isinstance(source, dict) else None))
        return 1
    elif key == "document":
        if role != "user":
            out.append(Violation(path, "You can only include images and documents if the role "
                                 "is user."))
        name = value.get("name") if isinstance(value, dict) else None
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9\-()\[\]]+( [A-Za-z0-9"
                                                         r"\-()\[\]]+)*", name):
            out.append(Violation(f"{path}.name", "The document name can only contain "
                                 "alphanumeric characters, whitespace characters (no more than "
                                 "one in a row), hyphens, parentheses, and square brackets."))
        return 0
    elif key == "toolUse":
        tid = value.get("toolUseId")
        if not isinstance(tid, str) or not pattern.fullmatch(tid) or len(tid) > cap.id_max_len:
            out.append(Violation(f"{path}.toolUseId", "toolUseId must match [a-zA-Z0-9_-]+, "
                                 f"length 1-{cap.id_max_len}"))
        elif tid in seen:
            out.append(Violation(f"{path}.toolUseId", "duplicate toolUseId"))
        else:
            seen.add(tid)
            expect.append(tid)
        if not isinstance(value.get("input"), dict):
            out.append(Violation(f"{path}.input", "input must be a JSON object"))
    elif key == "toolResult":
        if "status" in value and not cap.error_flag:
            out.append(Violation(f"{path}.status", "status is only supported by Amazon Nova "
                                 "and Anthropic Claude models"))
        inner = value.get("content")
        if not inner:
            out.append(Violation(path, "The content field at toolResult cannot be empty"))
        images = 0
        for k, c in enumerate(inner or []):
            images += _check(c, f"{path}.content[{k}]", role, cap, pattern, seen, [], out,
                             pics)
        return images
    elif key == "reasoningContent":
        text = value.get("reasoningText")
        if role != "assistant":
            out.append(Violation(path, "reasoning belongs to assistant messages"))
        if isinstance(text, dict) and "signature" in text and not cap.reasoning_signature:
            out.append(Violation(path, "This model doesn't support the "
                                 "reasoningContent.reasoningText.signature field"))
    else:
        out.append(Violation(path, f"unsupported content block {key!r}"))
    return 0


# ---------------------------------------------------------------- tools and settings

def render_tools(defined: list[tools.Tool], choice: str | None) -> dict[str, Any]:
    config: dict[str, Any] = {"tools": [
        {"toolSpec": tools.definition(t, "inputSchema", {"json": t.schema})} for t in defined]}
    if choice is not None:
        config["toolChoice"] = _choice(choice)
    return {"toolConfig": config}


def _choice(choice: str) -> dict[str, Any]:
    if choice in ("any", "required"):
        return {"any": {}}
    if choice == "auto":
        return {"auto": {}}
    return {"tool": {"name": choice}}


def needs_definitions(body: dict[str, Any]) -> bool:
    """toolUse or toolResult blocks in a body without a toolConfig [5]."""
    if "toolConfig" in body:
        return False
    return any("toolUse" in b or "toolResult" in b for b in tools.content_blocks(body))


def tool_violations(body: dict[str, Any]) -> list[Violation]:
    out = tools.undefined(needs_definitions(body), "bedrock", "toolConfig", "The toolConfig "
                          "field must be defined when using toolUse and toolResult content "
                          "blocks.")
    config = body.get("toolConfig")
    if config is None:
        return out
    listed = config.get("tools") if isinstance(config, dict) else None
    if not isinstance(listed, list) or not listed:
        return [Violation("toolConfig.tools", "toolConfig.tools must hold at least one tool")]
    found = []
    for i, t in enumerate(listed):
        spec = t.get("toolSpec") if isinstance(t, dict) else None
        if not isinstance(spec, dict):
            out.append(Violation(f"toolConfig.tools[{i}]", "a tool needs a toolSpec"))
            continue
        schema = spec.get("inputSchema")
        found.append((f"toolConfig.tools[{i}].toolSpec", spec.get("name"),
                      schema.get("json") if isinstance(schema, dict) else None))
    choice = config.get("toolChoice")
    chosen = [choice["tool"].get("name")] if isinstance(choice, dict) and \
        isinstance(choice.get("tool"), dict) else []
    return out + tools.check_definitions(found, chosen)


_KINDS = {"toolUse": "tool_use", "toolResult": "tool_result", "reasoningContent": "thinking",
          "text": "text"}


def _kind(block: Any) -> str | None:
    """A block's kind in Anthropic's terms, for the rules Claude models share with it."""
    if not isinstance(block, dict):
        return None
    return next((_KINDS[k] for k in block if k in _KINDS), None)


def settings_violations(body: dict[str, Any], cap: Capability, thinking: bool | None,
                        prefill: bool) -> list[Violation]:
    config = body.get("toolConfig")
    forced = config.get("toolChoice") if isinstance(config, dict) else None
    forces = isinstance(forced, dict) and ("any" in forced or "tool" in forced)
    return request_settings.violations(body, cap, thinking, prefill, _kind, forces)


PROVIDER = Provider("bedrock", "anthropic.claude-opus-4-8", ROWS, render, validate,
                    render_tools, tool_violations, choices=("auto", "any", "required"),
                    needs_definitions=needs_definitions,
                    settings_violations=settings_violations,
                    model_family=lambda model: _REGION.sub("", model))
