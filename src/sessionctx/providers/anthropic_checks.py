"""The validator of Anthropic Messages' history rules (docs/provider-rules.md §1), and where a
body's cache breakpoints are, which the validator counts and anthropic.py keeps within the
limit. One walk of the messages gathers what the request-wide rules count."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.ids import TOOL_NAME
from sessionctx.providers.policies.image_limits import oversized
from sessionctx.providers.violations import Violation, history

CACHE: Final = "cache_control"
_THINKING = ("thinking", "redacted_thinking")


def breakpoints(body: dict[str, Any]) -> list[tuple[dict[str, Any], int | None]]:
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
            held = marked_blocks(block) if isinstance(block, dict) else None
            if held:
                found.extend((b, i) for b in held)
    return found


def marked_blocks(block: dict[str, Any]) -> list[dict[str, Any]]:
    """The block if it holds a cache breakpoint, and those of a tool_result's content."""
    if block.get("type") != "tool_result":
        return [block] if CACHE in block else []
    found = [block] if CACHE in block else []
    inner = block.get("content")
    for nested in inner if isinstance(inner, list) else []:
        if isinstance(nested, dict) and CACHE in nested:
            found.append(nested)
    return found


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
    marks: int = 0  # blocks with a cache breakpoint, counted where `breakpoints` finds them


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
    marks = walk.marks + len(breakpoints({"tools": body.get("tools"), "system": system})) + \
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
        if len(at) < 3 and CACHE in b:  # as `marked_blocks` finds them: a result's, not deeper
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
