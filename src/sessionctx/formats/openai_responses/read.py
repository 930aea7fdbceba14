"""OpenAI Responses input-item lists: what OpenAI Agents SDK sessions (`Session.get_items`)
and Responses request logs hold, read as native messages.

Three shapes: a JSON list of items, JSONL with one item a line, and a request object
`{"model", "input": [...], "instructions"?, "tools"?, ...}`. The items are mapped as
`formats/openai_responses/items.py` maps every Responses item, the way the API reads them back as
input: consecutive model items form one assistant turn of the request's model (so reasoning
with its id or encrypted_content can be replayed to that model), calls of every kind pair with
their outputs by `call_id`, and server-run items become text. A request's `instructions` is
its system message, which keeps the request's other fields (tools, settings) under `raw`; a
request without instructions keeps them as a context row. An item
with nothing a model reads (an item reference, a compaction blob) is kept as a context row and
reported, as is any part that does not convert.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sessionctx.changes import Source
from sessionctx.decoding import Malformed
from sessionctx.formats.common import (
    Obj,
    context_record,
    decode_document,
    finish,
    is_in,
    jsonl_objects,
    message_record,
    not_a_file,
)
from sessionctx.formats.openai_responses.items import ITEM_TYPES, OPAQUE_ITEMS, Turns, item_type
from sessionctx.formats.registry import BY_NAME
from sessionctx.records import Problem, Progress, ReadResult

FORMAT = "openai-responses"
EXPECTED = BY_NAME[FORMAT].expected
# Part types only Responses content has: what tells an easy message from a chat message.
_PART_TYPES = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})
_ROLES = frozenset({"user", "assistant", "system", "developer"})
_CHAT_KEYS = ("tool_calls", "tool_call_id", "function_call")  # a chat message, not an item


def items_of(document: Any) -> list[Any] | None:
    """The item list of a document: the list itself, or a request's `input` (a string
    input is one user message)."""
    if isinstance(document, list):
        return document
    if not isinstance(document, dict):
        return None
    items = document.get("input")
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return items if isinstance(items, list) else None


def is_item(obj: Any) -> bool:
    """Whether `obj` is a Responses input item: a typed item, or an easy message."""
    if not isinstance(obj, dict):
        return False
    if "type" in obj:
        return is_in(obj["type"], ITEM_TYPES) and (obj["type"] != "message" or "role" in obj)
    return is_in(obj.get("role"), _ROLES) and "content" in obj and not any(
        key in obj for key in _CHAT_KEYS)


def is_responses_item(obj: Any) -> bool:
    """Whether `obj` can only be a Responses item: a typed item other than a bare message,
    or a message whose content has a Responses part (chat lists and native records have
    neither)."""
    if not is_item(obj):
        return False
    kind = obj.get("type")
    if kind is not None and kind != "message":
        return kind != "compaction" or "encrypted_content" in obj  # native checkpoints too
    content = obj.get("content")
    return "message" not in obj and isinstance(content, list) and any(
        isinstance(p, dict) and is_in(p.get("type"), _PART_TYPES) for p in content)


def is_item_list(items: list[Any], evident: bool = True) -> bool:
    """A list every object of which is an item, one at least only a Responses item. Without
    `evident` (a request's `input`, which its key already tells), items alone suffice: a
    request whose input is plain messages is a Responses request too."""
    dicts = [i for i in items if isinstance(i, dict)]
    return bool(dicts) and all(is_item(i) for i in dicts) and (not evident or any(
        is_responses_item(i) for i in dicts))


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    if document is None and raw.lstrip()[:1] in (b"[", b"{"):
        try:
            document = decode_document(raw)
        except Malformed:
            document = None  # JSONL: a line is an object, the file is not one
    if document is not None and not (isinstance(document, dict) and is_item(document)):
        items = items_of(document)
        if items is None:
            return not_a_file(path, FORMAT, EXPECTED)
        request = document if isinstance(document, dict) else None
        return _read_items(enumerate(items), path, request, ReadResult(), by_line=False)
    result = ReadResult()
    return _read_items(jsonl_objects(raw, path, result, progress), path, None, result,
                       by_line=True)


def _read_items(numbered: Iterable[tuple[int, Any]], path: str | None, request: Obj | None,
                result: ReadResult, by_line: bool) -> ReadResult:
    """Records of the items, each numbered by its line (JSONL) or its index in the list."""
    model = request.get("model") if request is not None else None
    turns = Turns(model if isinstance(model, str) else "")
    if request is not None:
        _request_records(request, path, result)

    def where(n: int, blocks: tuple[int, ...] | None = None) -> Source:
        if by_line:
            return Source(line=n, path=path, block_lines=blocks)
        return Source(index=n, path=path)

    number: dict[int, int] = {}  # id(item) -> its line or index
    emitted = 0

    def flush() -> None:
        nonlocal emitted
        for message, items, block_items in turns.out[emitted:]:
            n = number[id(items[0])]
            blocks = tuple(number[id(i)] for i in block_items) if len(items) > 1 else None
            raw = items[0] if len(items) == 1 else items
            result.records.append(message_record(message, where(n, blocks), raw, FORMAT))
        emitted = len(turns.out)

    for n, item in numbered:
        what = "line" if by_line else "item"
        if not is_item(item):
            result.problems.append(Problem(f"{what} {n}: not a Responses input item", path,
                                           n if by_line else None))
            if isinstance(item, dict):
                turns.close()
                flush()
                result.records.append(context_record(item, where(n), FORMAT, "not an item"))
            continue
        number[id(item)] = n
        lost: list[str] = []
        if not turns.item(item, lost):
            flush()
            kind = item_type(item)
            result.records.append(context_record(item, where(n), FORMAT, f"{kind} item"))
            why = "holds nothing a model reads" if kind in OPAQUE_ITEMS else "is not a turn"
            result.problems.append(Problem(f"{what} {n}: {kind} item kept as a context row, "
                                           f"not sent: it {why}", path, n if by_line else None))
        else:
            flush()
        for part in lost:
            result.problems.append(Problem(f"{what} {n}: {part} could not be imported", path,
                                           n if by_line else None))
    turns.close()
    flush()
    return finish(result, path, FORMAT)


def _request_records(request: Obj, path: str | None, result: ReadResult) -> None:
    """A request's instructions as its system message, keeping the request's other fields
    (tools, settings) beside it; without instructions, those fields as a context row."""
    instructions = request.get("instructions")
    fields = {k: v for k, v in request.items() if k != "input"}
    src = Source(path=path)
    if isinstance(instructions, str) and instructions.strip():
        result.records.append(message_record({"role": "system", "content": instructions}, src,
                                             fields, FORMAT))
    elif fields:
        result.records.append(context_record(fields, src, FORMAT, "request settings"))
