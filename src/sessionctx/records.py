"""Tolerant reading of stored records, with where each came from; the names every reader
of records uses, gathered from their homes.

Reading is strictly read-only and never stops at the first bad line: every problem is collected
with its file and line, and every good record around it is kept. The record and its kinds are in
`kinds.py`, their validity in `validity.py`, tree branches in `branches.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sessionctx import decoding, limits
from sessionctx.branches import has_tree, id_index, select_branch
from sessionctx.changes import Source
from sessionctx.gcpause import paused_gc
from sessionctx.kinds import (
    CHECKPOINT,
    CONTEXT,
    EXTENSION_MESSAGE,
    EXTENSION_STATE,
    INVALID,
    LOCAL_COMMAND,
    MAX_LISTED_PROBLEMS,
    MESSAGE,
    METADATA,
    METADATA_TYPES,
    SUMMARY,
    SUMMARY_ROLES,
    SUMMARY_TYPES,
    UNKNOWN,
    Problem,
    Problems,
    ReadResult,
    Record,
    RecordKind,
    SourceKey,
    classify,
    make_record,
    message_view,
    owner_keys,
    records_from_objects,
    unlisted_note,
)
from sessionctx.messages import MODEL_ROLES
from sessionctx.validity import checkpoint_problem, json_type, message_problem

__all__ = [
    "CHECKPOINT", "CONTEXT", "DEFAULT_MAX_LINE_BYTES", "EXTENSION_MESSAGE", "EXTENSION_STATE",
    "INVALID", "LOCAL_COMMAND", "MAX_LISTED_PROBLEMS", "MESSAGE", "METADATA", "METADATA_TYPES",
    "SUMMARY", "SUMMARY_ROLES", "SUMMARY_TYPES", "UNKNOWN", "Problem", "Problems", "Progress",
    "ReadResult", "Record", "RecordKind", "SourceKey", "checkpoint_problem", "classify",
    "document_duplicates", "document_too_large", "file_size", "has_tree", "id_index",
    "make_record", "message_problem", "message_view", "object_chunks", "owner_keys",
    "read_bytes", "read_path", "records_from_objects", "select_branch", "unlisted_note",
]

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
NUL_LINE = "line holds NUL bytes (binary data, or a write the file system zero-filled)"

# ---------------------------------------------------------------------------------------------
# Reading

Progress = Callable[[int, int], None]


def read_path(path: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
              progress: Progress | None = None) -> ReadResult:
    """Read sessionctx's own records from a file, or from stdin when `path` is '-' (another
    agent's file reads as unknown records here: `sessionctx.read_session` detects the format)."""
    try:
        raw = limits.read_stdin() if path == "-" else limits.read_file(path)[0]
    except limits.Unreadable as exc:
        return _fatal(exc.label, exc.why)
    except IsADirectoryError:
        return _fatal(path, "is a directory, not a session file")
    except FileNotFoundError:
        return _fatal(path, "no such file")
    except PermissionError:
        return _fatal(path, "permission denied")
    except OSError as exc:
        return _fatal(path, f"cannot be read: {exc.strerror or exc}")
    path = "<stdin>" if path == "-" else path
    return read_bytes(raw, path, max_line_bytes=max_line_bytes, progress=progress)


def read_bytes(raw: bytes, path: str | None = None, *,
               max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
               progress: Progress | None = None, array: list[Any] | None = None) -> ReadResult:
    """Read records from the bytes of a JSONL file, a JSON array, or an xopc envelope; `array`
    is the JSON array `raw` holds when the caller has decoded it already (not decoded twice,
    so the file's values are held once)."""
    with paused_gc():
        return _read_bytes(raw, path, max_line_bytes, progress, array)


def _read_bytes(raw: bytes, path: str | None, max_line_bytes: int,
                progress: Progress | None, array: list[Any] | None = None) -> ReadResult:
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    if b"\x00" in raw[:8192]:  # read line by line: each line holding NULs is named
        result = _read_lines(body, path, max_line_bytes, progress)
        if not result.records:
            return _fatal(path, "is a binary file, not a session transcript")
        return result
    stripped = body.lstrip()
    if not stripped:
        return _fatal(path, "is empty: no records")
    if stripped[:1] == b"[":
        return _read_document(body, path, max_line_bytes, array)
    newline = stripped.find(b"\n")  # not split: that would copy the whole file
    first_line = (stripped if newline < 0 else stripped[:newline]).strip()
    if stripped[:1] == b"{" and newline >= 0 and len(first_line) <= max_line_bytes:
        try:
            decoding.decode(first_line)
        except decoding.Malformed:
            if len(body) > max_line_bytes:
                return _large_document(body, path, max_line_bytes, progress)
            document = _try_document(body)
            if document is not None:
                result = _records_from_document(document, path)
                document_duplicates(body, document, path, result)
                return result
    return _read_lines(body, path, max_line_bytes, progress)


def _large_document(body: bytes, path: str | None, max_line_bytes: int,
                    progress: Progress | None) -> ReadResult:
    """A file over the limit whose first line is not a record: JSONL with a bad first line,
    or one large JSON document (no object on any of its first lines), which is refused like a
    line over the limit without reading every fragment of it as a line."""
    head = body[:1 << 20].split(b"\n")[1:_DOCUMENT_PROBE_LINES]
    if not any(_is_object(line) for line in head):
        return _fatal(path, document_too_large(len(body), max_line_bytes))
    result = _read_lines(body, path, max_line_bytes, progress)
    if not result.records:
        return _fatal(path, document_too_large(len(body), max_line_bytes))
    return result


_DOCUMENT_PROBE_LINES = 16


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(decoding.decode(line), dict)
    except decoding.Malformed:
        return False


_CHUNK_BYTES = 256 * 1024  # lines are decoded a chunk at a time; progress is told per chunk
_OPEN, _CLOSE = ord("{"), ord("}")


def _read_lines(raw: bytes, path: str | None, max_line_bytes: int,
                progress: Progress | None) -> ReadResult:
    """Read JSONL a chunk of whole lines at a time: one decode for a chunk of good lines, and
    line by line only for a chunk that holds a bad one, so each problem names its line."""
    result = ReadResult()
    total = len(raw)
    lineno = 1
    for start, end, objects in object_chunks(raw, max_line_bytes):
        if objects is not None:
            _add_records(enumerate(objects, lineno), path, result)
            lineno += len(objects)
        else:
            lines = raw[start:end].split(b"\n")
            if not lines[-1]:
                lines.pop()  # the empty piece after the chunk's last newline
            torn = end == total and not raw.endswith(b"\n")
            _add_records(_objects_of_lines(lines, lineno, path, max_line_bytes, torn,
                                           result.problems), path, result)
            lineno += len(lines)
        if progress is not None:
            progress(end, total)
    if not result.records and not result.problems:
        result.problems.append(Problem("holds no records", path, fatal=True))
    elif not result.records and result.problems:
        first = result.problems[0]
        result.problems.append(Problem(f"no line could be read as a record (first: line "
                                       f"{first.line}: {first.message})", path, fatal=True))
    result.entries = list(result.records)
    return result


def object_chunks(raw: bytes, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
                  ) -> Iterator[tuple[int, int, list[dict[str, Any]] | None]]:
    """JSONL a chunk of whole lines at a time: where each chunk starts and ends in `raw`, and
    the objects of its lines when each line holds exactly one JSON object and they decode in
    one go; None for a chunk whose lines must be looked at one by one."""
    total = len(raw)
    start = 0
    with memoryview(raw) as view:
        while start < total:
            end = raw.find(b"\n", start + _CHUNK_BYTES - 1)
            end = total if end < 0 else end + 1
            yield start, end, _decode_chunk(raw, view, start, end, max_line_bytes)
            start = end


def _decode_chunk(raw: bytes, view: memoryview, start: int, end: int,
                  max_line_bytes: int) -> list[dict[str, Any]] | None:
    """The objects of the lines raw[start:end] in one decode, when each line is exactly one
    JSON object; else None, and the chunk is read line by line to say what is wrong where.

    Each line must start with '{' and end with '}', so every line break sits between a '}'
    and a '{', which no JSON value can hold: no value spans two lines, and as many values as
    lines means one value per line, the same values decoding each line alone gives.
    """
    if end - start > max_line_bytes:
        return None
    last = end - 1 if raw.endswith(b"\n", start, end) else end
    if not raw.startswith(b"{", start, last) or not raw.endswith(b"}", start, last):
        return None
    count = 1
    newline = raw.find(b"\n", start, last)
    while newline >= 0:
        if raw[newline - 1] != _CLOSE or raw[newline + 1] != _OPEN:
            return None
        count += 1
        newline = raw.find(b"\n", newline + 1, last)
    return decoding.decode_lines(view[start:end], count)


def _objects_of_lines(lines: list[bytes], first_line: int, path: str | None,
                      max_line_bytes: int, last_is_torn: bool, problems: list[Problem]
                      ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Decode lines one at a time, reporting each that holds no object where it is."""
    decode = decoding.decode
    last = first_line + len(lines) - 1
    for lineno, line in enumerate(lines, first_line):
        if len(line) > max_line_bytes:
            problems.append(Problem(
                f"line is {len(line) / 1048576:.1f} MiB, over the "
                f"{max_line_bytes / 1048576:.0f} MiB line limit; skipped", path, lineno))
            continue
        try:
            data = decode(line)
        except decoding.Malformed as exc:
            if not line.strip():
                continue
            why = NUL_LINE if b"\x00" in line else \
                _line_error(exc, last_is_torn and lineno == last)
            problems.append(Problem(why, path, lineno))
            continue
        if not isinstance(data, dict):
            problems.append(Problem(f"expected a JSON object, got {json_type(data)}", path,
                                    lineno))
            continue
        if decoding.duplicate_keys_possible(line, data):
            keys = decoding.duplicate_keys(line)
            if keys:
                problems.append(Problem(decoding.duplicate_problem(keys), path, lineno))
        yield lineno, data


def _add_records(numbered: Iterable[tuple[int, dict[str, Any]]], path: str | None,
                 result: ReadResult) -> None:
    """Each decoded object as a record of its line; a rejected one is a problem there too."""
    records, problems = result.records, result.problems
    for lineno, data in numbered:
        record = make_record(data, Source(lineno, path=path))
        if record.kind == INVALID:
            problems.append(Problem(f"bad record: {record.problem}", path, lineno))
        records.append(record)


def _line_error(exc: decoding.Malformed, is_last_unterminated: bool) -> str:
    if exc.reason.startswith("invalid UTF-8"):
        return f"{exc.reason} of the line"
    if is_last_unterminated and exc.reason.startswith("not valid JSON"):
        return ("last line is incomplete (no newline at the end and not valid JSON): "
                "probably a write cut off by a crash")
    return exc.reason


def _try_document(raw: bytes) -> Any | None:
    try:
        return decoding.decode(raw)
    except decoding.Malformed:
        return None


def _read_document(raw: bytes, path: str | None, max_bytes: int = DEFAULT_MAX_LINE_BYTES,
                   document: Any = None) -> ReadResult:
    if len(raw) > max_bytes:
        return _fatal(path, document_too_large(len(raw), max_bytes))
    try:
        if document is None:
            document = decoding.decode(raw)
    except decoding.Malformed as exc:
        return _fatal(path, f"is not readable as one JSON document: {_with_line(raw, exc)}")
    result = _records_from_document(document, path)
    document_duplicates(raw, document, path, result)
    return result


def document_too_large(size: int, max_bytes: int = DEFAULT_MAX_LINE_BYTES) -> str:
    return (f"is one JSON document of {size / 1048576:.1f} MiB, over the "
            f"{max_bytes / 1048576:.0f} MiB limit for one document (or line); not read")


def document_duplicates(raw: bytes, document: Any, path: str | None,
                        result: ReadResult) -> None:
    """Report the keys a JSON document repeats (the last value of each was kept)."""
    if decoding.duplicate_keys_possible(raw, document):
        keys = decoding.duplicate_keys(raw)
        if keys:
            result.problems.append(Problem(decoding.duplicate_problem(keys), path))


def _records_from_document(document: Any, path: str | None) -> ReadResult:
    if isinstance(document, dict):
        if document.get("type") == "xopc_session_transcript" and isinstance(
                document.get("messages"), list):
            return _records_from_items(document["messages"], path)
        role = document.get("role")
        if isinstance(role, str) and role in MODEL_ROLES:
            return _records_from_items([document], path)
        return _fatal(path, "is a single JSON object, not records: known forms are JSONL, "
                            "a JSON array of records, and the xopc_session_transcript envelope")
    if isinstance(document, list):
        return _records_from_items(document, path)
    return _fatal(path, f"is a JSON {json_type(document)}, not records")


def _records_from_items(items: Iterable[Any], path: str | None) -> ReadResult:
    result = ReadResult()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            result.problems.append(Problem(f"item {i}: expected a JSON object, got "
                                           f"{json_type(item)}", path))
            continue
        record = make_record(item, Source(index=i, path=path))
        if record.kind == INVALID:
            result.problems.append(Problem(f"item {i}: bad record: {record.problem}", path))
        result.records.append(record)
    if not result.records and not result.problems:
        result.problems.append(Problem("holds no records", path, fatal=True))
    elif not result.records:
        result.problems.append(Problem(f"no item could be read as a record (first: "
                                       f"{result.problems[0].message})", path, fatal=True))
    return result


def _with_line(raw: bytes, exc: decoding.Malformed) -> str:
    text = exc.reason
    marker = "(byte "
    if marker in text:
        try:
            offset = int(text.rsplit(marker, 1)[1].rstrip(")"))
        except ValueError:
            return text
        line = raw.count(b"\n", 0, offset) + 1
        return f"{text}, line {line}"
    return text


def _fatal(path: str | None, message: str) -> ReadResult:
    return ReadResult(problems=[Problem(message, path, fatal=True)])


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
