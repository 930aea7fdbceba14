"""Reading (docs/provider-rules.md §1.2, §1.3, §2, §3, §4, §5): stored messages into turns, the
first pass of the provider step.

The read pass makes the per-block repairs: blank text, blocks with no equivalent, reasoning of
another API or model, and notes what later passes need: where each call and result stands (the
ids pass), images and documents (the limits), turns with reasoning or bound calls (reasoning
replay). With repairs, the results of consecutive messages are read into one user turn, which
placement keeps when they answer the calls of the turn before them in order. With
`repair=False` the blocks are mapped as stored, to show what a naive conversion sends.
"""

from __future__ import annotations

from typing import Any, cast

from sessionctx.changes import ChangeKind
from sessionctx.messages import (
    CALL_BLOCK_TYPES,
    ID_KEYS,
    RESULT_ID_KEYS,
    ImageBlock,
    Message,
    StoredBlock,
    TextBlock,
    first_string,
    is_blank,
)
from sessionctx.providers import documents
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.documents import DOCUMENT_KINDS
from sessionctx.providers.policies.document_limits import ReadDocument
from sessionctx.providers.policies.ids import split_id
from sessionctx.providers.policies.image_limits import ReadImage
from sessionctx.providers.policies.placement import error_in_text
from sessionctx.providers.policies.reasoning import (
    canonical_thinking,
    log_item_removed,
    log_thinking,
    own_reasoning,
    thinking_text,
)
from sessionctx.providers.policies.turns import (
    ITEM_ID,
    RAW,
    RESULT,
    Block,
    Prepared,
    RawBlock,
    ResultBlock,
    Site,
    Turn,
    TurnCall,
    dropped,
    string,
)

EMPTY_TEXT_REMOVED = ChangeKind.EMPTY_TEXT_REMOVED

class Reader:
    """Reads messages into turns, one message after the other.

    With `repair`, each block is repaired on the way. An assistant message from another API or
    model can replay nothing: its reasoning, item ids and thought signatures go as they are
    read. Turns with reasoning of the target model, or with calls bound to it, are noted for
    the reasoning pass, which runs once placement knows which calls survive. Images are always
    copied, so later passes may rewrite them; a call is copied only when reading changes it.
    """

    def __init__(self, prep: Prepared, cap: Capability, repair: bool, model: str,
                 as_text: bool = False) -> None:
        self.prep = prep
        self.cap = cap
        self.repair = repair
        self.model = model
        self.as_text = as_text
        self.blocks: list[Block] = []  # the blocks of the message being read, as they are read
        self.message: Message = {}  # the assistant message being read
        self.foreign: bool | None = None  # whether it is from another API or model; None: unasked
        self.thinking_dropped = self.thinking_converted = 0  # of the assistant message
        # for the ids pass: every call and result, in message order (with repairs)
        self.sites: list[Site] = []
        # for the limits pass: every image and document read
        self.images: list[ReadImage] = []
        self.documents: list[ReadDocument] = []
        # for placement: every result read with no content, and the index of its message
        self.empty: list[tuple[ResultBlock, int]] = []
        self.systems = 0  # system messages read
        # for the reasoning pass: indices of messages holding thinking blocks, of those with
        # item ids or call signatures, and positions of the turns of either
        self.reasoning: set[int] = set()
        self.bound: set[int] = set()
        self.settle: list[int] = []

    def read(self, messages: list[Message]) -> list[Turn]:
        """The turns of `messages`; with repairs, the results of consecutive messages are one
        user turn, and turns with nothing in them are dropped."""
        turns: list[Turn] = []
        group: list[Block] | None = None  # the results of the last turn read, if any
        sites, settle = self.sites, self.settle
        repair = self.repair
        reasoning, bound = self.reasoning, self.bound
        result_of, assistant_of, content_of = self._result, self._assistant, self._content
        for i, m in enumerate(messages):
            role = m.get("role")
            if role == "toolResult" or role == "tool":
                result = result_of(m, i)
                if not repair:
                    turns.append(("user", [result], i))
                    continue
                if group is None:
                    group = [result]
                    turns.append(("user", group, i))
                    sites.append((group, 0, i))
                else:
                    sites.append((group, len(group), i))
                    group.append(result)
                continue
            group = None
            turn: Turn
            if role == "assistant":
                turn = ("assistant", assistant_of(m, i), i)
            elif role == "system":
                self.systems += 1
                turn = ("system", content_of(m.get("content"), i, None), i)
            else:
                turn = ("user", content_of(m.get("content"), i, None), i)
            if repair:
                if not turn[1]:
                    dropped(self.prep, turn)
                    continue
                if i in reasoning or i in bound:
                    settle.append(len(turns))
            turns.append(turn)
        return turns

    def _content(self, content: Any, i: int, result: ResultBlock | None,
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
            self.blocks = blocks
            for item in tool_calls:
                if isinstance(item, dict):
                    function = item.get("function")
                    fn: dict[str, Any] = function if isinstance(function, dict) else {}
                    blocks.append(self._call(item, fn.get("name", item.get("name")),
                                             fn.get("arguments", item.get("arguments")), i))
        return blocks

    def _blocks(self, content: list[Any], i: int, assistant: bool,
                result: ResultBlock | None) -> list[Block]:
        """A new list of canonical blocks; text, the common case, is read inline."""
        out: list[Block] = []
        self.blocks = out
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
                            # a stored text block goes as it is: its type and text are checked
                            out.append(cast("TextBlock", block))
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
            self.prep.log_one((EMPTY_TEXT_REMOVED, "empty or whitespace-only text blocks "
                               "are rejected (text content blocks must be non-empty)", i,
                               None, {"count": blank}))
        return out

    def _other(self, block: StoredBlock, kind: Any, i: int, assistant: bool,
               result: ResultBlock | None) -> Block | None:
        if assistant:
            if kind == "thinking":
                if not self._foreign():
                    self.reasoning.add(i)
                    return canonical_thinking(block)
                # reasoning no target can replay: plain text by option, otherwise dropped
                text = thinking_text(block) if self.as_text else None
                if text is not None:
                    self.thinking_converted += 1
                else:
                    self.thinking_dropped += 1
                return text
            if kind in CALL_BLOCK_TYPES:
                return self._call(block, block.get("name"),
                                  block.get("arguments", block.get("input")), i)
        if kind == "image":
            data, mime = block.get("data"), block.get("mimeType", block.get("mime_type"))
            if isinstance(data, str) and isinstance(mime, str):
                image: ImageBlock = {"type": "image", "data": data, "mimeType": mime}
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
            unread: RawBlock = {"type": RAW, "block": block}
            return unread
        text = block.get("text")
        if isinstance(text, str) and text.strip():
            note: TextBlock = {"type": "text", "text": text}
            return note
        self.prep.log(ChangeKind.UNSUPPORTED_BLOCK, f"block of type {kind!r} has no equivalent in "
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

    def _call(self, block: StoredBlock, name: Any, args: Any, i: int,
              canonical: bool = False) -> TurnCall:
        """The canonical call; the stored block itself when it is `canonical` (a toolCall) and
        reading changes nothing of it. With repairs, its place is noted for the ids pass."""
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
        if self.repair:
            self.sites.append((self.blocks, len(self.blocks), i))
        if canonical and ITEM_ID not in block and "arguments" in block:
            # a stored toolCall goes as it is: its id and name are strings (the id with no
            # item id in it), its signature a string of the model's own, if it has one
            return cast("TurnCall", block)
        call: TurnCall = {"type": "toolCall", "id": call_id, "name": name, "arguments": args}
        self.prep.copied[id(call)] = block
        if item_id is not None:
            call[ITEM_ID] = item_id
        if signature is not None:
            call["thoughtSignature"] = signature
        return call

    def _result(self, message: Message, i: int) -> ResultBlock:
        """The result as stored: its id and name, which the ids step may rewrite."""
        rid = message.get("toolCallId")
        if not isinstance(rid, str) or "|" in rid:
            rid, _ = split_id(first_string(message, RESULT_ID_KEYS))
        name = message["toolName"] if "toolName" in message else message.get("name")
        result: ResultBlock = {"type": RESULT, "id": rid,
                               "name": name if isinstance(name, str) else None,
                               "isError": bool(message.get("isError")), "content": []}
        content = self._content(message.get("content"), i, result)
        if result["isError"] and not self.cap.error_flag and self.repair:
            content = error_in_text(self.prep, self.cap, content, i, rid)
        elif not content:
            self.empty.append((result, i))
        result["content"] = content
        return result
