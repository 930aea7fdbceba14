"""Turns and the block shapes every policy and renderer works on (docs/provider-rules.md §1.2, §2,
§4).

A context is read once into turns: a role (user, assistant or system), a list of blocks and
the index of the message it came from. Blocks keep the native shapes (`text`, `image`,
`thinking`, `toolCall`, and `toolResult` for a result with its own content), so a stored block
or content list that is already canonical is used as it is and only what a repair changes is
copied: the stored messages are never modified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import islice
from operator import le
from typing import Any, Final, Literal, NamedTuple, TypedDict

import msgspec

from sessionctx.changes import NO_RECORD_ORDER, Change, ChangeKind, Source
from sessionctx.messages import (
    CallBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
)

Role = Literal["user", "assistant", "system"]


class Turn(NamedTuple):
    """One message of the request as the policies and renderers see it."""

    role: Role
    blocks: list[Block]  # may be the stored list: replace, never modify in place
    message_index: int | None  # the context message it came from; None for one sessionctx added


# Where the reader read a call or a result, in message order: (the block list of its turn, its
# position in that list, the index of its message). The ids pass and placement walk these, not
# every block of every turn.
Site = tuple["list[Block]", int, int]


# Block types the reader adds to the native ones, and the one reasoning.py `server_items` does.
RESULT = "toolResult"
RAW = "raw"
SERVER_ITEM = "serverItem"
# on a toolCall block: the Responses item id split from its id (messages.py `CallBlock`)
ITEM_ID: Final = "_sessionctx_item_id"


class ResultBlock(TypedDict):
    """A tool result inside a user turn, made by reading.py `Reader._result`."""

    type: Literal["toolResult"]
    id: str | None  # the wire id of the call it answers (its stored id when it answers none)
    name: str | None  # the call's wire name, else the stored toolName
    isError: bool
    content: list[Block]


class RawBlock(TypedDict):
    """A stored block passed through unread, only when the request is built without repairs."""

    type: Literal["raw"]
    block: dict[str, Any]


class ServerItemBlock(TypedDict):
    """A server-run tool call that goes back to the model that ran it as its own Responses
    item (the text block it came from stands for it everywhere else)."""

    type: Literal["serverItem"]
    item: dict[str, Any]


# A block of a turn as the policies pass it along: one of the native shapes of
# sessionctx.messages (TextBlock, ImageBlock, DocumentBlock, ThinkingBlock with every key set,
# CallBlock) or one the reader adds (ResultBlock, RawBlock, ServerItemBlock). A renderer that
# reads a block's keys narrows it to `TurnBlock` (`typed`) so that mypy checks those keys.
Block = dict[str, Any]
TurnBlock = (TextBlock | ImageBlock | DocumentBlock | ThinkingBlock | CallBlock | ResultBlock
             | RawBlock | ServerItemBlock)


# Kinds of change about block shapes and empty turns.


@dataclass(slots=True)
class Prepared:
    turns: list[Turn]
    system: list[str]
    sources: list[Source] | None = None
    changes: list[Change] = field(default_factory=list)
    repaired: bool = True
    # the cache breakpoints the renderer carried into the body, when it counts them (Anthropic)
    cache_marks: int | None = None
    # the messages the turns were read from, and for a block the reader copied, the stored
    # block it copied (by the copy's id): what a change about one block looks its line up by
    messages: list[Message] | None = None
    copied: dict[int, Block] = field(default_factory=dict)
    # `changes.change_order` of each change, taken as it is logged (while its source is at
    # hand), so that `ordered_changes` sorts by plain tuples and reads no change again
    order: list[tuple[int, int]] = field(default_factory=list)

    def log(self, kind: ChangeKind, reason: str, index: int | None = None, *,
            block: Block | None = None, **detail: Any) -> None:
        """A change concerning the message at `index` (None: the request as a whole), and
        within it `block` (a stored block, or the reader's copy of one), so that the change
        names the line that block came from when the message was joined from several."""
        self.log_detail(kind, reason, index, block, detail)

    def log_detail(self, kind: ChangeKind, reason: str, index: int | None,
                   block: Block | None, detail: dict[str, Any]) -> None:
        """`log` with the detail as one dict: the form for a change logged once a call or a
        message, as a call with keywords costs a third more than the change it makes."""
        sources = self.sources
        source = sources[index] if sources is not None and index is not None and \
            index < len(sources) else None
        if source is None:
            self.order.append(NO_RECORD_ORDER)
        else:
            if block is not None and source.block_lines is not None:
                source = source.of_block(self._position(index, block))
            self.order.append(source.order())
        self.changes.append(Change(kind, reason, source, index, detail))

    def ordered_changes(self) -> list[Change]:
        """The changes in the one order of changes (`changes.change_order`: by the record each
        concerns, changes about the request as a whole first), and in the order they were
        logged among changes about the same record: the passes log in message order, each
        after the one before, so the log is a few ordered runs that this merges."""
        keys, changes = self.order, self.changes
        if all(map(le, keys, islice(keys, 1, None))):
            return changes
        return [changes[k] for k in sorted(range(len(keys)), key=keys.__getitem__)]

    def _position(self, index: int | None, block: Block) -> int:
        """Where `block` stands in the content of message `index` (past its end if not)."""
        stored = self.copied.get(id(block), block)
        content = self.messages[index].get("content") if self.messages is not None and \
            index is not None else None
        if isinstance(content, list):
            for i, held in enumerate(content):
                if held is stored:
                    return i
        return len(content) if isinstance(content, list) else 0

    def system_text(self) -> str:
        """The system prompt parts as one text, blank parts left out."""
        return "\n\n".join(s for s in self.system if s.strip())


def string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def has(blocks: list[Block], kind: str) -> bool:
    for b in blocks:  # a loop, not any(): it runs for every turn of a request  # noqa: SIM110
        if b["type"] == kind:
            return True
    return False


def keep(prep: Prepared, out: list[Turn], turn: Turn) -> None:
    """A turn left with no content is dropped."""
    if turn.blocks:
        out.append(turn)
    else:
        dropped(prep, turn)


def dropped(prep: Prepared, turn: Turn) -> None:
    """Logs a turn dropped for having no content, unless it is a system turn."""
    if turn.role != "system":
        prep.log(ChangeKind.EMPTY_TURN_DROPPED, "a message with no content left is rejected",
                 turn.message_index)


def data_url(image: ImageBlock | DocumentBlock) -> str:
    return f"data:{image['mimeType']};base64,{image['data']}"


def json_text(args: Any) -> str:
    """Arguments as the JSON text OpenAI's APIs take; compact, the same for the same input."""
    return args if isinstance(args, str) else msgspec.json.encode(args).decode()


def typed(block: Block) -> TurnBlock:
    """The block as the union of the shapes it may take, for a renderer to narrow by its
    `type` so that mypy checks the keys it reads. A stored block of another type reaches a
    renderer only in its fall-through branch, which sends it as stored (`raw`). It runs for
    every block of a body, so it returns the block itself rather than call `cast`."""
    return block  # type: ignore[return-value]


def raw(block: Mapping[str, Any]) -> dict[str, Any]:
    """What a renderer sends for a block it has no mapping for: a copy of it as stored."""
    inner = block.get("block", block) if block.get("type") == RAW else block
    return dict(inner)
