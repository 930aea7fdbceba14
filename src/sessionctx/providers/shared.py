"""The provider-neutral form of a context and the policies several providers need.

A context is read into turns of neutral parts (text, image, thinking, call, result) in one walk
that also makes the per-block repairs (empty blocks, JSON arguments, duplicate and invalid ids,
tool names); the structural policies then work on whole turns (result placement, thinking replay,
images, system messages, roles), and each provider module only maps turns to its wire format.
With `repair=False` the turns are mapped as stored, to show what a naive conversion sends.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from sessionctx.changes import Change, Source
from sessionctx.messages import CALL_BLOCK_TYPES, Message, first_string
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
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(slots=True)
class Turn:
    """One neutral message: role user, assistant or system, and its parts."""

    role: str
    parts: list[Part]
    index: int | None
    source: Source | None
    api: str | None = None
    model: str | None = None
    thinking: bool = False  # holds reasoning parts
    bound: bool = False  # holds calls with an item id or thought signature


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

def split_id(raw: str | None) -> tuple[str | None, str | None]:
    """pi's Responses convention: '<call_id>|<fc item id>'."""
    if raw is not None and "|" in raw:
        head, _, tail = raw.partition("|")
        if head and tail.startswith("fc"):
            return head, tail
    return raw, None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _Reader:
    """Reads messages into turns in one walk over every block.

    With `repair`, each block is repaired on the way (blank text, unsupported blocks, call
    arguments, reused and invalid ids, tool names) and each result that answers an open call is
    indexed under the id its call goes out with, so placing results needs no search. Without
    it, the blocks are read as stored, to show what a naive conversion sends. Turn `index` is
    the message's position, which is also the turn's position in the list read.
    """

    def __init__(self, prep: Prepared, cap: Capability, repair: bool) -> None:
        self.prep = prep
        self.cap = cap
        self.repair = repair
        self.id_fits = re.compile(cap.id_pattern).match
        self.seen: set[str] = set()
        self.renamed: dict[str, int] = {}
        self.open_calls: dict[str, list[str]] = {}
        self.used: set[str] = set()
        self.good_names: set[str] = set()
        self.results: dict[str, tuple[int, Part]] = {}  # wire id: (turn, result)
        # every image read, with the result it belongs to, oldest first
        self.images: list[tuple[Part, Turn, Part | None]] = []

    def turn(self, message: Message, index: int, source: Source | None) -> Turn:
        role = message.get("role")
        if role == "toolResult" or role == "tool":
            turn = Turn("user", [], index, source)
            turn.parts.append(self._result(message, turn))
            return turn
        api, model = message.get("api"), message.get("model")
        turn = Turn("assistant" if role == "assistant" else "system" if role == "system"
                    else "user", [], index, source,
                    api if isinstance(api, str) else None,
                    model if isinstance(model, str) else None)
        turn.parts = self._blocks(message.get("content"), turn, role == "assistant", None)
        tool_calls = message.get("tool_calls")
        if role == "assistant" and isinstance(tool_calls, list):
            for item in tool_calls:
                if isinstance(item, dict):
                    function = item.get("function")
                    fn: dict[str, Any] = function if isinstance(function, dict) else {}
                    turn.parts.append(self._call(item, fn.get("name", item.get("name")),
                                                 fn.get("arguments", item.get("arguments")),
                                                 turn))
        return turn

    def _blocks(self, content: Any, turn: Turn, assistant: bool,
                result: Part | None) -> list[Part]:
        """The parts of one message's content; text, the common case, is read inline."""
        if isinstance(content, str):
            content = [content]
        elif not isinstance(content, list):
            return []
        parts: list[Part] = []
        repair = self.repair
        blank = 0
        for block in content:
            if isinstance(block, dict):
                kind = block.get("type")
                text = block.get("text") if kind == "text" else None
                if not isinstance(text, str):
                    if assistant and kind in CALL_BLOCK_TYPES:
                        part: Part | None = self._call(
                            block, block.get("name"), block.get("arguments",
                                                                block.get("input")), turn)
                    else:
                        part = self._block(block, kind, turn, assistant, result)
                    if part is not None:
                        parts.append(part)
                    continue
            elif isinstance(block, str):
                text = block
            else:
                continue
            if repair and (not text or text.isspace()):
                blank += 1
            else:
                parts.append({"type": "text", "text": text})
        if blank:
            self.prep.log(EMPTY_TEXT_REMOVED, "empty or whitespace-only text blocks are "
                          "rejected (text content blocks must be non-empty)", turn, count=blank)
        return parts

    def _block(self, block: dict[str, Any], kind: Any, turn: Turn, assistant: bool,
               result: Part | None) -> Part | None:
        if kind == "image":
            data, mime = block.get("data"), block.get("mimeType", block.get("mime_type"))
            if isinstance(data, str) and isinstance(mime, str):
                part = {"type": "image", "data": data, "mime": mime}
                self.images.append((part, turn, result))
                return part
        elif assistant and kind == "thinking":
            turn.thinking = True
            return {"type": "thinking", "text": _string(block.get("thinking")) or "",
                    "signature": _string(block.get("thinkingSignature",
                                                   block.get("signature"))),
                    "redacted": bool(block.get("redacted"))}
        if not self.repair:
            return {"type": "raw", "block": block}
        text = block.get("text")
        if isinstance(text, str) and text.strip():
            return {"type": "text", "text": text}
        self.prep.log(UNSUPPORTED_BLOCK, f"block of type {kind!r} has no equivalent in "
                      "provider requests", turn)
        return None

    def _call(self, block: dict[str, Any], name: Any, args: Any, turn: Turn) -> Part:
        call_id = block.get("id")
        item_id = None
        if not isinstance(call_id, str) or "|" in call_id:
            call_id, item_id = split_id(first_string(block, ("id", "toolCallId",
                                                             "tool_call_id")))
        signature = block.get("thoughtSignature")
        part = {"type": "call", "id": call_id, "item_id": item_id,
                "name": name if isinstance(name, str) else None, "args": args,
                "signature": signature if isinstance(signature, str) else None}
        if item_id or part["signature"]:
            turn.bound = True
        if not self.repair:
            return part
        if not isinstance(args, dict):
            part["args"], changed = repair_arguments(args)
            if changed:
                self.prep.log(ARGUMENTS_REPAIRED, "call arguments were not a JSON object; the "
                              f"stored text is kept under {RAW_ARGUMENTS_KEY!r}", turn,
                              id=call_id)
        if name not in self.good_names:
            self._check_name(part, turn)
        if call_id is not None:
            if call_id in self.used or call_id in self.seen or \
                    not self.id_fits(call_id) or len(call_id) > self.cap.id_max_len:
                wire = self._wire_id(call_id, turn)
            else:
                wire = call_id
                self.seen.add(call_id)
                self.used.add(call_id)
            part["id"] = wire
            queue = self.open_calls.get(call_id)
            if queue is None:
                self.open_calls[call_id] = [wire]
            else:
                queue.append(wire)
        return part

    def _check_name(self, part: Part, turn: Turn) -> None:
        name = part["name"]
        if name is not None and TOOL_NAME.match(name):
            self.good_names.add(name)
            return
        new = SAFE_CHARS.sub("_", name or "")[:64] or "unknown_tool"
        self.prep.log(NAME_REWRITTEN, "tool names must match ^[a-zA-Z0-9_-]{1,64}$", turn,
                      old=name, new=new)
        part["name"] = new

    def _wire_id(self, call_id: str, turn: Turn) -> str:
        """The id for a reused call id or one that does not fit the provider."""
        unique = call_id
        if call_id in self.seen:
            n = self.renamed.get(call_id, 1) + 1
            self.renamed[call_id] = n
            unique = f"{call_id}_{n}"
            self.prep.log(DUPLICATE_ID_RENAMED, "tool_use ids must be unique", turn,
                          old=call_id, new=unique)
        self.seen.add(call_id)
        cap = self.cap
        wire = id_map_entry(unique, cap, self.used)
        if wire != unique:
            self.prep.log(ID_REWRITTEN, f"tool ids must match {cap.id_pattern} with at most "
                          f"{cap.id_max_len} characters (or were taken)", turn,
                          old=unique, new=wire)
        self.used.add(wire)
        return wire

    def _result(self, message: Message, turn: Turn) -> Part:
        rid = message.get("toolCallId")
        if not isinstance(rid, str) or "|" in rid:
            rid, _ = split_id(first_string(message, ("toolCallId", "tool_call_id")))
        name = message.get("toolName", message.get("name"))
        part: Part = {"type": "result", "id": rid,
                      "name": name if isinstance(name, str) else None,
                      "is_error": bool(message.get("isError"))}
        part["content"] = self._blocks(message.get("content"), turn, False, part)
        queue = self.open_calls.get(rid) if self.repair and rid is not None else None
        if queue:  # the earliest open call of this id
            part["id"] = wire = queue.pop(0)
            self.results[wire] = (turn.index or 0, part)
        return part


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


def id_map_entry(original: str, cap: Capability, used: set[str]) -> str:
    """A deterministic id fitting the provider's pattern and length, distinct from `used`."""
    if re.match(cap.id_pattern, original) and len(original) <= cap.id_max_len and \
            original not in used:
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
    prep = Prepared([], [system] if system else [])
    reader = _Reader(prep, cap, repair)
    n = len(sources) if sources is not None else 0
    prep.turns = [reader.turn(m, i, sources[i] if sources is not None and i < n else None)
                  for i, m in enumerate(messages)]
    if not repair:
        prep.repaired = False
        return prep
    _place_results(prep, reader.results, cap, model, policy.thinking_as_text)
    _images(prep, reader.images, reader.results, cap)
    _systems(prep, cap, policy)
    _drop_empty_turns(prep)
    if policy.merge_roles:
        _merge(prep)
    if policy.first_user and prep.turns and prep.turns[0].role != "user":
        prep.turns.insert(0, Turn("user", [{"type": "text", "text": CONTINUED}], None, None))
        prep.log(FIRST_USER_ADDED, "the provider requires the first message to be a user "
                 "message; a placeholder saying the history continues was put first")
    return prep


def _place_results(prep: Prepared, results: dict[str, tuple[int, Part]], cap: Capability,
                   model: str, as_text: bool) -> None:
    """All results of one assistant turn, in call order, right after it in one user turn.

    The reader indexed every result that answers an earlier call: any other result is dropped,
    and so is a call without an indexed result. What reasoning may be replayed is decided once
    the turn's calls are known; turns left with nothing are dropped.
    """
    out: list[Turn] = []
    for t, turn in enumerate(prep.turns):
        parts = turn.parts
        if turn.role == "assistant":
            placed: list[tuple[int, Part]] = []
            lost = False
            for part in parts:
                if part["type"] == "call":
                    found = results.get(part["id"])
                    if found is None:
                        lost = True
                        prep.log(CALL_WITHOUT_RESULT, "every tool call needs its result in "
                                 "the next message; this call has none", turn, id=part["id"])
                    else:
                        placed.append(found)
            if lost:
                turn.parts = [p for p in parts if p["type"] != "call" or p["id"] in results]
            replay = turn.thinking and _thinking(prep, turn, cap, model, as_text)
            if turn.bound:
                _call_replay(prep, turn, cap, model, replay)
            _keep(prep, out, turn)
            if placed:
                out.append(_result_turn(prep, turn, t, placed))
        elif parts and parts[0]["type"] == "result":
            result = parts[0]
            found = results.get(result["id"])
            if found is None or found[1] is not result:
                prep.log(RESULT_WITHOUT_CALL, "a tool result must answer a call in the "
                         "previous message", turn, id=result["id"])
        else:
            _keep(prep, out, turn)
    prep.turns = out


def _keep(prep: Prepared, out: list[Turn], turn: Turn) -> None:
    """A turn left with no content is dropped (and logged unless it is a system turn)."""
    if turn.parts:
        out.append(turn)
    elif turn.role != "system":
        prep.log(EMPTY_TURN_DROPPED, "a message with no content left is rejected", turn)


def _result_turn(prep: Prepared, call_turn: Turn, t: int,
                 placed: list[tuple[int, Part]]) -> Turn:
    """The user turn that answers `call_turn`; logged when the results were not already its
    next messages in call order."""
    turns = prep.turns
    in_place = True
    parts = []
    for k, (w, part) in enumerate(placed):
        in_place = in_place and w == t + 1 + k
        parts.append(part)
        if not part["content"]:
            part["content"] = [{"type": "text", "text": EMPTY_OUTPUT}]
            prep.log(EMPTY_OUTPUT_MARKED, "an empty tool output is sent as an explicit marker",
                     turns[w], id=part["id"])
    if not in_place:
        prep.log(RESULTS_MOVED, "tool results must come first in the message right after "
                 "their calls, all together", call_turn, ids=[p["id"] for p in parts])
    first = turns[placed[0][0]]  # the first result's own turn is not kept: it becomes the group
    first.parts = parts
    return first


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


def _thinking(prep: Prepared, turn: Turn, cap: Capability, model: str, as_text: bool) -> bool:
    """Keeps the leading reasoning the provider can replay; says whether any was kept."""
    kept: list[Part] = []
    dropped = converted = 0
    leading = True
    replay = False
    parts = turn.parts
    for i, part in enumerate(parts):
        if part["type"] != "thinking":
            leading = False
            kept.append(part)
            continue
        followed = any(p["type"] != "thinking" for p in parts[i + 1:])
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
    return replay


def _call_replay(prep: Prepared, turn: Turn, cap: Capability, model: str,
                 replay: bool) -> None:
    """Item ids and thought signatures on calls stand or fall with their model's reasoning."""
    own = turn.api in cap.thinking_apis and turn.model == model
    for part in turn.parts:
        if part["type"] != "call":
            continue
        if not replay and part["item_id"]:
            prep.log(REASONING_ID_REMOVED, "a function_call item id needs its reasoning "
                     "item, which is not replayed; call_id still pairs the result", turn,
                     id=part["item_id"])
            part["item_id"] = None
        if not own:
            part["signature"] = None


def _images(prep: Prepared, read: list[tuple[Part, Turn, Part | None]],
            results: dict[str, tuple[int, Part]], cap: Capability) -> None:
    """Over the count limit the oldest images become notes; the rest are checked one by one.
    The images of results that were dropped do not count."""
    found = [(part, turn) for part, turn, result in read
             if result is None or results.get(result["id"], (0, None))[1] is result]
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
    kept: list[Turn] = []
    for turn in prep.turns:
        _keep(prep, kept, turn)
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
    """Arguments as the JSON text OpenAI's APIs take; compact, the same for the same input."""
    return args if isinstance(args, str) else msgspec.json.encode(args).decode()
