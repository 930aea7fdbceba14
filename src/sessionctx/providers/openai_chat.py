"""OpenAI Chat Completions (docs/provider-rules.md §2): `{"messages"}` with the system prompt
as a leading message, its tool definitions and choice, its validator and its capability row."""

from __future__ import annotations

import re
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.providers import documents, tools
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.image_limits import oversized
from sessionctx.providers.policies.turns import Block, Prepared, data_url, json_text, raw
from sessionctx.providers.provider import Provider
from sessionctx.providers.violations import Violation, arguments_problem, history

# call ids of at most 40 characters, no error field on a result, system and developer messages
# anywhere, no role rule, at most 128 calls per message
ROWS = (Capability("openai-chat", "", id_max_len=40, error_flag=False, system_inline=True,
                   merge_roles=False, first_user=False, max_tool_calls=128),)


def render(prep: Prepared, cap: Capability) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    system = prep.system_text()
    if system:
        messages.append({"role": "system", "content": system})
    for role, blocks, index in prep.turns:
        if role == "assistant":
            messages.append(_assistant(blocks))
        elif role == "system":
            messages.append({"role": "system", "content": "\n\n".join(
                b["text"] for b in blocks if b["type"] == "text")})
        else:
            _user(blocks, index, prep, messages)
    return {"messages": messages}


def _assistant(blocks: list[Block]) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for b in blocks:
        if b["type"] == "text":
            texts.append(b["text"])
        elif b["type"] == "toolCall":
            calls.append({"id": b["id"], "type": "function",
                          "function": {"name": b["name"], "arguments": json_text(b["arguments"])}})
    msg: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        msg["tool_calls"] = calls
    return msg


def _user(blocks: list[Block], index: int | None, prep: Prepared,
          out: list[dict[str, Any]]) -> None:
    """One `tool` message per result, then the user content; with repairs, a result's images
    move into that user content, where images are allowed."""
    content: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for block in blocks:
        if block["type"] != "toolResult":
            rest.append(_user_part(block))
            continue
        if not prep.repaired:
            out.append({"role": "tool", "tool_call_id": block["id"],
                        "content": [_user_part(b) for b in block["content"]]})
            continue
        texts, pics = documents.result_texts_and_files(block["content"])
        out.append({"role": "tool", "tool_call_id": block["id"],
                    "content": "\n".join(texts) or (f"({len(pics)} image(s) or file(s) "
                                                    "follow)" if pics else "")})
        if pics:
            content.append({"type": "text", "text": f"Attachments from the result of tool "
                                                    f"call {block['id']}:"})
            content.extend(_user_part(b) for b in pics)
            prep.log(ChangeKind.TOOL_IMAGES_MOVED,
                     "Image URLs are only allowed for messages with role "
                     "'user'; the tool's images were put in a following user message", index,
                     id=block["id"])
    content.extend(rest)
    if content:
        out.append({"role": "user", "content": content})


def _user_part(block: Block) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "text", "text": block["text"]}
    if block["type"] == "image":
        return {"type": "image_url", "image_url": {"url": data_url(block)}}
    if block["type"] == "document":  # Chat takes PDFs as file parts; a text document as text
        if "text" in block:
            return {"type": "text", "text": documents.text_part(block)}
        return {"type": "file", "file": {"file_data": data_url(block),
                                         "filename": documents.file_name(block)}}
    if block["type"] == "thinking":
        return {"type": "text", "text": block["thinking"]}
    return raw(block)


def validate(body: dict[str, Any], cap: Capability) -> list[Violation]:
    messages, out = history(body, "messages")
    if messages is None:
        return out
    pattern = re.compile(cap.id_pattern)
    open_ids: list[str] = []
    seen: set[str] = set()
    pics: list[tuple[str, Any]] = []  # each image's path and data URL
    for i, m in enumerate(messages):  # a path is written only for a violation
        role = m.get("role")
        if open_ids and role != "tool":
            out.append(Violation(f"messages[{i}]", "An assistant message with 'tool_calls' must "
                                 "be followed by tool messages responding to each "
                                 "'tool_call_id'. Missing: " + ", ".join(open_ids)))
            open_ids = []
        if role == "tool":
            tid = m.get("tool_call_id")
            if tid not in open_ids:
                out.append(Violation(f"messages[{i}]", "messages with role 'tool' must be a "
                                     "response to a preceeding message with 'tool_calls'"))
            else:
                open_ids.remove(tid)
            _check_content(m.get("content"), i, role, out, pics, allow_empty=False)
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            content = m.get("content")
            if cap.max_tool_calls is not None and len(calls) > cap.max_tool_calls:
                path = f"messages[{i}]"
                out.append(Violation(f"{path}.tool_calls", f"Invalid '{path}.tool_calls': "
                                     "array too long. Expected an array with maximum length "
                                     f"{cap.max_tool_calls}, but got an array with length "
                                     f"{len(calls)} instead."))
            if not calls and not _has_text(content):
                out.append(Violation(f"messages[{i}]", "assistant messages need content or "
                                     "tool_calls"))
            if content is not None:
                _check_content(content, i, role, out, pics, allow_empty=bool(calls))
            for j, c in enumerate(calls):
                tid = c.get("id")
                if not isinstance(tid, str) or len(tid) > cap.id_max_len or \
                        not pattern.fullmatch(tid):
                    out.append(Violation(f"messages[{i}].tool_calls[{j}].id", "string too long "
                                         f"or invalid: expected at most {cap.id_max_len} "
                                         f"characters matching {cap.id_pattern}"))
                elif tid in seen:
                    out.append(Violation(f"messages[{i}].tool_calls[{j}].id", "duplicate "
                                         "tool_call id"))
                else:
                    seen.add(tid)
                    open_ids.append(tid)
                why = arguments_problem(c.get("function", {}).get("arguments"))
                if why is not None:
                    out.append(Violation(f"messages[{i}].tool_calls[{j}].function.arguments",
                                         why))
        elif role in ("user", "system", "developer"):
            _check_content(m.get("content"), i, role, out, pics, allow_empty=False)
        else:
            out.append(Violation(f"messages[{i}].role", f"unknown role {role!r}"))
    if open_ids:
        out.append(Violation("messages", "tool_calls without tool messages: "
                             + ", ".join(open_ids)))
    out.extend(oversized(pics, cap))
    return out


def _has_text(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content) and not content.isspace()  # as strip, without its copy
    return isinstance(content, list) and any(
        isinstance(p, dict) and str(p.get("text", "")).strip() for p in content)


def _check_content(content: Any, i: int, role: Any, out: list[Violation],
                   pics: list[tuple[str, Any]], allow_empty: bool) -> None:
    """The rules of the content of messages[i]; its path is written only for a violation."""
    if isinstance(content, str):
        if not allow_empty and role != "tool" and (not content or content.isspace()):
            out.append(Violation(f"messages[{i}].content", "content must not be empty"))
        return
    path = f"messages[{i}]"
    if not isinstance(content, list) or (not content and not allow_empty):
        out.append(Violation(f"{path}.content", "content must be a string or a non-empty list"))
        return
    for j, p in enumerate(content):
        kind = p.get("type") if isinstance(p, dict) else None
        if kind == "image_url" and role != "user":
            out.append(Violation(f"{path}.content[{j}]", "Image URLs are only allowed for "
                                 f"messages with role 'user', but this message with role "
                                 f"'{role}' contains an image URL."))
        elif kind == "text":
            if not str(p.get("text", "")).strip():
                out.append(Violation(f"{path}.content[{j}]", "empty text part"))
        elif kind == "file":
            if role != "user":
                out.append(Violation(f"{path}.content[{j}]", "file content parts are only "
                                     "allowed in user messages"))
            data = p.get("file", {}).get("file_data") if isinstance(p.get("file"), dict) else None
            if not (isinstance(data, str) and data.startswith("data:application/pdf;base64,")):
                out.append(Violation(f"{path}.content[{j}]", "Chat Completions accepts only PDF "
                                     "files as file content parts"))
        elif kind != "image_url":
            out.append(Violation(f"{path}.content[{j}]", f"unsupported part type {kind!r}"))
        if kind == "image_url" and isinstance(p.get("image_url"), dict):
            pics.append((f"{path}.content[{j}].image_url.url", p["image_url"].get("url")))


# ---------------------------------------------------------------- tools

def render_tools(defined: list[tools.Tool], choice: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": [{"type": "function",
                                      "function": tools.definition(t, "parameters")}
                                     for t in defined]}
    if choice is not None:
        out["tool_choice"] = tools.openai_choice(choice, nested=True)
    return out


def tool_violations(body: dict[str, Any]) -> list[Violation]:
    return tools.checked(body, _found, tools.named_choice(body, nested=True), [])


def _found(entries: list[tuple[str, Any]], out: list[Violation]) -> list[tuple[str, Any, Any]]:
    found = []
    for path, t in tools.objects(entries, out):
        if t.get("type") != "function" or not isinstance(t.get("function"), dict):
            out.append(Violation(path, "a Chat tool is {type: function, function}"))
            continue
        found.append((f"{path}.function", t["function"].get("name"),
                      t["function"].get("parameters")))
    return found


PROVIDER = Provider("openai-chat", "gpt-5.1", ROWS, render, validate, render_tools,
                    tool_violations, maker="OpenAI")
