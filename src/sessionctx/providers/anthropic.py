"""Anthropic Messages (docs/provider-rules.md §1): `{"messages", "system"?}`, its tool
definitions and tool choice, its cache breakpoints, the validator for its history rules and
its rows of the capability table."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Final

from sessionctx.changes import ChangeKind
from sessionctx.messages import DocumentBlock
from sessionctx.providers import tools
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies import request_settings
from sessionctx.providers.policies.ids import TOOL_NAME
from sessionctx.providers.policies.image_limits import oversized
from sessionctx.providers.policies.turns import Block, Prepared, raw
from sessionctx.providers.provider import Provider
from sessionctx.providers.violations import Violation, history

CACHE: Final = "cache_control"
_THINKING = ("thinking", "redacted_thinking")
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
    found = _breakpoints(body)
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


def _breakpoints(body: dict[str, Any]) -> list[tuple[dict[str, Any], int | None]]:
    """Every block with cache_control, in prefix order, with its message's position (None for
    tools and system)."""
    found: list[tuple[dict[str, Any], int | None]] = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and CACHE in tool:
            found.append((tool, None))
    system = body.get("system")
    for block in system if isinstance(system, list) else []:
        if isinstance(block, dict) and CACHE in block:
            found.append((block, None))
    messages = body.get("messages")
    for i, m in enumerate(messages if isinstance(messages, list) else []):
        content = m.get("content") if isinstance(m, dict) else None
        for block in content if isinstance(content, list) else []:
            marked = _marked(block) if isinstance(block, dict) else None
            if marked:
                found.extend((b, i) for b in marked)
    return found


def _marked(block: dict[str, Any]) -> list[dict[str, Any]]:
    """The block if it holds a cache breakpoint, and those of a tool_result's content."""
    if block.get("type") != "tool_result":
        return [block] if CACHE in block else []
    found = [block] if CACHE in block else []
    inner = block.get("content")
    for nested in inner if isinstance(inner, list) else []:
        if isinstance(nested, dict) and CACHE in nested:
            found.append(nested)
    return found


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
    marked.extend(_marked(copy))
    return copy


def spelt_out(content: Any) -> Any:
    """A message's content as blocks: the string the API takes for one text block spelt out
    (no block when empty), any other value as it is."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return content


@dataclass(slots=True)
class _Walk:
    """What one walk of a body's blocks gathers for the rules of the request as a whole."""

    cap: Capability
    pattern: re.Pattern[str]
    out: list[Violation]
    seen: set[str] = field(default_factory=set)  # the tool_use ids so far
    pics: list[tuple[str, Any]] = field(default_factory=list)  # each image's path and data
    images: int = 0
    marks: int = 0  # blocks with a cache breakpoint, counted where `_breakpoints` finds them


def validate(body: dict[str, Any], cap: Capability) -> list[Violation]:
    messages, out = history(body, "messages")
    if messages is None:
        return out
    system = body.get("system")
    if system is not None and not (isinstance(system, str) and system.strip()):
        out.append(Violation("system", "system must be non-blank text"))
    walk = _Walk(cap, re.compile(cap.id_pattern), out)
    expect: list[str] = []
    last = len(messages) - 1
    for i, m in enumerate(messages):
        role = m.get("role")
        content = m.get("content")
        if role not in ("user", "assistant") and not (role == "system" and cap.mid_system):
            out.append(Violation(f"messages[{i}].role", f"role {role!r} is not supported on "
                                 "this model"))
        if i == 0 and role != "user":
            out.append(Violation(f"messages[{i}]", "the first message must be a user message"))
        text = None  # the API's shorter spelling: one text block, read as it is (spelt_out)
        if isinstance(content, str):
            text, content = content, []
            kinds = ["text"] if text else []
        elif isinstance(content, list):
            kinds = [b.get("type") for b in content]
        else:
            content, kinds = [], []
        if not kinds and (role != "assistant" or i != last):
            out.append(Violation(f"messages[{i}].content", "messages must have non-empty "
                                 "content except for the optional final assistant message"))
        if role == "system":
            prev = messages[i - 1] if i else None
            if prev is None or prev.get("role") != "user":
                out.append(Violation(f"messages[{i}]", "a system message must follow a user "
                                     "turn"))
        if "tool_result" in kinds:
            results = [b.get("tool_use_id") for b, k in zip(content, kinds, strict=True)
                       if k == "tool_result"]
            leading = 0
            while leading < len(kinds) and kinds[leading] == "tool_result":
                leading += 1
            if expect:
                if role != "user" or leading != len(expect) or (
                        str(results[0]) != expect[0] if leading == 1 else
                        sorted(str(r) for r in results[:leading]) != sorted(expect)):
                    out.append(_unanswered(i, expect))
                expect = []
            else:
                out.append(Violation(f"messages[{i}]", "unexpected tool_use_id found in "
                                     f"tool_result blocks: {', '.join(map(str, results))}"))
            if leading < len(results):
                out.append(Violation(f"messages[{i}]", "tool_result blocks must come first in "
                                     "the content"))
        elif expect:
            out.append(_unanswered(i, expect))
            expect = []
        if "thinking" in kinds or "redacted_thinking" in kinds:
            if kinds[0] not in _THINKING:
                out.append(Violation(f"messages[{i}].content[0]", "If an assistant message "
                                     "contains any thinking blocks, the first block must be "
                                     "thinking"))
            if kinds[-1] in _THINKING:
                out.append(Violation(f"messages[{i}]", "The final block in an assistant message "
                                     "cannot be thinking"))
        if text:
            _check_text(text, (i, 0), out)
        elif content:
            _check_blocks(content, kinds, (i,), role, walk, expect)
    if cap.max_images is not None and walk.images > cap.max_images:
        out.append(Violation("messages", f"{walk.images} images is over the limit of "
                             f"{cap.max_images} per request"))
    out.extend(oversized(walk.pics, cap))
    # the messages' breakpoints were counted in the walk; those of tools and system here
    marks = walk.marks + len(_breakpoints({"tools": body.get("tools"), "system": system})) + \
        (CACHE in body)
    if cap.max_cache_breakpoints is not None and marks > cap.max_cache_breakpoints:
        out.append(Violation("messages", f"A maximum of {cap.max_cache_breakpoints} blocks "
                             f"with cache_control may be provided. Found {marks}."))
    return out


def _check_blocks(blocks: list[Any], kinds: list[Any], at: tuple[int, ...], role: Any,
                  walk: _Walk, expect: list[str]) -> None:
    """The rules of each block (`kinds`: their types) of the message or tool_result at `at`
    (message, block): the ids of its calls added to `expect`, its images and breakpoints
    counted in `walk`; a path is written only for a violation."""
    out = walk.out
    cap = walk.cap
    for j, b in enumerate(blocks):
        kind = kinds[j]
        if kind is None and not isinstance(b, dict):  # within a result: the loop reads it
            out.append(Violation(_path((*at, j)), "a content block must be an object"))
            continue
        if len(at) < 3 and CACHE in b:  # as _marked finds them: a result's, not deeper
            walk.marks += 1
        if kind == "text":
            _check_text(b.get("text"), (*at, j), out)
        elif kind == "image":
            walk.images += 1
            path = _path((*at, j))
            if role == "assistant":
                out.append(Violation(path, "'image' blocks are not permitted within "
                                     "assistant turns"))
            source = b.get("source", {})
            if (media := source.get("media_type")) not in cap.image_types:
                out.append(Violation(path, f"image media_type {media!r} is not accepted"))
            data = source.get("data")
            if cap.max_image_base64 is not None and isinstance(data, str) and \
                    len(data) > cap.max_image_base64:
                out.append(Violation(f"{path}.source.data", f"image exceeds "
                                     f"{cap.max_image_base64} bytes of base64: {len(data)}"))
            walk.pics.append((f"{path}.source.data", data))
        elif kind == "document":
            source = b.get("source")
            found = (source.get("type"), source.get("media_type")) if isinstance(source, dict) \
                else None
            if role == "assistant":
                out.append(Violation(_path((*at, j)), "'document' blocks are not permitted "
                                     "within assistant turns"))
            if found not in (("base64", "application/pdf"), ("text", "text/plain")):
                out.append(Violation(_path((*at, j)), "a document is a base64 application/pdf "
                                     "or a text/plain source"))
        elif kind == "tool_use":
            tid = b.get("id")
            if role != "assistant":
                out.append(Violation(_path((*at, j)), "tool_use blocks belong to assistant "
                                     "messages"))
            if not isinstance(tid, str) or not walk.pattern.fullmatch(tid) or \
                    len(tid) > cap.id_max_len:
                out.append(Violation(_path((*at, j)) + ".id", "tool_use.id: String should match "
                                     f"pattern '{cap.id_pattern}' (at most {cap.id_max_len} "
                                     "characters)"))
            elif tid in walk.seen:
                out.append(Violation(_path((*at, j)) + ".id", "tool_use ids must be unique"))
            if isinstance(tid, str):
                walk.seen.add(tid)
                expect.append(tid)
            if not isinstance(b.get("input"), dict):
                out.append(Violation(_path((*at, j)) + ".input", "input must be a JSON object"))
            name = b.get("name")
            if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
                out.append(Violation(_path((*at, j)) + ".name", "tool name must match "
                                     "^[a-zA-Z0-9_-]{1,64}$"))
        elif kind == "tool_result":
            content = b.get("content")
            if content is not None and not isinstance(content, str | list):
                out.append(Violation(_path((*at, j)) + ".content", "content must be a string or "
                                     "blocks"))
            if isinstance(content, list) and content:
                _check_blocks(content, [x.get("type") if isinstance(x, dict) else None
                                        for x in content], (*at, j), role, walk, [])
        elif kind == "thinking":
            if role != "assistant" or not b.get("signature"):
                out.append(Violation(_path((*at, j)) + ".signature", "thinking.signature: Field "
                                     "required"))
        elif kind == "redacted_thinking":
            if not b.get("data"):
                out.append(Violation(_path((*at, j)) + ".data", "redacted_thinking.data: Field "
                                     "required"))
        else:
            out.append(Violation(_path((*at, j)), f"unsupported block type {json.dumps(kind)}"))


def _check_text(text: Any, at: tuple[int, ...], out: list[Violation]) -> None:
    if not isinstance(text, str) or not text or text.isspace():  # no copy, as strip makes
        out.append(Violation(_path(at), "text content blocks must contain non-whitespace text"))


def _unanswered(i: int, expect: list[str]) -> Violation:
    return Violation(f"messages[{i}]", "tool_use ids were found without tool_result blocks "
                     f"immediately after: {', '.join(expect)}; Did not find {len(expect)} "
                     "tool_result block(s) at the beginning of this message")


def _path(at: tuple[int, ...]) -> str:
    """A block's path in the body: messages[i].content[j], and .content[k] within a result."""
    return f"messages[{at[0]}]" + "".join(f".content[{k}]" for k in at[1:])


# ---------------------------------------------------------------- tools and settings

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
    out: list[Violation] = []
    if needs_definitions(body):
        out.append(tools.undefined_violation("anthropic", "tools", "Requests which include "
                                             "tool_use or tool_result blocks must define "
                                             "tools."))
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
