"""Turns and the block shapes every policy and renderer works on (docs/provider-rules.md §1.2, §2,
§4).

A context is read once into turns: a role (user, assistant or system), a list of blocks and
the index of the message it came from. Blocks keep the native shapes (`text`, `image`,
`thinking`, `toolCall`, and `toolResult` for a result with its own content), so a stored block
or content list that is already canonical is used as it is and only what a repair changes is
copied: the stored messages are never modified.
"""

# No `from __future__ import annotations`: the TypedDicts' required and optional keys are read
# at run time (tests/test_messages_types.py), which string annotations would hide.
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from operator import le
from typing import Any, Final, Literal, NotRequired, TypedDict

import msgspec

from sessionctx.changes import NO_RECORD_ORDER, Change, ChangeKind, Source
from sessionctx.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    StoredBlock,
    TextBlock,
    ThinkingBlock,
)

Role = Literal["user", "assistant", "system"]


# Block types the reader adds to the native ones, and the one reasoning.py `server_items` does.
RESULT: Final = "toolResult"
RAW: Final = "raw"
SERVER_ITEM: Final = "serverItem"
# on a toolCall block: the Responses item id split from its id (`TurnCall`)
ITEM_ID: Final = "_sessionctx_item_id"


class TurnCall(TypedDict):
    """A call of an assistant turn: the stored `toolCall` block itself when reading changes
    nothing of it (messages.py `CallBlock`), else the reader's copy. The ids pass gives every
    call with an id its wire id and name and an object of arguments; before it, and in a
    request built without repairs, they are what was stored: a call stored without an id or a
    name has None (placement drops a repaired call without an id, having no result for it)."""

    type: Literal["toolCall"]
    id: str | None
    name: str | None
    arguments: Any  # a JSON object once the ids pass has run; as stored without repairs
    # Gemini's signature binding the call to its reasoning, as stored (messages.py
    # `CallBlock`); removed from the turn's copy when it cannot be replayed (reasoning.py).
    thoughtSignature: NotRequired[str]
    # The Responses item id that reading.py `Reader._call` splits from a stored
    # '<call_id>|<fc item id>' id (`ITEM_ID`; never stored); read by reasoning.py `Replay`
    # (dropped with its reasoning) and providers/openai_responses.py.
    _sessionctx_item_id: NotRequired[str]
    cache_control: NotRequired[dict[str, Any]]  # as stored (messages.py `CallBlock`)


class ResultBlock(TypedDict):
    """A tool result inside a user turn, made by reading.py `Reader._result`."""

    type: Literal["toolResult"]
    id: str | None  # the wire id of the call it answers (its stored id when it answers none)
    name: str | None  # the call's wire name, else the stored toolName
    isError: bool
    content: "list[Block]"


class RawBlock(TypedDict):
    """A stored block passed through unread, only when the request is built without repairs."""

    type: Literal["raw"]
    block: StoredBlock


class ServerItemBlock(TypedDict):
    """A server-run tool call that goes back to the model that ran it as its own Responses
    item (the text block it came from stands for it everywhere else)."""

    type: Literal["serverItem"]
    item: dict[str, Any]


# A block of a turn as the policies and renderers pass it along: one of the native shapes of
# sessionctx.messages (TextBlock, ImageBlock, DocumentBlock, ThinkingBlock with every key set),
# or one of the turns' own (TurnCall, ResultBlock, RawBlock, ServerItemBlock). Each pass and
# renderer narrows a block by its `type` before reading its keys, so that mypy checks them.
# The stored blocks the reader reads stay `StoredBlock` (decoded JSON, every key kept): only
# reading.py turns one into a `Block`, after checking what its type needs.
Block = (TextBlock | ImageBlock | DocumentBlock | ThinkingBlock | TurnCall | ResultBlock
         | RawBlock | ServerItemBlock)


# One message of the request as the policies and renderers see it: (role, blocks, message
# index). The blocks may be the stored list: replace it, never modify it in place. The message
# index is the context message it came from; None for one sessionctx added. A plain tuple,
# not a named one: a request makes one a message in each of several passes, and a named
# tuple costs five times as much to make.
Turn = tuple[Role, list[Block], int | None]


# A change as a pass logs it (`Prepared.log`): its kind, its reason, the index of the message
# it concerns (None: the request as a whole), the stored block within it it concerns (None:
# the message as a whole) and its detail. The stored block, not a copy: the copy a pass
# logs about may give way to another (a note in an image's place) before the log is read.
Logged = tuple[ChangeKind, str, int | None, Mapping[str, Any] | None, dict[str, Any]]

# Where the reader read a call or a result, in message order: (the block list of its turn, its
# position in that list, the index of its message). The ids pass walks these, not every block
# of every turn.
Site = tuple[list[Block], int, int]


# Kinds of change about block shapes and empty turns.


@dataclass(slots=True)
class Prepared:
    turns: list[Turn]
    system: list[str]
    sources: list[Source] | None = None
    # each change as it was logged; made into `Change`s once, in the one order of changes,
    # by `ordered_changes`
    logged: list[Logged] = field(default_factory=list)
    repaired: bool = True
    # the cache breakpoints the renderer carried into the body, when it counts them (Anthropic)
    cache_marks: int | None = None
    # the messages the turns were read from, and for a block the reader copied, the stored
    # block it copied (by the copy's id): what a change about one block looks its line up by
    messages: list[Message] | None = None
    copied: dict[int, Mapping[str, Any]] = field(default_factory=dict)
    # `log` for a change logged once a call or a message, given as one `Logged` tuple (its
    # block the stored one, looked up in `copied`): the append of `logged` itself, as a
    # method call costs more than the change it logs
    log_one: Callable[[Logged], None] = field(init=False)

    def __post_init__(self) -> None:
        self.log_one = self.logged.append

    def log(self, kind: ChangeKind, reason: str, index: int | None = None, *,
            block: Mapping[str, Any] | None = None, **detail: Any) -> None:
        """A change concerning the message at `index` (None: the request as a whole), and
        within it `block` (a stored block, or the reader's copy of one), so that the change
        names the line that block came from when the message was joined from several."""
        if block is not None:
            block = self.copied.get(id(block), block)
        self.logged.append((kind, reason, index, block, detail))

    @property
    def changes(self) -> list[Change]:
        """The changes in the order they were logged."""
        return self._made()[1]

    def ordered_changes(self) -> list[Change]:
        """The changes in the one order of changes (`changes.change_order`: by the record each
        concerns, changes about the request as a whole first), and in the order they were
        logged among changes about the same record: the passes log in message order, each
        after the one before, so the log is a few ordered runs that a stable sort merges."""
        keys, changes = self._made()
        if all(map(le, keys, islice(keys, 1, None))):
            return changes
        return [changes[k] for k in sorted(range(len(keys)), key=keys.__getitem__)]

    def _made(self) -> tuple[list[tuple[int, int]], list[Change]]:
        """Each change logged, made, and its order (`Source.order`). A message's changes are
        mostly logged one after the other, so its source is looked up once for them."""
        sources = self.sources or []
        keys: list[tuple[int, int]] = []
        changes: list[Change] = []
        at: int | None = -1  # the message of the change before
        source: Source | None = None
        key = NO_RECORD_ORDER
        for kind, reason, index, block, detail in self.logged:
            if index != at:
                at = index
                source = sources[index] if index is not None and index < len(sources) else None
                key = NO_RECORD_ORDER if source is None else source.order()
            if block is not None and source is not None and source.block_lines is not None:
                of_block = source.of_block(self._position(index, block))
                keys.append(of_block.order())
                changes.append(Change(kind, reason, of_block, index, detail))
            else:
                keys.append(key)
                changes.append(Change(kind, reason, source, index, detail))
        return keys, changes

    def _position(self, index: int | None, stored: Mapping[str, Any]) -> int:
        """Where the stored block stands in the content of message `index` (past its end if
        not)."""
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
    if turn[1]:
        out.append(turn)
    else:
        dropped(prep, turn)


def dropped(prep: Prepared, turn: Turn) -> None:
    """Logs a turn dropped for having no content, unless it is a system turn."""
    role, _, index = turn
    if role != "system":
        prep.log(ChangeKind.EMPTY_TURN_DROPPED, "a message with no content left is rejected",
                 index)


def data_url(image: ImageBlock | DocumentBlock) -> str:
    return f"data:{image['mimeType']};base64,{image['data']}"


def json_text(args: Any) -> str:
    """Arguments as the JSON text OpenAI's APIs take; compact, the same for the same input."""
    return args if isinstance(args, str) else msgspec.json.encode(args).decode()


@dataclass(slots=True)
class Notes:
    """The notes a limit puts in place of blocks it cannot send (images, documents), each in
    its block's place: in the content of the result holding it, else in its message's turn.
    Blocks are not changed in place: a block keeps its type."""

    new: dict[int, Block] = field(default_factory=dict)  # the note, by the id of the old block
    results: dict[int, ResultBlock] = field(default_factory=dict)  # holding one, by their id
    messages: set[int] = field(default_factory=set)  # the indices of the other turns holding one

    def add(self, old: Block, index: int, result: ResultBlock | None, note: TextBlock) -> None:
        """`note` to stand in for `old`, read from message `index` (in `result`, if not None)."""
        self.new[id(old)] = note
        if result is not None:
            self.results[id(result)] = result
        else:
            self.messages.add(index)

    def put(self, prep: Prepared) -> None:
        """Each note in its block's place. Results are the reader's own, so a result takes a
        copy of its content; a turn holding a block is found by its message, and a copy of its
        list takes its place (a turn's list may be the stored one). A change about a note
        still names the stored block its old block was read from."""
        for result in self.results.values():
            result["content"] = self._swapped(result["content"], prep)
        if not self.messages:
            return
        turns = prep.turns
        for t, (role, blocks, index) in enumerate(turns):
            if index in self.messages:
                changed = self._swapped(blocks, prep)
                if changed is not blocks:
                    turns[t] = (role, changed, index)

    def _swapped(self, blocks: list[Block], prep: Prepared) -> list[Block]:
        out = blocks
        for k, block in enumerate(blocks):
            note = self.new.get(id(block))
            if note is not None:
                if out is blocks:
                    out = list(blocks)
                out[k] = note
                stored = prep.copied.pop(id(block), None)
                if stored is not None:
                    prep.copied[id(note)] = stored
        return out


def raw(block: Block) -> dict[str, Any]:
    """What a renderer sends for a block it has no mapping for: the stored block of a `raw`
    one, else a copy of the block."""
    return dict(block["block"]) if block["type"] == RAW else dict(block)
