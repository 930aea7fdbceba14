"""What every importer shares: wrapping converted messages and non-model lines as records.

A converted message is stored as a pi `message` entry whose `raw` field keeps the source
object(s), so the model sees only the native message and nothing of the source is lost.
A source line that never reaches the model becomes a context row keeping the whole line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
from typing import Any

import msgspec

from sessionctx import decoding
from sessionctx.changes import Source
from sessionctx.messages import PDF
from sessionctx.records import (
    DEFAULT_MAX_LINE_BYTES,
    INVALID,
    NUL_LINE,
    Problem,
    Progress,
    ReadResult,
    Record,
    document_too_large,
    make_record,
)

Obj = dict[str, Any]


def message_record(message: Obj, source: Source, raw: Any, fmt: str) -> Record:
    return make_record({"type": "message", "message": message, "importedFrom": fmt,
                        "raw": raw}, source)


def context_record(raw: Any, source: Source, fmt: str, note: str) -> Record:
    return make_record({"kind": "context", "importedFrom": fmt, "note": note, "raw": raw},
                       source)


def checkpoint_record(*, fmt: str, at: str, summary: str, messages: list[Obj],
                      tokens_before: int, source: Source, raw: Any,
                      tokens_after: int | None = None, base_seq: int = 0, first_kept: int = 0
                      ) -> Record:
    """A full checkpoint equivalent to a source tool's compaction. `tokens_before` is 0 where
    the source did not record it (a figure 0 is shown as unknown); the tokens after, where the
    source did not record them, are what its messages give, estimated as a checkpoint sessionctx
    writes records them, never a made-up 0."""
    if not tokens_after:
        tokens_after = checkpoint_tokens(messages)
    return make_record({
        "type": "compaction", "at": at, "baseSeq": base_seq, "plannerVersion": 0,
        "summaryModelRef": fmt, "qualityAudit": "imported", "summary": summary,
        "messages": messages, "firstKeptIndex": first_kept,
        "tokensBefore": tokens_before, "tokensAfter": tokens_after,
        "importedFrom": fmt, "raw": raw}, source)


def checkpoint_tokens(messages: list[Obj]) -> int:
    """The estimated tokens a checkpoint's messages give the model (imported only for a
    session that holds a compaction: a plain build loads nothing of compaction/)."""
    from sessionctx.compaction.tokens import total

    return total(messages)


def is_in(value: Any, names: Collection[str]) -> bool:
    """`value in names` for a value read from a file, which may be a list or an object."""
    return isinstance(value, str) and value in names


def as_list(value: Any) -> list[Any]:
    """A list field as a list: a string is one text part, any other non-list nothing."""
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    return []


def text_block(text: str) -> Obj:
    return {"type": "text", "text": text}


def _data_url(url: Any) -> tuple[str, str] | None:
    """The media type and base64 data of a `data:` URL, or None for anything else."""
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        return None
    head, data = url[5:].split(";base64,", 1)
    return head, data


def data_url_image(url: Any) -> Obj | None:
    """A native image block from a `data:` URL, or None for anything else."""
    parsed = _data_url(url)
    if parsed is None:
        return None
    return {"type": "image", "data": parsed[1], "mimeType": parsed[0] or "image/png"}


def data_url_file(url: Any, mime: Any, name: Any = None) -> Obj | None:
    """A file an agent stored as a `data:` URL with its media type, as the native block a
    provider takes it as: an image, or a PDF document (with its file name). None for any
    other file, and for one given by path or web address, whose content is not stored."""
    parsed = _data_url(url)
    if parsed is None or not isinstance(mime, str):
        return None
    if mime.startswith("image/"):
        return {"type": "image", "data": parsed[1], "mimeType": mime}
    if mime != PDF or not parsed[1]:
        return None
    block: Obj = {"type": "document", "data": parsed[1], "mimeType": PDF}
    if isinstance(name, str) and name:
        block["name"] = name
    return block


# Fields of a server-run item not repeated in its text: how it is named, and bulky binary or
# opaque results.
_NOT_IN_TEXT = frozenset({"type", "id", "status", "result", "encrypted_content"})


def server_block(item: Obj, lost: list[str]) -> Obj:
    """A tool call the provider's server ran and answered itself (a Responses server item, an
    Anthropic server tool block) as text: its type and id, then what it held, so it reaches
    every provider and never reads as a dangling call. Opaque `encrypted_content` is left out
    at any depth (search results carry it), and a generated image is named in `lost`, as no
    provider takes an image from the model."""
    kind = str(item.get("type", ""))
    fields = {k: _readable(v) for k, v in item.items() if k not in _NOT_IN_TEXT}
    if kind == "image_generation_call" and item.get("result"):
        lost.append(f"the image of {kind} {item.get('id', '')}")
        fields["result"] = "an image"
    head = " ".join(str(x) for x in (kind, item.get("id"), item.get("status")) if x)
    body = json.dumps(fields, ensure_ascii=False) if fields else ""
    return text_block(f"[{head}] {body}".rstrip() + "\n")


def _readable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _readable(v) for k, v in value.items() if k != "encrypted_content"}
    if isinstance(value, list):
        return [_readable(v) for v in value]
    return value


def parse_arguments(arguments: Any) -> Any:
    """Tool-call arguments as an object: JSON text is decoded, anything else kept as it is."""
    if isinstance(arguments, str):
        try:
            value = decoding.parse_text(arguments)
        except decoding.Malformed as exc:
            # text JSON cannot carry stays text: the provider step keeps it recoverably
            return arguments if exc.nonfinite else {"input": arguments}
        return value if isinstance(value, dict) else {"input": value}
    if arguments is None:
        return {}
    return arguments


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def object_lines(raw: bytes) -> dict[int, dict[str, Any]]:
    """Each JSON object line of a JSONL file by its line number, in file order; the lines an
    agent's compaction entry is written against (other lines are left out)."""
    out = {}
    for number, line in enumerate(raw.split(b"\n"), start=1):
        try:
            entry = msgspec.json.decode(line) if line.strip() else None
        except msgspec.DecodeError:
            continue
        if isinstance(entry, dict):
            out[number] = entry
    return out


def jsonl_objects(raw: bytes, path: str | None, result: ReadResult,
                  progress: Progress | None = None) -> Iterable[tuple[int, Obj]]:
    """(line number, object) of every readable line; the others are reported with their line."""
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    done, total = 0, len(body)
    for lineno, line in enumerate(body.split(b"\n"), 1):
        done += len(line) + 1
        if progress is not None and lineno % 4096 == 0:
            progress(min(done, total), total)
        if not line.strip():
            continue
        if len(line) > DEFAULT_MAX_LINE_BYTES:
            result.problems.append(Problem(
                f"line is {len(line) / 1048576:.1f} MiB, over the "
                f"{DEFAULT_MAX_LINE_BYTES / 1048576:.0f} MiB line limit; skipped", path, lineno))
            continue
        try:
            data = decoding.decode(line)
        except decoding.Malformed as exc:
            why = NUL_LINE if b"\x00" in line else exc.reason
            result.problems.append(Problem(why, path, lineno))
            continue
        if not isinstance(data, dict):
            result.problems.append(Problem("expected a JSON object", path, lineno))
            continue
        if decoding.duplicate_keys_possible(line, data):
            keys = decoding.duplicate_keys(line)
            if keys:
                result.problems.append(Problem(decoding.duplicate_problem(keys), path, lineno))
        yield lineno, data
    if progress is not None:
        progress(total, total)


def decode_document(raw: bytes) -> Any:
    """The file as one JSON value; decoding.Malformed when it is not one."""
    return decoding.decode(document_body(raw))


def document_body(raw: bytes) -> bytes:
    """The bytes a file is decoded from as one JSON document: without a byte order mark, and
    within the size limit (decoding.Malformed otherwise)."""
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    if len(body) > DEFAULT_MAX_LINE_BYTES:
        raise decoding.Malformed(document_too_large(len(body)).removeprefix("is "))
    return body


def document_items(raw: bytes, path: str | None, document: Any, fmt: str, expected: str,
                   items_of: Callable[[Any], list[Any] | None]
                   ) -> tuple[Any, list[Any]] | ReadResult:
    """The file's JSON document and its message list (`items_of`), or the answer that the
    file is not one of `fmt`."""
    try:
        doc = document if document is not None else decode_document(raw)
    except decoding.Malformed as exc:
        return not_a_file(path, fmt, expected, exc.reason)
    items = items_of(doc)
    if items is None:
        return not_a_file(path, fmt, expected)
    return doc, items


def not_a_file(path: str | None, fmt: str, expected: str, why: str | None = None,
               hint: str = "") -> ReadResult:
    """The answer when the file named as `fmt` is not one: what was expected, and why not."""
    detail = f" ({why})" if why else ""
    article = "an" if fmt[:1] in "aeiou" else "a"
    return ReadResult(problems=[Problem(
        f"not {article} {fmt} file: expected {expected}{detail}{hint}", path, fatal=True)])


def finish(result: ReadResult, path: str | None, fmt: str) -> ReadResult:
    """Report invalid converted records, and say so when nothing at all was read."""
    for record in result.records:
        if record.kind == INVALID:
            result.problems.append(Problem(f"bad record: {record.problem}", path,
                                           record.source.line))
    if not result.records:
        unreadable = len(result.problems)
        detail = ""
        if unreadable:
            first = result.problems[0]
            where = f"line {first.line}: " if first.line is not None else ""
            detail = (f" ({unreadable} unreadable line(s) or item(s); first: "
                      f"{where}{first.message})")
        result.problems = [Problem(f"holds no {fmt} records{detail}", path, fatal=True)]
    return result
