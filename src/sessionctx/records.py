"""What is stored: record kinds, tolerant reading, and where each record came from.

Reading is strictly read-only and never stops at the first bad line: every problem is collected
with its file and line, and every good record around it is kept. Records keep the exact object
that was stored, unknown fields included, so writing one back gives the same record.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from sys import intern
from typing import Any

import msgspec

from sessionctx import decoding
from sessionctx.changes import Source
from sessionctx.errors import NoSuchEntry
from sessionctx.gcpause import paused_gc
from sessionctx.messages import CALL_BLOCK_TYPES, MODEL_ROLES

# Record kinds
MESSAGE = "message"
CONTEXT = "context"
LOCAL_COMMAND = "local_command"
EXTENSION_MESSAGE = "extension_message"
EXTENSION_STATE = "extension_state"
SUMMARY = "summary"
CHECKPOINT = "checkpoint"
METADATA = "metadata"
UNKNOWN = "unknown"
INVALID = "invalid"

METADATA_TYPES = frozenset({"label", "model_change", "thinking_level_change", "session_info",
                            "session"})
SUMMARY_ROLES = frozenset({"branchSummary", "compactionSummary"})
SUMMARY_TYPES = frozenset({"branch_summary"})

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

_CHECKPOINT_FIELDS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("at", str),
    ("baseSeq", int),
    ("plannerVersion", int),
    ("summaryModelRef", str),
    ("qualityAudit", (str, dict)),
    ("summary", str),
    ("messages", list),
    ("firstKeptIndex", int),
    ("tokensBefore", int),
    ("tokensAfter", int),
)


class Record(msgspec.Struct, gc=False):
    """One stored record: the object exactly as stored, its kind, and where it came from.
    Not tracked by the cycle collector: the stored object holds no reference back to its
    record, so no cycle runs through one, and a file of tiny records keeps one per line."""

    data: dict[str, Any]
    kind: str
    source: Source
    problem: str | None = None  # why an INVALID record or a malformed checkpoint was rejected

    @property
    def view(self) -> dict[str, Any]:
        """The record's own fields: the wrapped message of a pi `message` entry, else the data."""
        return message_view(self.data)


class Problem(msgspec.Struct, frozen=True):
    """Something in the input that could not be read as a record."""

    message: str
    path: str | None = None
    line: int | None = None
    fatal: bool = False  # nothing of the input could be read
    # what `check` calls it: a line not read, or a change kind a stored shape needs
    kind: str = "unreadable"

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "message": self.message,
                "fatal": self.fatal}


MAX_LISTED_PROBLEMS = 1000


def unlisted_note(count: int) -> str:
    """What stands for the `count` problems past the first MAX_LISTED_PROBLEMS."""
    return f"... and {count} more problem(s) like these, not listed"


class Problems(list[Problem]):
    """A read's problems: the first MAX_LISTED_PROBLEMS listed, the others counted in one
    entry after them (fatal ones are always listed), so a file of millions of bad lines takes
    the memory of a thousand problems and every good record in it is still read."""

    def __init__(self) -> None:
        super().__init__()
        self.unlisted = 0
        self._note = -1

    def append(self, problem: Problem) -> None:
        if problem.fatal or len(self) < MAX_LISTED_PROBLEMS:
            super().append(problem)
            return
        self.unlisted += 1
        note = Problem(unlisted_note(self.unlisted), problem.path)
        if self._note < 0:
            self._note = len(self)
            super().append(note)
        else:
            self[self._note] = note


class ReadResult(msgspec.Struct):
    records: list[Record] = msgspec.field(default_factory=list)
    problems: list[Problem] = msgspec.field(default_factory=Problems)
    format: str = "native"  # the format the input was read in (inputs.FORMATS)
    # JSONL read line by line by the core: each line's record as the line holds it, before
    # any importer converted one (a repair edits those objects instead of decoding them again)
    entries: list[Record] | None = None

    @property
    def fatal(self) -> bool:
        return any(p.fatal for p in self.problems)


def message_view(data: Mapping[str, Any]) -> dict[str, Any]:
    inner = data.get("message")
    if data.get("type") == "message" and isinstance(inner, dict):
        return inner
    return data  # type: ignore[return-value]


def classify(data: dict[str, Any]) -> tuple[str, str | None]:
    """The kind of a stored object, and for a rejected one the reason."""
    view = data
    if data.get("type") == "message":  # message_view, inline: it runs for every record
        inner = data.get("message")
        if isinstance(inner, dict):
            view = inner
    role = view.get("role")
    if not isinstance(role, str):
        if view is not data:
            return INVALID, "message entry without a string 'role' in its message"
        if role is not None:
            return INVALID, f"field 'role' must be a string, got {_json_type(role)}"
    elif role in MODEL_ROLES and "kind" not in view and "type" not in view:
        return MESSAGE, message_problem(view)  # the common case, decided in three lookups
    if view.get("kind") == "context":
        return CONTEXT, None
    rtype = view.get("type")
    if not isinstance(rtype, str):
        rtype = None
    if role == "bashExecution":
        return LOCAL_COMMAND, _local_command_problem(view)
    if role == "custom" or rtype == "custom_message":
        return EXTENSION_MESSAGE, _content_problem(view.get("content"), optional=True)
    if rtype == "custom":
        return EXTENSION_STATE, None
    if role in SUMMARY_ROLES or rtype in SUMMARY_TYPES:
        return SUMMARY, None
    if rtype == "compaction":
        return CHECKPOINT, checkpoint_problem(view)
    if rtype in METADATA_TYPES:
        return METADATA, None
    if role in MODEL_ROLES:
        return MESSAGE, message_problem(view)
    return UNKNOWN, None


def make_record(data: dict[str, Any], source: Source) -> Record:
    kind, problem = classify(data)
    if problem is not None:
        problem = intern(problem)  # the same few texts repeat across a file's records
        if kind != CHECKPOINT:
            kind = INVALID
    return Record(data, kind, source, problem)


def message_problem(message: Mapping[str, Any]) -> str | None:
    """Why a chat message cannot be used, or None. Only what would break reading is checked."""
    content = message.get("content")
    if not _plain_blocks(content):
        problem = _content_problem(content, message.get("role") == "assistant", "content",
                                   True)
        if problem:
            return problem
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if not isinstance(tool_calls, list):
            return f"field 'tool_calls' must be an array, got {_json_type(tool_calls)}"
        for i, item in enumerate(tool_calls):
            if not isinstance(item, dict):
                return f"tool_calls[{i}] must be an object, got {_json_type(item)}"
    for key in ("toolCallId", "tool_call_id", "toolName"):
        value = message.get(key)
        if value is not None and not isinstance(value, str):
            return f"field '{key}' must be a string, got {_json_type(value)}"
    return None


def _plain_blocks(content: Any) -> bool:
    """Whether `content` is a list of well-formed blocks, in one quick walk: the common case,
    which then needs no reasons; anything odd is left to `_content_problem` to describe."""
    if type(content) is not list:
        return False
    for block in content:
        if type(block) is not dict:
            return False
        btype = block.get("type")
        ok = True
        if btype == "text":
            ok = type(block.get("text")) is str
        elif type(btype) is not str:
            ok = False
        elif btype in CALL_BLOCK_TYPES:
            ok = type(block.get("id", "")) is str and type(block.get("name", "")) is str
        if not ok:
            return False
    return True


def checkpoint_problem(view: Mapping[str, Any]) -> str | None:
    """Why a `type: compaction` record is not a full checkpoint, or None when it is one."""
    missing = [name for name, _ in _CHECKPOINT_FIELDS if name not in view]
    if missing:
        return "checkpoint lacks " + ", ".join(repr(m) for m in missing)
    for name, expected in _CHECKPOINT_FIELDS:
        value = view[name]
        if isinstance(value, bool) or not isinstance(value, expected):
            return f"checkpoint field {name!r} has the wrong type ({_json_type(value)})"
    restored = view.get("restoredFromCompactionId")
    if restored is not None and not isinstance(restored, str):
        return "checkpoint field 'restoredFromCompactionId' must be a string"
    for i, message in enumerate(view["messages"]):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) or \
                message["role"] not in MODEL_ROLES:
            return f"checkpoint messages[{i}] is not a chat message"
        problem = message_problem(message)
        if problem:
            return f"checkpoint messages[{i}]: {problem}"
    return None


def _local_command_problem(view: Mapping[str, Any]) -> str | None:
    command = view.get("command")
    if command is not None and not isinstance(command, str):
        return f"field 'command' must be a string, got {_json_type(command)}"
    code = view.get("exitCode")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        return f"field 'exitCode' must be a number or null, got {_json_type(code)}"
    return _content_problem(view.get("output"), optional=True, name="output")


def _content_problem(content: Any, optional: bool, name: str = "content",
                     calls: bool = False) -> str | None:
    """Why a content value is unusable, or None. With `calls`, call blocks need string ids
    and names, but a malformed block anywhere comes first: the one walk serves both."""
    if content is None:
        return None if optional else f"field '{name}' is missing"
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"field '{name}' must be a string or an array, got {_json_type(content)}"
    call_problem = None
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            return f"{name}[{i}] must be an object, got {_json_type(block)}"
        btype = block.get("type")
        if btype == "text":
            if not isinstance(block.get("text"), str):
                return f"{name}[{i}] is a text block without a string 'text'"
        elif not isinstance(btype, str):
            return f"{name}[{i}] has no string 'type'"
        elif calls and call_problem is None and btype in CALL_BLOCK_TYPES:
            call_problem = _call_block_problem(block, name, i)
    return call_problem


def _call_block_problem(block: Mapping[str, Any], name: str, i: int) -> str | None:
    for key in ("id", "name"):
        if key in block and not isinstance(block[key], str):
            return f"{name}[{i}].{key} must be a string, got {_json_type(block[key])}"
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# ---------------------------------------------------------------------------------------------
# Reading

Progress = Callable[[int, int], None]


def read_path(path: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
              progress: Progress | None = None) -> ReadResult:
    """Read sessionctx's own records from a file, or from stdin when `path` is '-' (another
    agent's file reads as unknown records here: `sessionctx.read_session` detects the format)."""
    if path == "-":
        return read_bytes(sys.stdin.buffer.read(), "<stdin>", max_line_bytes=max_line_bytes,
                          progress=progress)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except IsADirectoryError:
        return _fatal(path, "is a directory, not a session file")
    except FileNotFoundError:
        return _fatal(path, "no such file")
    except PermissionError:
        return _fatal(path, "permission denied")
    except OSError as exc:
        return _fatal(path, f"cannot be read: {exc.strerror or exc}")
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
    head = raw[:8192]
    if b"\x00" in head:
        return _fatal(path, "is a binary file, not a session transcript")
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
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
            problems.append(Problem(_line_error(exc, last_is_torn and lineno == last),
                                    path, lineno))
            continue
        if not isinstance(data, dict):
            problems.append(Problem(f"expected a JSON object, got {_json_type(data)}", path,
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
    return _fatal(path, f"is a JSON {_json_type(document)}, not records")


def _records_from_items(items: Iterable[Any], path: str | None) -> ReadResult:
    result = ReadResult()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            result.problems.append(Problem(f"item {i}: expected a JSON object, got "
                                           f"{_json_type(item)}", path))
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


# ---------------------------------------------------------------------------------------------
# pi session trees


def _is_node(record: Record) -> bool:
    return "parentId" in record.data and isinstance(record.data.get("id"), str)


def has_tree(records: Iterable[Record]) -> bool:
    return any(_is_node(r) for r in records)


def select_branch(records: list[Record], leaf: str | None = None
                  ) -> tuple[list[Record], list[Record]]:
    """The records on the path from the root to `leaf` (default: the last entry of the tree),
    and those left off it. Records that are not tree entries (a session header) stay."""
    if leaf is None and _is_chain(records):
        return records, []  # every entry is on the one branch
    nodes = [r for r in records if _is_node(r)]
    if not nodes:
        return records, []
    by_id = id_index(nodes)
    if leaf is None:
        leaf = nodes[-1].data["id"]
    elif leaf not in by_id:
        raise NoSuchEntry(leaf)
    on_path: set[str] = set()
    current: str | None = leaf
    while current is not None and current in by_id and current not in on_path:
        on_path.add(current)
        parent = by_id[current].data.get("parentId")
        current = parent if isinstance(parent, str) else None
    kept: list[Record] = []
    off: list[Record] = []
    for r in records:
        (kept if not _is_node(r) or r.data["id"] in on_path else off).append(r)
    return kept, off


def _is_chain(records: list[Record]) -> bool:
    """Whether the tree entries form one linear branch: the first is a root, each other's
    parent is the entry before it, and no id repeats. Most sessions are one; this one pass
    then stands for the index and the walk."""
    previous: str | None = None
    seen: set[str] = set()
    for r in records:
        data = r.data
        if "parentId" not in data:
            continue
        node_id = data.get("id")
        if not isinstance(node_id, str):
            continue
        if data["parentId"] != previous or node_id in seen:
            return False
        seen.add(node_id)
        previous = node_id
    return True


def id_index(records: Iterable[Record]) -> dict[str, Record]:
    """Each record with a string id under that id; the last one wins a repeated id."""
    return {r.data["id"]: r for r in records if isinstance(r.data.get("id"), str)}


def records_from_objects(objects: Iterable[dict[str, Any]], *, first_seq: int | None = None
                         ) -> list[Record]:
    """Records from in-memory objects (a store's rows, a test's list)."""
    out = []
    for i, data in enumerate(objects):
        source = Source(seq=first_seq + i) if first_seq is not None else Source(index=i)
        out.append(make_record(data, source))
    return out


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


SourceKey = tuple[int | None, int | None, int | None]


def owner_keys(records: Iterable[Record]) -> dict[SourceKey, SourceKey]:
    """Every place a change or a call can name -> the key of the record that holds it: a
    record's own key, and each line of a record gathered from several lines."""
    out: dict[SourceKey, SourceKey] = {}
    for record in records:
        key = record.source.key()
        out.setdefault(key, key)
        for line in record.source.block_lines or ():
            out.setdefault((line, None, None), key)
    return out
