"""The policies several providers need, over turns of canonical native blocks.

A context is read once into turns: a role (user, assistant or system), a list of blocks and
the index of the message it came from. Blocks keep the native shapes (`text`, `image`,
`thinking`, `toolCall`, and `toolResult` for a result with its own content), so a stored block
or content list that is already canonical is used as it is and only what a repair changes is
copied: the stored messages are never modified, and a history that needs nothing costs little
more than one walk. The walk makes the per-block repairs (blank text, unsupported blocks, call
arguments, reused and invalid ids, tool names); the structural policies then work on whole
turns (result placement, reasoning replay, images, system messages, roles), and each provider
module only maps turns to its wire format. With `repair=False` the blocks are mapped as stored,
to show what a naive conversion sends.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from sessionctx.changes import Change, Source
from sessionctx.messages import (
    CALL_BLOCK_TYPES,
    ID_KEYS,
    RESULT_ID_KEYS,
    Message,
    first_string,
    is_blank,
)
from sessionctx.providers import images
from sessionctx.providers.capabilities import Capability

Block = dict[str, Any]
# (role, blocks, message index): role is user, assistant or system; the index is None only for
# a turn sessionctx added. Blocks lists may be the stored ones: replace, never modify in place.
Turn = tuple[str, list[Block], int | None]

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
ERROR_AS_TEXT = "tool_error_as_text"
SIGNATURE_CORRUPT = "corrupt_signature_dropped"

RAW_ARGUMENTS_KEY = "_sessionctx_raw_arguments"
EMPTY_OUTPUT = "(no output)"
ERROR_NOTE = "(the tool reported an error)"
CONTINUED = "(continued from earlier context)"
SAFE_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# Block types the walk adds to the native ones.
RESULT = "toolResult"  # {"type", "id", "name", "isError", "content"}
RAW = "raw"  # {"type", "block"}: a stored block passed through unread (only without repairs)
ITEM_ID = "_sessionctx_item_id"  # on a toolCall block: the Responses item id split from its id


@dataclass(slots=True)
class Prepared:
    turns: list[Turn]
    system: list[str]
    sources: list[Source] | None = None
    changes: list[Change] = field(default_factory=list)
    repaired: bool = True

    def log(self, kind: str, reason: str, index: int | None = None, **detail: Any) -> None:
        """A change concerning the message at `index` (None: the request as a whole)."""
        sources = self.sources
        source = sources[index] if sources is not None and index is not None and \
            index < len(sources) else None
        self.changes.append(Change(kind, reason, source, index, detail))

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

    With `repair`, each block is repaired on the way and each result that answers an open call
    is indexed under the id its call goes out with, so placing results needs no search. An
    assistant message from another API or model can replay nothing: its reasoning, item ids and
    thought signatures go as they are read. Turns with reasoning of the target model, or with
    calls bound to it, are noted for the placement pass, which alone knows which calls survive.
    Images are always copied, so later passes may rewrite them.
    """

    def __init__(self, prep: Prepared, cap: Capability, repair: bool, model: str,
                 as_text: bool = False) -> None:
        self.prep = prep
        self.cap = cap
        self.repair = repair
        self.model = model
        self.as_text = as_text
        self.message: Message = {}  # the assistant message being read
        self.foreign: bool | None = None  # whether it is from another API or model; None: unasked
        self.thinking_dropped = self.thinking_converted = 0
        self.id_fits = re.compile(cap.id_pattern).match
        self.id_reason = f"tool ids must match {cap.id_pattern} with at most " \
            f"{cap.id_max_len} characters (or were taken)"
        self.seen: set[str] = set()
        self.renamed: dict[str, int] = {}
        # stored call id: (wire id, wire name) of each call with that id still to be answered
        self.open_calls: dict[str, list[tuple[str, str]]] = {}
        self.used: set[str] = set()
        self.good_names: set[str] = set()
        self.results: dict[str, tuple[int, Block]] = {}  # wire id: (message index, result)
        # every image read, oldest first: the image, its message index, the result it belongs
        # to, and whether an assistant message holds it
        self.images: list[tuple[Block, int, Block | None, bool]] = []
        self.reasoning: set[int] = set()  # indices of turns holding thinking blocks
        self.bound: set[int] = set()  # indices of turns with item ids or call signatures
        self.systems = 0
        self.calls: list[str | None] = []  # wire ids of the calls of the turn being read
        self.regular = True  # every call answered right after its turn, in call order
        self.settle: list[int] = []  # positions of turns whose reasoning is still to decide

    def read(self, messages: list[Message]) -> list[Turn]:
        """The turns of `messages`; with repairs, results that answer the calls of the turn
        before them, in call order, are grouped into one user turn as they are read, and turns
        with nothing in them are dropped."""
        turns: list[Turn] = []
        append = turns.append
        repair = self.repair
        expect: list[str | None] = []  # the wire ids of the last assistant turn's calls
        answered = 0  # how many of them the results read since have answered, in order
        group: list[Block] | None = None
        for i, m in enumerate(messages):
            role = m.get("role")
            if role == "toolResult" or role == "tool":
                result, paired = self._result(m, i)
                if not repair:
                    append(("user", [result], i))
                elif paired and answered < len(expect) and result["id"] == expect[answered]:
                    answered += 1
                    if not result["content"]:
                        mark_empty_output(self.prep, result, i)
                    if group is None:
                        group = [result]
                        append(("user", group, i))
                    else:
                        group.append(result)
                else:
                    self.regular = False
                    group = None
                    append(("user", [result], i))
                continue
            if answered < len(expect):
                self.regular = False
            group = None
            if role == "assistant":
                self.calls = expect = []
                answered = 0
                turn: Turn = ("assistant", self._assistant(m, i), i)
            else:
                expect = []
                if role == "system":
                    self.systems += 1
                turn = ("system" if role == "system" else "user",
                        self._content(m.get("content"), i, None), i)
            if not turn[1] and repair:
                _dropped(self.prep, turn)
                continue
            if i in self.reasoning or i in self.bound:
                self.settle.append(len(turns))
            append(turn)
        if answered < len(expect):
            self.regular = False
        return turns

    def _content(self, content: Any, i: int, result: Block | None) -> list[Block]:
        """User, system or result content; a list of non-blank text blocks is kept as it is."""
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "text":
                    break
                text = block.get("text")
                if not isinstance(text, str) or not text or text.isspace():
                    break
            else:
                return content
        elif isinstance(content, str):
            content = [content]
        else:
            return []
        return self._blocks(content, i, False, result)

    def _assistant(self, message: Message, i: int) -> list[Block]:
        content = message.get("content")
        if isinstance(content, str):
            content = [content]
        self.message, self.foreign = message, None
        blocks = self._blocks(content, i, True, None) if isinstance(content, list) else []
        if self.thinking_dropped or self.thinking_converted:
            log_thinking(self.prep, i, _string(message.get("api")),
                         _string(message.get("model")), self.cap, self.model,
                         self.thinking_dropped, self.thinking_converted)
            self.thinking_dropped = self.thinking_converted = 0
        tool_calls = message.get("tool_calls")
        if isinstance(tool_calls, list):
            for item in tool_calls:
                if isinstance(item, dict):
                    function = item.get("function")
                    fn: dict[str, Any] = function if isinstance(function, dict) else {}
                    blocks.append(self._call(item, fn.get("name", item.get("name")),
                                             fn.get("arguments", item.get("arguments")), i))
        return blocks

    def _blocks(self, content: list[Any], i: int, assistant: bool,
                result: Block | None) -> list[Block]:
        """A new list of canonical blocks; text, the common case, is read inline."""
        out: list[Block] = []
        repair = self.repair
        blank = 0
        for block in content:
            if isinstance(block, dict):
                kind = block.get("type")
                if kind == "text":
                    text = block.get("text")
                    if isinstance(text, str):
                        if repair and (not text or text.isspace()):
                            blank += 1
                        else:
                            out.append(block)
                        continue
                elif kind == "toolCall" and assistant:
                    out.append(self._call(block, block.get("name"), block.get("arguments"), i,
                                          True))
                    continue
                other = self._other(block, kind, i, assistant, result)
                if other is not None:
                    out.append(other)
            elif isinstance(block, str):
                if repair and is_blank(block):
                    blank += 1
                else:
                    out.append({"type": "text", "text": block})
        if blank:
            self.prep.log(EMPTY_TEXT_REMOVED, "empty or whitespace-only text blocks are "
                          "rejected (text content blocks must be non-empty)", i, count=blank)
        return out

    def _other(self, block: Block, kind: Any, i: int, assistant: bool,
               result: Block | None) -> Block | None:
        if assistant and kind in CALL_BLOCK_TYPES:
            return self._call(block, block.get("name"),
                              block.get("arguments", block.get("input")), i)
        if kind == "image":
            data, mime = block.get("data"), block.get("mimeType", block.get("mime_type"))
            if isinstance(data, str) and isinstance(mime, str):
                image = {"type": "image", "data": data, "mimeType": mime}
                self.images.append((image, i, result, assistant))
                return image
        elif assistant and kind == "thinking":
            if self._foreign():
                return self._foreign_thinking(block)
            self.reasoning.add(i)
            return canonical_thinking(block)
        if not self.repair:
            return {"type": RAW, "block": block}
        text = block.get("text")
        if isinstance(text, str) and text.strip():
            return {"type": "text", "text": text}
        self.prep.log(UNSUPPORTED_BLOCK, f"block of type {kind!r} has no equivalent in "
                      "provider requests", i)
        return None

    def _foreign(self) -> bool:
        """Whether the assistant message being read can replay nothing; asked only of messages
        with reasoning, item ids or signatures."""
        if self.foreign is None:
            m = self.message
            self.foreign = self.repair and not own_reasoning(
                _string(m.get("api")), _string(m.get("model")), self.cap, self.model)
        return self.foreign

    def _foreign_thinking(self, block: Block) -> Block | None:
        """Reasoning no target can replay: plain text by option, otherwise dropped."""
        text = block.get("thinking")
        if self.as_text and isinstance(text, str) and text.strip():
            self.thinking_converted += 1
            return {"type": "text", "text": text}
        self.thinking_dropped += 1
        return None

    def _call(self, block: Block, name: Any, args: Any, i: int,
              canonical: bool = False) -> Block:
        """The canonical call; the stored block itself when it is `canonical` (a toolCall) and
        nothing about it changes. With repairs, the id it goes out with is opened for the
        results that follow it."""
        call_id = block.get("id")
        item_id = None
        if not isinstance(call_id, str) or "|" in call_id:
            call_id, item_id = split_id(first_string(block, ID_KEYS))
            canonical = False
            if item_id is not None:
                if self._foreign():
                    log_item_removed(self.prep, i, item_id)
                    item_id = None
                else:
                    self.bound.add(i)
        signature = block.get("thoughtSignature")
        if signature is not None:
            if isinstance(signature, str) and not self._foreign():
                self.bound.add(i)
            else:
                signature = None
                canonical = False
        if not isinstance(name, str):
            name = None
            canonical = False
        wire = call_id
        if self.repair:
            if not isinstance(args, dict):
                args, changed = repair_arguments(args)
                canonical = False
                if changed:
                    self.prep.log(ARGUMENTS_REPAIRED, "call arguments were not a JSON object; "
                                  f"the stored text is kept under {RAW_ARGUMENTS_KEY!r}", i,
                                  id=call_id)
            if name not in self.good_names:
                name = self._name(name, i)
                canonical = canonical and name is block.get("name")
            if call_id is None:
                canonical = False
            else:
                wire = self._open(call_id, name, i)
                canonical = canonical and wire is call_id
            self.calls.append(wire)
        if canonical and ITEM_ID not in block:
            return block
        call: Block = {"type": "toolCall", "id": wire, "name": name, "arguments": args}
        if item_id is not None:
            call[ITEM_ID] = item_id
        if signature is not None:
            call["thoughtSignature"] = signature
        return call

    def _open(self, call_id: str, name: str, i: int) -> str:
        """The id the call goes out with, opened with its name for the results that follow."""
        if call_id in self.seen or call_id in self.used or \
                len(call_id) > self.cap.id_max_len or not self.id_fits(call_id):
            wire = self._wire_id(call_id, i)
        else:
            wire = call_id
            self.seen.add(call_id)
            self.used.add(call_id)
        queue = self.open_calls.get(call_id)
        if queue is None:
            self.open_calls[call_id] = [(wire, name)]
        else:
            queue.append((wire, name))
        return wire

    def _name(self, name: str | None, i: int) -> str:
        if name is not None and TOOL_NAME.match(name):
            self.good_names.add(name)
            return name
        new = tool_name(name)
        self.prep.log(NAME_REWRITTEN, "tool names must match ^[a-zA-Z0-9_-]{1,64}$", i,
                      old=name, new=new)
        return new

    def _wire_id(self, call_id: str, i: int) -> str:
        """The id for a reused call id or one that does not fit the provider."""
        unique = call_id
        if call_id in self.seen:
            n = self.renamed.get(call_id, 1) + 1
            self.renamed[call_id] = n
            unique = f"{call_id}_{n}"
            self.prep.log(DUPLICATE_ID_RENAMED, "tool_use ids must be unique", i,
                          old=call_id, new=unique)
        self.seen.add(call_id)
        wire = id_map_entry(unique, self.id_fits, self.cap.id_max_len, self.used)
        if wire != unique:
            self.prep.log(ID_REWRITTEN, self.id_reason, i, old=unique, new=wire)
        self.used.add(wire)
        return wire

    def _result(self, message: Message, i: int) -> tuple[Block, bool]:
        """The result, and whether it answers an open call: it then goes out with the call's
        id and name (a result stored without a name, or under the name before a rewrite,
        would not match its call where the API matches by name)."""
        rid = message.get("toolCallId")
        if not isinstance(rid, str) or "|" in rid:
            rid, _ = split_id(first_string(message, RESULT_ID_KEYS))
        name = message["toolName"] if "toolName" in message else message.get("name")
        result: Block = {"type": RESULT, "id": rid,
                         "name": name if isinstance(name, str) else None,
                         "isError": bool(message.get("isError")), "content": None}
        content = self._content(message.get("content"), i, result)
        if result["isError"] and not self.cap.error_flag and self.repair:
            content = [{"type": "text", "text": ERROR_NOTE}, *content]
            self.prep.log(ERROR_AS_TEXT, f"{self.cap.provider}/{self.cap.family or 'default'} "
                          "has no field for a failed tool result; its text says so", i,
                          id=rid)
        result["content"] = content
        queue = self.open_calls.get(rid) if self.repair and rid is not None else None
        if not queue:
            return result, False
        wire, result["name"] = queue.pop(0)  # the earliest open call of this id
        result["id"] = wire
        self.results[wire] = (i, result)
        return result, True


def tool_name(name: str | None) -> str:
    """The name a tool goes out with: its own when the providers' pattern allows it; the same
    rewrite serves calls and definitions, so they still match."""
    if name is not None and TOOL_NAME.match(name):
        return name
    return SAFE_CHARS.sub("_", name or "")[:64] or "unknown_tool"


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


def id_map_entry(original: str, fits: Callable[[str], object], max_len: int,
                 used: set[str]) -> str:
    """A deterministic id that `fits` the provider's pattern, is at most `max_len` long and is
    distinct from `used`."""
    if fits(original) and len(original) <= max_len and original not in used:
        return original
    base = SAFE_CHARS.sub("_", original) or "call"
    if len(base) <= max_len and base not in used:
        return base
    digest = hashlib.sha256(original.encode()).hexdigest()[:8]
    candidate = ""
    n = 0
    while not candidate or candidate in used:
        tag = digest if n == 0 else f"{digest}{n}"
        candidate = f"{base[:max_len - len(tag) - 1]}_{tag}"
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
    prep = Prepared([], [system] if system else [], sources)
    reader = _Reader(prep, cap, repair, model, policy.thinking_as_text)
    prep.turns = reader.read(messages)
    if not repair:
        prep.repaired = False
        return prep
    placement = _Placement(prep, reader, messages, cap, model, policy.thinking_as_text)
    prep.turns = placement.settle() if reader.regular else placement.run()
    _images(prep, reader.images, reader.results, cap)
    if reader.systems:
        _systems(prep, cap, policy)
    if policy.merge_roles:
        _merge(prep)
    if policy.first_user and prep.turns and prep.turns[0][0] != "user":
        prep.turns.insert(0, ("user", [{"type": "text", "text": CONTINUED}], None))
        prep.log(FIRST_USER_ADDED, "the provider requires the first message to be a user "
                 "message; a placeholder saying the history continues was put first")
    return prep


def _keep(prep: Prepared, out: list[Turn], turn: Turn) -> None:
    """A turn left with no content is dropped."""
    if turn[1]:
        out.append(turn)
    else:
        _dropped(prep, turn)


def _dropped(prep: Prepared, turn: Turn) -> None:
    """Logs a turn dropped for having no content, unless it is a system turn."""
    if turn[0] != "system":
        prep.log(EMPTY_TURN_DROPPED, "a message with no content left is rejected", turn[2])


def mark_empty_output(prep: Prepared, result: Block, index: int) -> None:
    """An empty tool output is sent as an explicit marker, never as nothing."""
    result["content"] = [{"type": "text", "text": EMPTY_OUTPUT}]
    prep.log(EMPTY_OUTPUT_MARKED, "an empty tool output is sent as an explicit marker", index,
             id=result["id"])


class _Placement:
    """All results of one assistant turn, in call order, right after it in one user turn.

    The reader indexed every result that answers an earlier call: any other result is dropped,
    and so is a call without an indexed result. What reasoning may be replayed is decided once
    the turn's calls are known; turns left with nothing are dropped.
    """

    def __init__(self, prep: Prepared, reader: _Reader, messages: list[Message],
                 cap: Capability, model: str, as_text: bool) -> None:
        self.prep = prep
        self.reader = reader
        self.messages = messages
        self.cap = cap
        self.model = model
        self.as_text = as_text

    def run(self) -> list[Turn]:
        prep = self.prep
        results = self.reader.results
        reasoning, bound = self.reader.reasoning, self.reader.bound
        out: list[Turn] = []
        for turn in prep.turns:
            role, blocks, index = turn
            if role == "assistant":
                placed: list[tuple[int, Block]] = []
                lost = False
                for block in blocks:
                    if block["type"] == "toolCall":
                        found = results.get(block["id"])
                        if found is None:
                            lost = True
                            prep.log(CALL_WITHOUT_RESULT, "every tool call needs its result "
                                     "in the next message; this call has none", index,
                                     id=block["id"])
                        else:
                            placed.append(found)
                if lost:
                    blocks = [b for b in blocks if b["type"] != "toolCall" or b["id"] in results]
                if index in reasoning or index in bound:
                    blocks = self._replay(blocks, index, index in reasoning)
                _keep(prep, out, (role, blocks, index))
                if placed:
                    out.append(self._result_turn(index, placed))
            elif blocks and blocks[0]["type"] == RESULT:
                for result in blocks:
                    found = results.get(result["id"])
                    if found is None or found[1] is not result:
                        prep.log(RESULT_WITHOUT_CALL, "a tool result must answer a call in "
                                 "the previous message", index, id=result["id"])
            else:
                _keep(prep, out, turn)
        return out

    def settle(self) -> list[Turn]:
        """When every result already follows its calls, as the reader grouped them, only the
        turns with reasoning are left to decide."""
        turns = self.prep.turns
        emptied = False
        for position in self.reader.settle:
            role, blocks, index = turns[position]
            blocks = self._replay(blocks, index, index in self.reader.reasoning)
            turns[position] = (role, blocks, index)
            if not blocks:
                _dropped(self.prep, turns[position])
                emptied = True
        return [t for t in turns if t[1]] if emptied else turns

    def _result_turn(self, index: int | None, placed: list[tuple[int, Block]]) -> Turn:
        """The user turn that answers the assistant turn at `index`; logged when the results
        were not already its next messages in call order. It takes the first result's index."""
        prep = self.prep
        start = (index or 0) + 1
        in_place = True
        results = []
        for k, (w, result) in enumerate(placed):
            in_place = in_place and w == start + k
            results.append(result)
            if not result["content"]:
                mark_empty_output(prep, result, w)
        if not in_place:
            prep.log(RESULTS_MOVED, "tool results must come first in the message right after "
                     "their calls, all together", index, ids=[r["id"] for r in results])
        return ("user", results, placed[0][0])

    def _replay(self, blocks: list[Block], index: int | None,
                thinking: bool) -> list[Block]:
        """Reasoning of the target model goes back where it may (the reader already dropped
        any other model's); item ids on calls stand or fall with it, and a corrupted thought
        signature goes nowhere."""
        message = self.messages[index or 0]
        api, model = _string(message.get("api")), _string(message.get("model"))
        if self.cap.base64_signatures:
            self._corrupt_signatures(blocks, index)
        replay = False
        if thinking:
            blocks, replay = self._thinking(blocks, index, api, model)
        if index not in self.reader.bound:
            return blocks
        out: list[Block] = []
        for block in blocks:
            if block["type"] == "toolCall":
                drop_item = not replay and ITEM_ID in block
                drop_signature = "thoughtSignature" in block and \
                    not signature_fits(block["thoughtSignature"], self.cap)
                if drop_item:
                    log_item_removed(self.prep, index, block[ITEM_ID])
                if drop_item or drop_signature:
                    block = dict(block)
                    if drop_item:
                        del block[ITEM_ID]
                    if drop_signature:
                        del block["thoughtSignature"]
            out.append(block)
        return out

    def _corrupt_signatures(self, blocks: list[Block], index: int | None) -> None:
        corrupt = 0
        for block in blocks:
            signature = block.get("thinkingSignature" if block["type"] == "thinking" else
                                  "thoughtSignature")
            if isinstance(signature, str) and signature and \
                    not signature_fits(signature, self.cap):
                corrupt += 1
        if corrupt:
            self.prep.log(SIGNATURE_CORRUPT, "thought signatures that are not valid base64 "
                          "are rejected (Corrupted thought signature); the reasoning or call "
                          "goes without them", index, count=corrupt)

    def _thinking(self, blocks: list[Block], index: int | None, api: str | None,
                  model: str | None) -> tuple[list[Block], bool]:
        """Keeps the leading reasoning the provider can replay; says whether any was kept."""
        kept: list[Block] = []
        dropped = converted = 0
        leading = True
        replay = False
        last = len(blocks) - 1  # the last block that is not reasoning
        while last >= 0 and blocks[last]["type"] == "thinking":
            last -= 1
        for k, block in enumerate(blocks):
            if block["type"] != "thinking":
                leading = False
                kept.append(block)
                continue
            followed = k < last
            if leading and followed and thinking_replayable(block, api, model, self.cap,
                                                            self.model):
                kept.append(block)
                replay = True
            elif self.as_text and block["thinking"].strip():
                kept.append({"type": "text", "text": block["thinking"]})
                converted += 1
                leading = False  # reasoning kept after this text would no longer come first
            else:
                dropped += 1
        log_thinking(self.prep, index, api, model, self.cap, self.model, dropped, converted)
        return kept, replay


def own_reasoning(api: str | None, model: str | None, cap: Capability, target: str) -> bool:
    """Whether a message's reasoning, item ids and signatures may go back to `target`."""
    return api in cap.thinking_apis and model == target


def log_thinking(prep: Prepared, index: int | None, api: str | None, model: str | None,
                 cap: Capability, target: str, dropped: int, converted: int) -> None:
    if dropped:
        prep.log(THINKING_DROPPED, f"reasoning from {api or '?'}/{model or '?'} cannot be "
                 f"replayed to {cap.provider}/{target}", index, count=dropped)
    if converted:
        prep.log(THINKING_AS_TEXT, "reasoning from another model was turned into plain text",
                 index, count=converted)


def log_item_removed(prep: Prepared, index: int | None, item_id: str) -> None:
    prep.log(REASONING_ID_REMOVED, "a function_call item id needs its reasoning item, which is "
             "not replayed; call_id still pairs the result", index, id=item_id)


def canonical_thinking(block: Block) -> Block:
    """A thinking block with its text, its signature (under either stored key) and whether it
    is redacted."""
    return {"type": "thinking", "thinking": _string(block.get("thinking")) or "",
            "thinkingSignature": _string(block.get("thinkingSignature",
                                                   block.get("signature"))),
            "redacted": bool(block.get("redacted"))}


def thinking_replayable(block: Block, api: str | None, model: str | None, cap: Capability,
                        target: str) -> bool:
    """Reasoning goes back only to the API and model that produced it, with its signature."""
    signature = block.get("thinkingSignature")
    if not own_reasoning(api, model, cap, target) or not signature or \
            not signature_fits(signature, cap):
        return False
    if cap.provider == "openai-responses":
        return reasoning_item(signature) is not None
    return True


_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*")


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
        item = json.loads(signature)
    except ValueError:
        return None
    if isinstance(item, dict) and item.get("type") == "reasoning" and \
            isinstance(item.get("id"), str):
        return item
    return None


def _images(prep: Prepared, read: list[tuple[Block, int, Block | None, bool]],
            results: dict[str, tuple[int, Block]], cap: Capability) -> None:
    """Images where the provider takes none become notes; over the count limit the oldest
    images become notes; the rest are checked one by one. The images of results that were
    dropped do not count. Image blocks are the reader's own copies, so they are rewritten in
    place."""
    found: list[tuple[Block, int]] = []
    for image, index, result, assistant in read:
        if assistant and not cap.assistant_images:
            _to_note(image, f"[image omitted: {cap.provider} does not accept images in "
                     "assistant messages]")
            prep.log(IMAGE_OMITTED, "'image' blocks are not permitted within assistant turns",
                     index)
        elif result is None or results.get(result["id"], (0, None))[1] is result:
            found.append((image, index))
    limit = cap.max_images
    over = len(found) - limit if limit is not None and len(found) > limit else 0
    for image, index in found[:over]:
        _to_note(image, f"[image omitted: the request is over {cap.provider}'s limit of "
                 f"{limit} images]")
        prep.log(IMAGE_OVER_LIMIT, f"more than {limit} images per request; the oldest were "
                 "replaced by a note", index)
    kept = len(found) - over
    px = cap.max_image_px
    if cap.many_images is not None and kept > cap.many_images and cap.many_image_px:
        px = cap.many_image_px
    for image, index in found[over:]:
        _check_image(prep, image, index, cap, px)


def _to_note(image: Block, note: str) -> None:
    image.clear()
    image.update({"type": "text", "text": note})


def _check_image(prep: Prepared, image: Block, index: int, cap: Capability,
                 px: int | None) -> None:
    mime = image["mimeType"]
    if mime not in cap.image_types:
        _to_note(image, f"[image omitted: type {mime} is not accepted]")
        prep.log(IMAGE_OMITTED, f"image type not accepted by {cap.provider}", index)
        return
    raw = images.decode(image["data"])
    if raw is None:
        _to_note(image, "[image omitted: the stored data is not valid base64]")
        prep.log(IMAGE_OMITTED, "image data is not valid base64", index)
        return
    if px is None:
        return
    size = images.dimensions(raw)
    if size is None or max(size) <= px:
        return
    smaller = images.downscale(raw, mime, px)
    if smaller is not None:
        image["data"] = base64.b64encode(smaller).decode()
        prep.log(IMAGE_DOWNSCALED, f"image of {size[0]}x{size[1]} px is over the {px} px limit",
                 index, width=size[0], height=size[1], limit=px)
    else:
        _to_note(image, f"[image omitted: {size[0]}x{size[1]} px is over the {px} px limit]")
        prep.log(IMAGE_OMITTED, f"image of {size[0]}x{size[1]} px is over the {px} px limit "
                 "and Pillow is not installed to downscale it", index)


def _has(blocks: list[Block], kind: str) -> bool:
    return any(b["type"] == kind for b in blocks)


def _systems(prep: Prepared, cap: Capability, policy: Policy) -> None:
    """System messages before the conversation join the system prompt; later ones stay where
    the provider allows them and become user messages where it does not."""
    out: list[Turn] = []
    leading = True
    prev: Turn | None = None  # the turn before, as this pass left it
    for turn in prep.turns:
        role, blocks, index = turn
        if role != "system":
            leading = leading and not blocks
            out.append(turn)
        elif leading:
            text = "\n\n".join(b["text"] for b in blocks if b["type"] == "text")
            if text:
                prep.system.append(text)
            prep.log(SYSTEM_HOISTED, "a system message before the conversation goes into the "
                     "system prompt", index)
            turn = ("system", [], index)
        elif policy.system_inline or (cap.mid_system and prev is not None and
                                      prev[0] == "user" and not _has(prev[1], RESULT)):
            turn = ("system", [b for b in blocks if b["type"] == "text"], index)
            if turn[1]:
                out.append(turn)
        else:
            turn = ("user", blocks, index)
            out.append(turn)
            prep.log(SYSTEM_CONVERTED, f"{cap.provider}/{cap.family or 'default'} does not "
                     "accept system messages here; sent as a user message", index)
        prev = turn
    prep.turns = out


def _merge(prep: Prepared) -> None:
    out: list[Turn] = []
    for turn in prep.turns:
        role, blocks, index = turn
        prev = out[-1] if out else None
        if prev is None or prev[0] != role or role == "system" or _has(blocks, RESULT) or \
                _has(prev[1], "toolCall"):
            out.append(turn)
            continue
        thinking = sum(1 for b in blocks if b["type"] == "thinking")
        if thinking and (not prev[1] or prev[1][0]["type"] != "thinking"):
            blocks = [b for b in blocks if b["type"] != "thinking"]
            prep.log(THINKING_DROPPED, "joined to an earlier message, its reasoning would "
                     "not come first", index, count=thinking)
        out[-1] = (role, prev[1] + blocks, prev[2])
        prep.log(TURNS_MERGED, "roles must alternate; consecutive messages of one role "
                 "were joined", index)
    prep.turns = out


def data_url(image: Block) -> str:
    return f"data:{image['mimeType']};base64,{image['data']}"


def json_text(args: Any) -> str:
    """Arguments as the JSON text OpenAI's APIs take; compact, the same for the same input."""
    return args if isinstance(args, str) else msgspec.json.encode(args).decode()


def raw(block: Block) -> dict[str, Any]:
    """What a renderer sends for a block it has no mapping for: a copy of it as stored."""
    inner = block.get("block", block) if block.get("type") == RAW else block
    return dict(inner)
