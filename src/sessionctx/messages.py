"""Reading native messages: the one place that knows the tolerated shapes of calls and results.

Messages follow pi's agent messages, but stored histories also carry `tool_use`/`tool_call`
blocks, OpenAI-style `tool_calls` arrays and ids under other keys. Every step that asks "which
calls does this message hold" or "which call does this result answer" asks here.
"""

# No `from __future__ import annotations`: the TypedDicts' required and optional keys are read
# at run time (tests/test_messages_types.py), which string annotations would hide.
from collections.abc import Iterator, Mapping
from typing import Any, Final, Literal, NamedTuple, NotRequired, TypedDict, cast

# A message as a record holds it: decoded JSON of any shape, read tolerantly by the functions
# below. The shapes sessionctx itself reads and writes are the typed ones that follow.
Message = dict[str, Any]
# A block of a message's content as stored: decoded JSON too, so no key is lost on write-back
# (the provider step reads it into its own typed blocks, providers/policies/turns.py `Block`).
StoredBlock = dict[str, Any]


# -- the native shapes ---------------------------------------------------------------------------
# pi's agent messages, which the importers write and the fold, the provider step and the
# renderers read. Each key says who writes it (the readers, the context, the provider reader) and
# who reads it. A stored message may hold keys not named here: they are kept, never read.
# `tests/test_messages_types.py` checks that every key the fixtures' messages carry is named.

class TextBlock(TypedDict):
    type: Literal["text"]
    # every importer; the context's notes. Read by `text_of`, `has_substance`, every renderer.
    text: str
    # formats/openai_responses/items.py: the Responses item a server-run tool call's text stands
    # for, as it was stored. Read by providers/policies/reasoning.py `server_items`, which
    # sends it back as that item to the model that ran it.
    responsesItem: NotRequired[dict[str, Any]]
    # Anthropic's cache breakpoint as the agent stored it (formats/anthropic/read.py
    # `_with_cache`); the Anthropic renderer keeps it (providers/anthropic.py `_blocks`).
    cache_control: NotRequired[dict[str, Any]]


# the TextBlock key that keeps a server-run call's Responses item
RESPONSES_ITEM: Final = "responsesItem"


class ImageBlock(TypedDict):
    type: Literal["image"]
    # importers (data URLs and Anthropic `source` blocks decoded). Read by
    # providers/policies/image_limits.py (which may shrink it) and the renderers;
    # screenshots.py only asks for the type.
    data: str  # base64, no data: prefix
    mimeType: str  # also read under `mime_type` (providers/policies/reading.py)


PDF = "application/pdf"  # the media type of a document sent as data


class DocumentBlock(TypedDict):
    """Written by providers/documents.py `read` from any stored document shape."""

    type: Literal["document"]
    data: NotRequired[str]  # base64 (a PDF); absent for a text document
    text: NotRequired[str]  # a text document's content; then `mimeType` is text/plain
    mimeType: str
    name: NotRequired[str]  # the file name, sent where the API takes one


class ThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str  # the reasoning text; may be empty when only the signature is kept
    # What the model's API needs to accept the reasoning back: Anthropic's signature (read from
    # `signature` too), or for a redacted block its encrypted data; the Codex importer stores
    # the whole Responses reasoning item here. Written by formats/claude_code/read.py and
    # formats/codex/read.py, read by providers/policies/reasoning.py (`not_replayable`,
    # `signature_fits`) and the Anthropic, Bedrock, Gemini and Responses renderers.
    thinkingSignature: NotRequired[str | None]
    # Anthropic `redacted_thinking`: no text, the signature is its data. Written by
    # formats/claude_code/read.py, read by the Anthropic and Bedrock renderers.
    redacted: NotRequired[bool]


class CallBlock(TypedDict):
    type: Literal["toolCall"]  # also read as `tool_use` and `tool_call` (`CALL_BLOCK_TYPES`)
    # The call's id (`ID_KEYS`); pi's Responses calls store '<call_id>|<fc item id>'. Read by
    # `block_call_id`, pairing.py and providers/policies/reading.py (which splits it).
    id: str
    name: str
    arguments: dict[str, Any]  # a JSON object; also read under `input`; text is repaired
    # Gemini's signature binding the call to its reasoning: written by pi, read by
    # providers/policies/reading.py `Reader._call` and reasoning.py `Replay`, sent by
    # providers/gemini.py; removed from the turns' copy when it cannot be replayed.
    thoughtSignature: NotRequired[str]
    # Anthropic's cache breakpoint as the agent stored it (formats/anthropic/read.py
    # `_with_cache`); the Anthropic renderer keeps it (providers/anthropic.py `_blocks`).
    cache_control: NotRequired[dict[str, Any]]


ContentBlock = TextBlock | ImageBlock | DocumentBlock | ThinkingBlock | CallBlock


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[ContentBlock]
    # milliseconds since the epoch, written by pi; carried by context.py onto the user messages
    # it makes of local commands and extension messages; kept, never sent.
    timestamp: NotRequired[int]


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str | list[ContentBlock]


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: str | list[ContentBlock]
    # The API and model that wrote it: providers/policies/reasoning.py `own_reasoning` replays
    # reasoning, item ids and call signatures only to the same ones.
    api: NotRequired[str]
    provider: NotRequired[str]
    model: NotRequired[str]
    usage: NotRequired[dict[str, Any]]  # token counts as the agent kept them; never read
    stopReason: NotRequired[str]  # stop, length, toolUse, error or aborted
    errorMessage: NotRequired[str]
    timestamp: NotRequired[int]
    # tolerated: an OpenAI-style array of calls, read by `calls` and the provider reader
    tool_calls: NotRequired[list[dict[str, Any]]]


class ResultMessage(TypedDict):
    role: Literal["toolResult"]  # also read as `tool` (`RESULT_ROLES`)
    # The call it answers (also read under `tool_call_id`): `result_id`, pairing.py, and
    # providers/policies/reading.py, which sends it with its call's wire id.
    toolCallId: str
    # The tool's name: context.py asks it (when the call's is unknown) whether the result is a
    # browser tool's; the provider reader sends the call's name instead when it has one.
    toolName: str
    content: str | list[ContentBlock]  # text and images
    details: NotRequired[Any]  # the tool's own data for its interface; never sent
    # Written by every importer; sent as the API's error flag, or said in the text where the
    # API has none (providers/policies/placement.py `error_in_text`).
    isError: bool
    timestamp: NotRequired[int]


NativeMessage = UserMessage | SystemMessage | AssistantMessage | ResultMessage


def user_text(text: str) -> Message:
    """A user message of one text block: what sessionctx itself adds (a note, a local command,
    a summary)."""
    message: UserMessage = {"role": "user", "content": [{"type": "text", "text": text}]}
    return cast(Message, message)

MODEL_ROLES = frozenset({"user", "assistant", "toolResult", "tool", "system"})
RESULT_ROLES = frozenset({"toolResult", "tool"})
CALL_BLOCK_TYPES = frozenset({"toolCall", "tool_use", "tool_call"})
ID_KEYS = ("id", "toolCallId", "tool_call_id")
RESULT_ID_KEYS = ("toolCallId", "tool_call_id")


class Call(NamedTuple):
    """One tool call inside an assistant message, wherever the shape put it.

    A named tuple rather than a frozen dataclass: as immutable, and several times cheaper to
    make, which counts when every call of a long session is read.
    """

    id: str | None
    name: str | None
    arguments: Any
    where: tuple[str, int]  # ("content", block index) or ("tool_calls", index)


# A named tuple's own constructor is a Python function around this C one.
_new_call = tuple.__new__


def first_string(obj: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str):
            return value
    return None


def block_call_id(block: Mapping[str, Any]) -> str | None:
    """The id of a content block typed as a call."""
    cid = block.get("id")  # ID_KEYS[0], where nearly every call has its id
    return cid if isinstance(cid, str) else first_string(block, ID_KEYS)


def block_call(block: Mapping[str, Any]) -> tuple[str | None, str | None, Any]:
    """The id, name and arguments of a content block typed as a call.

    The one reading of that shape: `calls` uses it, and so can a walk over a message's
    content that meets call blocks among the others and would not walk it twice.
    """
    name = block.get("name")
    return (block_call_id(block), name if isinstance(name, str) else None,
            block.get("arguments", block.get("input")))


def calls(message: Mapping[str, Any]) -> Iterator[Call]:
    """Every call block of an assistant message, in order."""
    if message.get("role") != "assistant":
        return
    content = message.get("content")
    if isinstance(content, list):
        for i, block in enumerate(content):
            if isinstance(block, dict) and _is_call_type(block.get("type")):
                yield _new_call(Call, (*block_call(block), ("content", i)))
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list):
        for i, item in enumerate(tool_calls):
            if not isinstance(item, dict):
                continue
            function = item.get("function")
            fn = function if isinstance(function, dict) else {}
            name = _str(fn.get("name", item.get("name")))
            args = fn.get("arguments", item.get("arguments"))
            yield _new_call(Call, (first_string(item, ID_KEYS), name, args, ("tool_calls", i)))


def call_ids(message: Mapping[str, Any]) -> list[str]:
    """The ids of an assistant message's calls, in order, those without a string id left out.

    What pairing questions need, read from the same places as `calls` without making a Call
    for each: cheaper when every message of a long session is asked.
    """
    if message.get("role") != "assistant":
        return []
    ids: list[str] = []
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and _is_call_type(block.get("type")):
                cid = block_call_id(block)
                if cid is not None:
                    ids.append(cid)
    if "tool_calls" in message:  # rare: tested by membership, read only when there
        tool_calls = message["tool_calls"]
        if isinstance(tool_calls, list):
            for item in tool_calls:
                if isinstance(item, dict):
                    cid = first_string(item, ID_KEYS)
                    if cid is not None:
                        ids.append(cid)
    return ids


def result_id(message: Mapping[str, Any]) -> str | None:
    """The call id a tool result answers, or None for any other message."""
    role = message.get("role")
    if not isinstance(role, str) or role not in RESULT_ROLES:
        return None
    rid = message.get("toolCallId")  # RESULT_ID_KEYS[0], where nearly every result has it
    return rid if isinstance(rid, str) else first_string(message, RESULT_ID_KEYS)


def is_result(message: Mapping[str, Any]) -> bool:
    role = message.get("role")
    return isinstance(role, str) and role in RESULT_ROLES


def _is_call_type(btype: Any) -> bool:
    """`btype in CALL_BLOCK_TYPES` for a value read from a record, which may be unhashable."""
    return isinstance(btype, str) and btype in CALL_BLOCK_TYPES


def without_calls(message: Message, drop: set[tuple[str, int]]) -> Message:
    """A copy of `message` without the call blocks at the given places; the original is kept."""
    if not drop:
        return message
    out = dict(message)
    content = message.get("content")
    if isinstance(content, list):
        out["content"] = [b for i, b in enumerate(content) if ("content", i) not in drop]
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list):
        kept = [c for i, c in enumerate(tool_calls) if ("tool_calls", i) not in drop]
        if kept:
            out["tool_calls"] = kept
        else:
            out.pop("tool_calls", None)
    return out


def has_substance(message: Mapping[str, Any]) -> bool:
    """False for a message with nothing left to say: no non-blank content and no tool_calls."""
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        return True
    content = message.get("content")
    if isinstance(content, str):
        return not is_blank(content)
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                if block is not None:
                    return True
            elif block.get("type") != "text":
                return True
            else:
                text = block.get("text")
                if isinstance(text, str) and not is_blank(text):
                    return True
    return False


def is_blank(text: str) -> bool:
    """Whether `text.strip()` is empty, without copying a long text to find out."""
    return not text or text.isspace()


def text_of(content: Any) -> str:
    """The plain text of a content value (string or blocks), images and calls left out."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "".join(parts)
    return ""


def image_count(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
