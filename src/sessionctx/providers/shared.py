"""The provider-neutral form of a context and the policies several providers need.

A context is first read into turns of neutral parts (text, image, thinking, call, result), the
policies repair those turns (empty blocks, JSON arguments, duplicate and invalid ids, result
placement, thinking replay, images, roles), and each provider module only maps turns to its wire
format. With `repair=False` the turns are mapped as stored, to show what a naive conversion sends.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from sessionctx.changes import Change, Source
from sessionctx.messages import Message, first_string
from sessionctx.providers import images
from sessionctx.providers.capabilities import Capability

Part = dict[str, Any]

# Kinds of change the provider step writes to the change log.
EMPTY_TEXT_REMOVED = "empty_text_removed"
ARGUMENTS_REPAIRED = "arguments_repaired"
DUPLICATE_ID_RENAMED = "duplicate_call_id_renamed"
ID_REWRITTEN = "tool_id_rewritten"
NAME_REWRITTEN = "tool_name_rewritten"
RESULTS_MOVED = "tool_results_moved"
CALL_WITHOUT_RESULT = "dropped_call_without_result"
RESULT_WITHOUT_CALL = "dropped_result_without_call"
THINKING_DROPPED = "thinking_dropped"
THINKING_AS_TEXT = "thinking_as_text"
REASONING_ID_REMOVED = "reasoning_item_id_removed"
EMPTY_OUTPUT_MARKED = "empty_tool_output_marked"
IMAGE_OVER_LIMIT = "image_over_count_limit"
IMAGE_DOWNSCALED = "image_downscaled"
IMAGE_OMITTED = "image_omitted"
SYSTEM_CONVERTED = "system_message_converted"
SYSTEM_HOISTED = "system_message_hoisted"
TURNS_MERGED = "same_role_turns_merged"
FIRST_USER_ADDED = "first_user_turn_added"
EMPTY_TURN_DROPPED = "empty_turn_dropped"
UNSUPPORTED_BLOCK = "unsupported_block_dropped"
TOOL_IMAGES_MOVED = "tool_result_images_moved"
CALL_SIGNATURE_ADDED = "call_signature_placeholder_added"

RAW_ARGUMENTS_KEY = "_sessionctx_raw_arguments"
EMPTY_OUTPUT = "(no output)"
CONTINUED = "(continued from earlier context)"
SAFE_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(slots=True)
class Turn:
    """One neutral message: role user, assistant or system, and its parts."""

    role: str
    parts: list[Part]
    index: int | None
    source: Source | None
    api: str | None = None
    model: str | None = None


@dataclass(slots=True)
class Prepared:
    turns: list[Turn]
    system: list[str]
    changes: list[Change] = field(default_factory=list)
    repaired: bool = True

    def log(self, kind: str, reason: str, turn: Turn | None = None, **detail: Any) -> None:
        self.changes.append(Change(kind, reason, turn.source if turn else None,
                                   turn.index if turn else None, detail))

    def system_text(self) -> str:
        """The system prompt parts as one text, blank parts left out."""
        return "\n\n".join(s for s in self.system if s.strip())


# ---------------------------------------------------------------- reading into turns

def to_turns(messages: list[Message], sources: list[Source] | None) -> list[Turn]:
    turns = []
    for i, message in enumerate(messages):
        source = sources[i] if sources is not None and i < len(sources) else None
        turns.append(_turn(message, i, source))
    return turns


def _turn(message: Message, index: int, source: Source | None) -> Turn:
    role = message.get("role")
    if role in ("toolResult", "tool"):
        return Turn("user", [_result_part(message)], index, source)
    api = message.get("api") if isinstance(message.get("api"), str) else None
    model = message.get("model") if isinstance(message.get("model"), str) else None
    parts = [p for b in _blocks(message.get("content")) if (p := _part(b)) is not None]
    tool_calls = message.get("tool_calls")
    if role == "assistant" and isinstance(tool_calls, list):
        for item in tool_calls:
            if isinstance(item, dict):
                function = item.get("function")
                fn: dict[str, Any] = function if isinstance(function, dict) else {}
                parts.append(_call_part(item, fn.get("name", item.get("name")),
                                        fn.get("arguments", item.get("arguments"))))
    neutral = role if role in ("assistant", "system") else "user"
    return Turn(neutral, parts, index, source, api, model)


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _part(block: Any) -> Part | None:
    if isinstance(block, str):
        return {"type": "text", "text": block}
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "image":
        data, mime = block.get("data"), block.get("mimeType", block.get("mime_type"))
        if isinstance(data, str) and isinstance(mime, str):
            return {"type": "image", "data": data, "mime": mime}
    if kind == "thinking":
        text = block.get("thinking")
        sig = block.get("thinkingSignature", block.get("signature"))
        return {"type": "thinking", "text": text if isinstance(text, str) else "",
                "signature": sig if isinstance(sig, str) else None,
                "redacted": bool(block.get("redacted"))}
    if kind in ("toolCall", "tool_use", "tool_call"):
        return _call_part(block, block.get("name"), block.get("arguments", block.get("input")))
    return {"type": "raw", "block": block}


def _call_part(block: dict[str, Any], name: Any, args: Any) -> Part:
    raw_id = first_string(block, ("id", "toolCallId", "tool_call_id"))
    call_id, item_id = split_id(raw_id)
    sig = block.get("thoughtSignature")
    return {"type": "call", "id": call_id, "item_id": item_id,
            "name": name if isinstance(name, str) else None, "args": args,
            "signature": sig if isinstance(sig, str) else None}


def split_id(raw: str | None) -> tuple[str | None, str | None]:
    """pi's Responses convention: '<call_id>|<fc item id>'."""
    if raw is not None and "|" in raw:
        head, _, tail = raw.partition("|")
        if head and tail.startswith("fc"):
            return head, tail
    return raw, None


def _result_part(message: Message) -> Part:
    rid, _ = split_id(first_string(message, ("toolCallId", "tool_call_id")))
    content = [p for b in _blocks(message.get("content")) if (p := _part(b)) is not None]
    name = message.get("toolName", message.get("name"))
    return {"type": "result", "id": rid, "name": name if isinstance(name, str) else None,
            "content": content, "is_error": bool(message.get("isError"))}


# ---------------------------------------------------------------- the policies

@dataclass(frozen=True, slots=True)
class Policy:
    """Which structural repairs a provider needs on top of the common ones."""

    merge_roles: bool = True
    first_user: bool = True
    system_inline: bool = False  # mid-conversation system messages are allowed as they are
    thinking_as_text: bool = False


def prepare(messages: list[Message], sources: list[Source] | None, cap: Capability, model: str,
            policy: Policy, system: str | None = None, repair: bool = True) -> Prepared:
    """Turns ready for one provider's renderer, with every change logged."""
    prep = Prepared(to_turns(messages, sources), [system] if system else [])
    if not repair:
        prep.repaired = False
        return prep
    _clean_parts(prep)
    _unique_ids(prep)
    _rewrite_ids(prep, cap)
    _place_results(prep)
    _thinking(prep, cap, model, policy.thinking_as_text)
    _empty_outputs(prep)
    _images(prep, cap)
    _drop_empty_turns(prep)
    _systems(prep, cap, policy)
    _drop_empty_turns(prep)
    if policy.merge_roles:
        _merge(prep)
    if policy.first_user and prep.turns and prep.turns[0].role != "user":
        prep.turns.insert(0, Turn("user", [{"type": "text", "text": CONTINUED}], None, None))
        prep.log(FIRST_USER_ADDED, "the provider requires the first message to be a user "
                 "message; a placeholder saying the history continues was put first")
    return prep


def _clean_parts(prep: Prepared) -> None:
    """One pass for the per-block repairs: unsupported blocks, empty text, call arguments."""
    for turn in prep.turns:
        dirty = False
        empty = 0
        for part in turn.parts:
            kind = part["type"]
            if kind == "text":
                if not part["text"].strip():
                    part["drop"] = dirty = True
                    empty += 1
            elif kind == "call":
                fixed, changed = repair_arguments(part["args"])
                part["args"] = fixed
                if changed:
                    prep.log(ARGUMENTS_REPAIRED, "call arguments were not a JSON object; the "
                             f"stored text is kept under {RAW_ARGUMENTS_KEY!r}", turn,
                             id=part["id"])
            elif kind == "raw":
                dirty = True
                _raw(prep, turn, part)
            elif kind == "result":
                for inner in part["content"]:
                    if inner["type"] == "text" and not inner["text"].strip():
                        inner["drop"] = dirty = True
                        empty += 1
                    elif inner["type"] == "raw":
                        dirty = True
                        _raw(prep, turn, inner)
        if dirty:
            _compact(turn)
        if empty:
            prep.log(EMPTY_TEXT_REMOVED, "empty or whitespace-only text blocks are rejected "
                     "(text content blocks must be non-empty)", turn, count=empty)


def _raw(prep: Prepared, turn: Turn, part: Part) -> None:
    block = part["block"]
    text = block.get("text")
    if isinstance(text, str) and text.strip():
        part.clear()
        part.update({"type": "text", "text": text})
    else:
        part["drop"] = True
        prep.log(UNSUPPORTED_BLOCK, f"block of type {block.get('type')!r} has no equivalent "
                 "in provider requests", turn)


def _all_parts(turn: Turn) -> list[Part]:
    out = list(turn.parts)
    for part in turn.parts:
        if part["type"] == "result":
            out.extend(part["content"])
    return out


def _compact(turn: Turn) -> None:
    turn.parts = [p for p in turn.parts if not p.get("drop")]
    for part in turn.parts:
        if part["type"] == "result":
            part["content"] = [p for p in part["content"] if not p.get("drop")]


def repair_arguments(args: Any) -> tuple[dict[str, Any], bool]:
    """Arguments as a JSON object; anything else is kept under RAW_ARGUMENTS_KEY."""
    if isinstance(args, dict):
        return args, False
    if args is None:
        return {}, True
    if isinstance(args, str):
        if not args.strip():
            return {}, True
        try:
            value = json.loads(args)
        except ValueError:
            return {RAW_ARGUMENTS_KEY: args}, True
        if isinstance(value, dict):
            return value, False
        return {RAW_ARGUMENTS_KEY: args}, True
    return {RAW_ARGUMENTS_KEY: json.dumps(args, ensure_ascii=False)}, True


def _unique_ids(prep: Prepared) -> None:
    """A reused call id gets a suffix; each result answers the earliest open call of its id."""
    seen: dict[str, int] = {}
    open_calls: dict[str, deque[str]] = {}
    for turn in prep.turns:
        for part in turn.parts:
            cid = part.get("id")
            if part["type"] == "call" and cid is not None:
                n = seen.get(cid, 0)
                seen[cid] = n + 1
                new = cid if n == 0 else f"{cid}_{n + 1}"
                if n:
                    prep.log(DUPLICATE_ID_RENAMED, "tool_use ids must be unique", turn,
                             old=cid, new=new)
                part["id"] = new
                open_calls.setdefault(cid, deque()).append(new)
            elif part["type"] == "result" and cid is not None:
                queue = open_calls.get(cid)
                if queue:
                    part["id"] = queue.popleft()


def id_map_entry(original: str, cap: Capability, used: set[str]) -> str:
    """A deterministic id fitting the provider's pattern and length, distinct from `used`."""
    pattern = re.compile(cap.id_pattern)
    if pattern.match(original) and len(original) <= cap.id_max_len and original not in used:
        return original
    base = SAFE_CHARS.sub("_", original) or "call"
    digest = hashlib.sha256(original.encode()).hexdigest()
    candidate = base if len(base) <= cap.id_max_len else ""
    n = 0
    while not candidate or candidate in used:
        tag = digest[:8] if n == 0 else f"{digest[:8]}{n}"
        candidate = f"{base[:cap.id_max_len - len(tag) - 1]}_{tag}"
        n += 1
    return candidate


def _rewrite_ids(prep: Prepared, cap: Capability) -> None:
    mapping: dict[str, str] = {}
    used: set[str] = set()
    name_pattern = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
    for turn in prep.turns:
        for part in turn.parts:
            cid = part.get("id")
            if part["type"] == "call":
                if cid is not None and cid not in mapping:
                    new = id_map_entry(cid, cap, used)
                    mapping[cid] = new
                    used.add(new)
                    if new != cid:
                        prep.log(ID_REWRITTEN, f"tool ids must match {cap.id_pattern} with at "
                                 f"most {cap.id_max_len} characters (or were taken)", turn,
                                 old=cid, new=new)
                name = part["name"]
                if name is None or not name_pattern.match(name):
                    new_name = SAFE_CHARS.sub("_", name or "")[:64] or "unknown_tool"
                    prep.log(NAME_REWRITTEN, "tool names must match ^[a-zA-Z0-9_-]{1,64}$",
                             turn, old=name, new=new_name)
                    part["name"] = new_name
                if cid is not None:
                    part["id"] = mapping[cid]
            elif part["type"] == "result" and cid is not None and cid in mapping:
                part["id"] = mapping[cid]


def _place_results(prep: Prepared) -> None:
    """All results of one assistant turn, in call order, right after it in one user turn."""
    results: dict[str, tuple[int, Part, Turn]] = {}
    for t, turn in enumerate(prep.turns):
        for part in turn.parts:
            if part["type"] == "result" and part["id"] is not None:
                results.setdefault(part["id"], (t, part, turn))
    claimed: set[int] = set()
    out: list[Turn] = []
    for t, turn in enumerate(prep.turns):
        if turn.role == "assistant":
            placed: list[Part] = []
            where: list[int] = []
            kept = []
            for part in turn.parts:
                if part["type"] != "call":
                    kept.append(part)
                    continue
                found = results.get(part["id"]) if part["id"] is not None else None
                if found is None or found[0] <= t or id(found[1]) in claimed:
                    prep.log(CALL_WITHOUT_RESULT, "every tool call needs its result in the "
                             "next message; this call has none", turn, id=part["id"])
                    continue
                claimed.add(id(found[1]))
                kept.append(part)
                placed.append(found[1])
                where.append(found[0])
            turn.parts = kept
            out.append(turn)
            if placed:
                first = prep.turns[where[0]]
                out.append(Turn("user", placed, first.index, first.source))
                if sorted(set(where)) != list(range(t + 1, t + 1 + len(set(where)))) or \
                        any(len(prep.turns[w].parts) > 1 for w in where):
                    prep.log(RESULTS_MOVED, "tool results must come first in the message right "
                             "after their calls, all together", turn, ids=[p["id"] for p in placed])
            continue
        rest = []
        for part in turn.parts:
            if part["type"] != "result":
                rest.append(part)
            elif id(part) not in claimed:
                prep.log(RESULT_WITHOUT_CALL, "a tool result must answer a call in the "
                         "previous message", turn, id=part["id"])
        if rest or not turn.parts:
            turn.parts = rest
            out.append(turn)
    prep.turns = out


def thinking_replayable(part: Part, turn: Turn, cap: Capability, model: str) -> bool:
    """Reasoning goes back only to the API and model that produced it, with its signature."""
    if turn.api not in cap.thinking_apis or turn.model != model or not part.get("signature"):
        return False
    if cap.provider == "openai-responses":
        return reasoning_item(part["signature"]) is not None
    return True


def reasoning_item(signature: str) -> dict[str, Any] | None:
    try:
        item = json.loads(signature)
    except ValueError:
        return None
    if isinstance(item, dict) and item.get("type") == "reasoning" and \
            isinstance(item.get("id"), str):
        return item
    return None


def _thinking(prep: Prepared, cap: Capability, model: str, as_text: bool) -> None:
    for turn in prep.turns:
        if turn.role != "assistant":
            continue
        kept: list[Part] = []
        dropped = converted = 0
        leading = True
        replay = False
        for i, part in enumerate(turn.parts):
            if part["type"] != "thinking":
                leading = False
                kept.append(part)
                continue
            followed = any(p["type"] != "thinking" for p in turn.parts[i + 1:])
            if leading and followed and thinking_replayable(part, turn, cap, model):
                kept.append(part)
                replay = True
            elif as_text and part["text"].strip():
                kept.append({"type": "text", "text": part["text"]})
                converted += 1
            else:
                dropped += 1
        turn.parts = kept
        if dropped:
            prep.log(THINKING_DROPPED, f"reasoning from {turn.api or '?'}/{turn.model or '?'} "
                     f"cannot be replayed to {cap.provider}/{model}", turn, count=dropped)
        if converted:
            prep.log(THINKING_AS_TEXT, "reasoning from another model was turned into plain text",
                     turn, count=converted)
        for part in turn.parts:
            if part["type"] == "call":
                if not replay and part.get("item_id"):
                    prep.log(REASONING_ID_REMOVED, "a function_call item id needs its reasoning "
                             "item, which is not replayed; call_id still pairs the result",
                             turn, id=part["item_id"])
                    part["item_id"] = None
                if turn.api not in cap.thinking_apis or turn.model != model:
                    part["signature"] = None


def _empty_outputs(prep: Prepared) -> None:
    for turn in prep.turns:
        for part in turn.parts:
            if part["type"] == "result" and not part["content"]:
                part["content"] = [{"type": "text", "text": EMPTY_OUTPUT}]
                prep.log(EMPTY_OUTPUT_MARKED, "an empty tool output is sent as an explicit "
                         "marker", turn, id=part["id"])


def _images(prep: Prepared, cap: Capability) -> None:
    found: list[tuple[Part, Turn]] = []
    for turn in prep.turns:
        found.extend((p, turn) for p in _all_parts(turn) if p["type"] == "image")
    limit = cap.max_images
    over = len(found) - limit if limit is not None and len(found) > limit else 0
    for part, turn in found[:over]:
        _to_note(part, f"[image omitted: the request is over {cap.provider}'s limit of "
                 f"{limit} images]")
        prep.log(IMAGE_OVER_LIMIT, f"more than {limit} images per request; the oldest were "
                 "replaced by a note", turn)
    kept = len(found) - over
    px = cap.max_image_px
    if cap.many_images is not None and kept > cap.many_images and cap.many_image_px:
        px = cap.many_image_px
    for part, turn in found[over:]:
        _check_image(prep, part, turn, cap, px)


def _to_note(part: Part, note: str) -> None:
    part.clear()
    part.update({"type": "text", "text": note})


def _check_image(prep: Prepared, part: Part, turn: Turn, cap: Capability,
                 px: int | None) -> None:
    if part["mime"] not in cap.image_types:
        _to_note(part, f"[image omitted: type {part['mime']} is not accepted]")
        prep.log(IMAGE_OMITTED, f"image type not accepted by {cap.provider}", turn)
        return
    raw = images.decode(part["data"])
    if raw is None:
        _to_note(part, "[image omitted: the stored data is not valid base64]")
        prep.log(IMAGE_OMITTED, "image data is not valid base64", turn)
        return
    if px is None:
        return
    size = images.dimensions(raw)
    if size is None or max(size) <= px:
        return
    smaller = images.downscale(raw, part["mime"], px)
    if smaller is not None:
        part["data"] = base64.b64encode(smaller).decode()
        prep.log(IMAGE_DOWNSCALED, f"image of {size[0]}x{size[1]} px is over the {px} px limit",
                 turn, width=size[0], height=size[1], limit=px)
    else:
        _to_note(part, f"[image omitted: {size[0]}x{size[1]} px is over the {px} px limit]")
        prep.log(IMAGE_OMITTED, f"image of {size[0]}x{size[1]} px is over the {px} px limit "
                 "and Pillow is not installed to downscale it", turn)


def _systems(prep: Prepared, cap: Capability, policy: Policy) -> None:
    leading = True
    for i, turn in enumerate(prep.turns):
        if turn.role != "system":
            leading = leading and not turn.parts
            continue
        text = "\n\n".join(p["text"] for p in turn.parts if p["type"] == "text")
        if leading:
            if text:
                prep.system.append(text)
            turn.parts = []
            prep.log(SYSTEM_HOISTED, "a system message before the conversation goes into the "
                     "system prompt", turn)
            continue
        prev = prep.turns[i - 1] if i else None
        after_user = prev is not None and prev.role == "user" and \
            not any(p["type"] == "result" for p in prev.parts)
        if policy.system_inline or (cap.mid_system and after_user):
            turn.parts = [p for p in turn.parts if p["type"] == "text"]
            continue
        turn.role = "user"
        prep.log(SYSTEM_CONVERTED, f"{cap.provider}/{cap.family or 'default'} does not accept "
                 "system messages here; sent as a user message", turn)


def _drop_empty_turns(prep: Prepared) -> None:
    kept = []
    for turn in prep.turns:
        if turn.parts:
            kept.append(turn)
        elif turn.role != "system":
            prep.log(EMPTY_TURN_DROPPED, "a message with no content left is rejected", turn)
    prep.turns = kept


def _merge(prep: Prepared) -> None:
    out: list[Turn] = []
    for turn in prep.turns:
        prev = out[-1] if out else None
        mergeable = prev is not None and prev.role == turn.role and turn.role != "system" and \
            not any(p["type"] == "result" for p in turn.parts) and \
            not any(p["type"] == "call" for p in prev.parts)
        if prev is not None and mergeable:
            thinking = [p for p in turn.parts if p["type"] == "thinking"]
            if thinking and (not prev.parts or prev.parts[0]["type"] != "thinking"):
                turn.parts = [p for p in turn.parts if p["type"] != "thinking"]
                prep.log(THINKING_DROPPED, "joined to an earlier message, its reasoning would "
                         "not come first", turn, count=len(thinking))
            prev.parts = prev.parts + turn.parts
            prep.log(TURNS_MERGED, "roles must alternate; consecutive messages of one role "
                     "were joined", turn)
        else:
            out.append(turn)
    prep.turns = out


def data_url(part: Part) -> str:
    return f"data:{part['mime']};base64,{part['data']}"


def json_text(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
