"""Turns and the block shapes every policy and renderer works on (provider-rules §1.2, §2, §4).

A context is read once into turns: a role (user, assistant or system), a list of blocks and
the index of the message it came from. Blocks keep the native shapes (`text`, `image`,
`thinking`, `toolCall`, and `toolResult` for a result with its own content), so a stored block
or content list that is already canonical is used as it is and only what a repair changes is
copied: the stored messages are never modified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.messages import Message

Block = dict[str, Any]
# (role, blocks, message index): role is user, assistant or system; the index is None only for
# a turn sessionctx added. Blocks lists may be the stored ones: replace, never modify in place.
Turn = tuple[str, list[Block], int | None]

# Block types the reader adds to the native ones.
RESULT = "toolResult"  # {"type", "id", "name", "isError", "content"}
RAW = "raw"  # {"type", "block"}: a stored block passed through unread (only without repairs)
ITEM_ID = "_sessionctx_item_id"  # on a toolCall block: the Responses item id split from its id

# Kinds of change about block shapes and empty turns.
EMPTY_TEXT_REMOVED = ChangeKind.EMPTY_TEXT_REMOVED
UNSUPPORTED_BLOCK = ChangeKind.UNSUPPORTED_BLOCK
EMPTY_TURN_DROPPED = ChangeKind.EMPTY_TURN_DROPPED


@dataclass(slots=True)
class Prepared:
    turns: list[Turn]
    system: list[str]
    sources: list[Source] | None = None
    changes: list[Change] = field(default_factory=list)
    repaired: bool = True
    # the messages the turns were read from, and for a block the reader copied, the stored
    # block it copied (by the copy's id): what a change about one block looks its line up by
    messages: list[Message] | None = None
    copied: dict[int, Block] = field(default_factory=dict)

    def log(self, kind: ChangeKind, reason: str, index: int | None = None, *,
            block: Block | None = None, **detail: Any) -> None:
        """A change concerning the message at `index` (None: the request as a whole), and
        within it `block` (a stored block, or the reader's copy of one), so that the change
        names the line that block came from when the message was joined from several."""
        sources = self.sources
        source = sources[index] if sources is not None and index is not None and \
            index < len(sources) else None
        if block is not None and source is not None and source.block_lines is not None:
            source = source.of_block(self._position(index, block))
        self.changes.append(Change(kind, reason, source, index, detail))

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
    return any(b["type"] == kind for b in blocks)


def keep(prep: Prepared, out: list[Turn], turn: Turn) -> None:
    """A turn left with no content is dropped."""
    if turn[1]:
        out.append(turn)
    else:
        dropped(prep, turn)


def dropped(prep: Prepared, turn: Turn) -> None:
    """Logs a turn dropped for having no content, unless it is a system turn."""
    if turn[0] != "system":
        prep.log(EMPTY_TURN_DROPPED, "a message with no content left is rejected", turn[2])


def data_url(image: Block) -> str:
    return f"data:{image['mimeType']};base64,{image['data']}"


def json_text(args: Any) -> str:
    """Arguments as the JSON text OpenAI's APIs take; compact, the same for the same input."""
    return args if isinstance(args, str) else msgspec.json.encode(args).decode()


def raw(block: Block) -> dict[str, Any]:
    """What a renderer sends for a block it has no mapping for: a copy of it as stored."""
    inner = block.get("block", block) if block.get("type") == RAW else block
    return dict(inner)
