"""Reading (docs/provider-rules.md §1.2, §1.3, §2, §3, §4, §5: ids, names, arguments): stored
messages into turns in one walk over every block.

The walk makes the per-block repairs: blank text, blocks with no equivalent, call arguments
that are not a JSON object, reused ids and ids or tool names the provider rejects. It also
indexes each result that answers an open call under the id its call goes out with, so placing
results needs no search, and groups results that already follow their calls in call order. With
`repair=False` the blocks are mapped as stored, to show what a naive conversion sends.
"""

from __future__ import annotations

import re
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.messages import (
    CALL_BLOCK_TYPES,
    ID_KEYS,
    RESULT_ID_KEYS,
    Message,
    first_string,
    is_blank,
)
from sessionctx.providers import documents
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.documents import DOCUMENT_KINDS
from sessionctx.providers.policies.ids import (
    RAW_ARGUMENTS_KEY,
    TOOL_NAME,
    id_map_entry,
    repair_arguments,
    rewritten_id,
    split_id,
    tool_name,
)
from sessionctx.providers.policies.image_limits import ReadImage
from sessionctx.providers.policies.placement import Results, error_in_text, mark_empty_output
from sessionctx.providers.policies.reasoning import (
    canonical_thinking,
    log_item_removed,
    log_thinking,
    own_reasoning,
    thinking_text,
)
from sessionctx.providers.policies.turns import (
    EMPTY_TEXT_REMOVED,
    ITEM_ID,
    RAW,
    RESULT,
    UNSUPPORTED_BLOCK,
    Block,
    Prepared,
    Turn,
    dropped,
    string,
)

ARGUMENTS_REPAIRED = ChangeKind.ARGUMENTS_REPAIRED
DUPLICATE_ID_RENAMED = ChangeKind.DUPLICATE_ID_RENAMED
ID_REWRITTEN = ChangeKind.ID_REWRITTEN
NAME_REWRITTEN = ChangeKind.NAME_REWRITTEN

# A turn made without the named tuple's Python constructor: one per message of the context.
_turn = tuple.__new__


class Reader:
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
        self.id_fits = re.compile(cap.id_pattern).fullmatch
        self.id_reason = f"tool ids must match {cap.id_pattern} with at most " \
            f"{cap.id_max_len} characters (or were taken)"
        self.seen: set[str] = set()
        self.renamed: dict[str, int] = {}
        # stored call id: (wire id, wire name) of each call with that id still to be answered
        self.open_calls: dict[str, list[tuple[str, str]]] = {}
        self.used: set[str] = set()
        self.good_names: set[str] = set()
        self.results: Results = {}
        self.images: list[ReadImage] = []
        self.documents: list[ReadImage] = []  # the same, for documents
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
                    append(_turn(Turn, ("user", [result], i)))
                elif paired and answered < len(expect) and result["id"] == expect[answered]:
                    answered += 1
                    if not result["content"]:
                        mark_empty_output(self.prep, result, i)
                    if group is None:
                        group = [result]
                        append(_turn(Turn, ("user", group, i)))
                    else:
                        group.append(result)
                else:
                    self.regular = False
                    group = None
                    append(_turn(Turn, ("user", [result], i)))
                continue
            if answered < len(expect):
                self.regular = False
            group = None
            if role == "assistant":
                self.calls = expect = []
                answered = 0
                turn = _turn(Turn, ("assistant", self._assistant(m, i), i))
            else:
                expect = []
                if role == "system":
                    self.systems += 1
                turn = _turn(Turn, ("system" if role == "system" else "user",
                                    self._content(m.get("content"), i, None), i))
            if not turn.blocks and repair:
                dropped(self.prep, turn)
                continue
            if i in self.reasoning or i in self.bound:
                self.settle.append(len(turns))
            append(turn)
        if answered < len(expect):
            self.regular = False
        return turns

    def _content(self, content: Any, i: int, result: Block | None,
                 assistant: bool = False) -> list[Block]:
        """A message's content; a list of non-blank text blocks is kept as it is."""
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
        return self._blocks(content, i, assistant, result)

    def _assistant(self, message: Message, i: int) -> list[Block]:
        content = message.get("content")
        self.message, self.foreign = message, None
        blocks = self._content(content, i, None, True)
        if self.thinking_dropped or self.thinking_converted:
            log_thinking(self.prep, i, string(message.get("api")),
                         string(message.get("model")), self.cap, self.model,
                         self.thinking_dropped, self.thinking_converted)
            self.thinking_dropped = self.thinking_converted = 0
        tool_calls = message.get("tool_calls")
        if isinstance(tool_calls, list):
            if blocks is content:
                blocks = list(blocks)  # the stored list is never modified
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
        if assistant:
            if kind == "thinking":
                if self._foreign():
                    return self._foreign_thinking(block)
                self.reasoning.add(i)
                return canonical_thinking(block)
            if kind in CALL_BLOCK_TYPES:
                return self._call(block, block.get("name"),
                                  block.get("arguments", block.get("input")), i)
        if kind == "image":
            data, mime = block.get("data"), block.get("mimeType", block.get("mime_type"))
            if isinstance(data, str) and isinstance(mime, str):
                image = {"type": "image", "data": data, "mimeType": mime}
                self.prep.copied[id(image)] = block
                self.images.append((image, i, result, assistant))
                return image
        elif kind in DOCUMENT_KINDS:
            doc = documents.read(block)
            if doc is not None:
                self.prep.copied[id(doc)] = block
                self.documents.append((doc, i, result, assistant))
                return doc
        if not self.repair:
            return {"type": RAW, "block": block}
        text = block.get("text")
        if isinstance(text, str) and text.strip():
            return {"type": "text", "text": text}
        self.prep.log(UNSUPPORTED_BLOCK, f"block of type {kind!r} has no equivalent in "
                      "provider requests", i, block=block)
        return None

    def _foreign(self) -> bool:
        """Whether the assistant message being read can replay nothing; asked only of messages
        with reasoning, item ids or signatures."""
        if self.foreign is None:
            m = self.message
            self.foreign = self.repair and not own_reasoning(
                string(m.get("api")), string(m.get("model")), self.cap, self.model)
        return self.foreign

    def _foreign_thinking(self, block: Block) -> Block | None:
        """Reasoning no target can replay: plain text by option, otherwise dropped."""
        text = thinking_text(block) if self.as_text else None
        if text is not None:
            self.thinking_converted += 1
        else:
            self.thinking_dropped += 1
        return text

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
                    log_item_removed(self.prep, i, item_id, block)
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
                args, why = repair_arguments(args)
                canonical = False
                if why is not None:
                    self.prep.log(ARGUMENTS_REPAIRED, f"call arguments {why}; the stored text "
                                  f"is kept under {RAW_ARGUMENTS_KEY!r}", i, block=block,
                                  id=call_id)
            if name not in self.good_names:
                name = self._name(name, i, block)
                canonical = canonical and name is block.get("name")
            if call_id is None:
                canonical = False
            else:
                wire = self._open(call_id, name, i, block)
                canonical = canonical and wire is call_id
            self.calls.append(wire)
        if canonical and ITEM_ID not in block and "arguments" in block:
            return block
        call: Block = {"type": "toolCall", "id": wire, "name": name, "arguments": args}
        self.prep.copied[id(call)] = block
        if item_id is not None:
            call[ITEM_ID] = item_id
        if signature is not None:
            call["thoughtSignature"] = signature
        return call

    def _open(self, call_id: str, name: str, i: int, block: Block) -> str:
        """The id the call goes out with, opened with its name for the results that follow."""
        if call_id in self.seen:
            wire = self._wire_id(call_id, i, block)
        elif call_id in self.used or len(call_id) > self.cap.id_max_len or \
                not self.id_fits(call_id):
            self.seen.add(call_id)
            wire = self._rewritten(call_id, rewritten_id(call_id, self.cap.id_max_len,
                                                         self.used), i, block)
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

    def _name(self, name: str | None, i: int, block: Block) -> str:
        if name is not None and TOOL_NAME.fullmatch(name):
            self.good_names.add(name)
            return name
        new = tool_name(name)
        self.prep.log(NAME_REWRITTEN, "tool names must match ^[a-zA-Z0-9_-]{1,64}$", i,
                      block=block, old=name, new=new)
        return new

    def _wire_id(self, call_id: str, i: int, block: Block) -> str:
        """The id for a reused call id."""
        n = self.renamed.get(call_id, 1) + 1
        self.renamed[call_id] = n
        unique = f"{call_id}_{n}"
        self.prep.log(DUPLICATE_ID_RENAMED, "tool_use ids must be unique", i,
                      block=block, old=call_id, new=unique)
        return self._rewritten(unique, id_map_entry(unique, self.id_fits, self.cap.id_max_len,
                                                    self.used), i, block)

    def _rewritten(self, unique: str, wire: str, i: int, block: Block) -> str:
        """`wire`, taken for the call `unique` names; the rewrite logged when there is one."""
        if wire != unique:
            self.prep.log(ID_REWRITTEN, self.id_reason, i, block=block, old=unique, new=wire)
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
            content = error_in_text(self.prep, self.cap, content, i, rid)
        result["content"] = content
        queue = self.open_calls.get(rid) if self.repair and rid is not None else None
        if not queue:
            return result, False
        wire, result["name"] = queue.pop(0)  # the earliest open call of this id
        result["id"] = wire
        self.results[wire] = (i, result)
        return result, True
