"""Where records come from: a session file in any format sessionctx reads.

The one entry point every command and the stores use to turn a path into native records, so
a format added here is accepted everywhere. `auto` looks at the file: native records stay the
default, and another agent's history is read by its importer.
"""

from __future__ import annotations

import os
from typing import Any

from sessionctx import limits
from sessionctx.errors import BadArgument, SessionctxError
from sessionctx.formats.common import not_a_file
from sessionctx.formats.detect import decode_document, detect
from sessionctx.formats.registry import BY_NAME, NAMES, NATIVE, importer
from sessionctx.gcpause import paused_gc
from sessionctx.records import (
    CONTEXT,
    INVALID,
    UNKNOWN,
    Problem,
    Progress,
    ReadResult,
    document_duplicates,
    read_path,
)

FORMATS = ("auto", NATIVE, *(n for n in NAMES if n != NATIVE))


def read_session(path: str, fmt: str = "auto", *,
                 progress: Progress | None = None) -> ReadResult:
    """Read `path` ('-' for stdin) as native records, in format `fmt` or the one detected:
    the library's front door (`sessionctx.read_session`), and the read every command makes.
    Never raises for a bad file: its problems are in the result (`fatal` when nothing in it
    could be read)."""
    if fmt not in FORMATS:
        raise BadArgument(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if path != "-" and os.path.isdir(path):
        chosen = _one_session(path)
        if isinstance(chosen, ReadResult):
            return chosen
        path = chosen
    try:
        if path == "-":
            raw, label = limits.read_stdin(), "<stdin>"
        else:
            raw, label = limits.read_file(path)[0], path
    except limits.Unreadable as exc:
        return ReadResult(problems=[Problem(exc.why, exc.label, fatal=True)])
    except OSError:
        return read_path(path)  # the core names what is wrong with the path
    return read_raw(raw, label, fmt, progress=progress)


def _one_session(folder: str) -> str | ReadResult:
    """The session an opencode storage folder holds, when it holds one; any other directory
    is left to the core, which says it is not a session file."""
    from sessionctx.folders import opencode_storage, session_files

    if not opencode_storage(folder):
        return folder
    try:
        files = session_files(folder)
    except SessionctxError as exc:
        return ReadResult(problems=[Problem(str(exc), None, fatal=True)])
    if len(files) == 1:
        return files[0]
    return ReadResult(problems=[Problem(
        f"an opencode storage folder of {len(files)} sessions: name one "
        "(session/<project>/<session>.json), or `check` the folder to check each", folder,
        fatal=True)])


read_input = read_session  # the name the modules and tests of sessionctx itself use


def read_raw(raw: bytes, path: str | None, fmt: str = "auto", *,
             progress: Progress | None = None) -> ReadResult:
    """Read the bytes of a session file in format `fmt` ('auto' to detect it)."""
    with paused_gc():
        return _read_raw(raw, path, fmt, progress)


def detect_format(raw: bytes, fmt: str = "auto") -> str:
    """The format `raw` is read in: `fmt`, or for 'auto' the one detected."""
    return detect(raw, _document(raw)) if fmt == "auto" else fmt


def _read_raw(raw: bytes, path: str | None, fmt: str, progress: Progress | None
              ) -> ReadResult:
    document = _document(raw)
    chosen = detect(raw, document) if fmt == "auto" else fmt
    if chosen == NATIVE:
        result = importer(NATIVE)(raw, path, document, progress)
        if fmt == "auto" and _unrecognised(result):
            return _no_format(path, result)
    else:
        result = importer(chosen)(raw, path, document, progress)
        if fmt == "auto" and result.fatal:
            return _no_format(path, result)
        if document is not None and not result.fatal:
            document_duplicates(raw, document, path, result)
        result.format = chosen
    if fmt != "auto" and result.fatal:
        reasons = "; ".join(p.message for p in result.problems if p.fatal)
        if not reasons.startswith("not a"):
            return _not_this_format(path, fmt, raw, document, reasons)
    elif fmt != "auto" and not _recognised(chosen, raw, document, result):
        return _not_this_format(path, fmt, raw, document)
    return result


def _recognised(fmt: str, raw: bytes, document: Any, result: ReadResult) -> bool:
    """Whether a file read as the named format held anything of it: a record the format
    converts, or lines the format's detection knows (a file of bookkeeping lines only)."""
    if fmt == NATIVE:  # native is also what detection falls back to: only records count
        return any(r.kind not in (UNKNOWN, INVALID) for r in result.records)
    return any(r.kind not in (UNKNOWN, INVALID, CONTEXT) for r in result.records) or detect(
        raw, document) == fmt


def _not_this_format(path: str | None, fmt: str, raw: bytes, document: Any,
                     why: str | None = None) -> ReadResult:
    found = detect(raw, document)
    hint = f"; it looks like {found}: try --from {found}" if found not in (fmt, NATIVE) else ""
    return not_a_file(path, fmt, BY_NAME[fmt].expected, why, hint)


def _document(raw: bytes) -> dict[str, Any] | list[Any] | None:
    """The file as one JSON object or array, or None (JSONL, binary, anything else)."""
    head = raw.lstrip()[:1]
    if head not in (b"[", b"{") or b"\x00" in raw[:8192]:
        return None
    document = decode_document(raw)
    return document if isinstance(document, dict | list) else None


def _unrecognised(result: ReadResult) -> bool:
    return result.fatal or (bool(result.records) and all(
        r.kind == UNKNOWN for r in result.records))


def _no_format(path: str | None, result: ReadResult) -> ReadResult:
    tried = ", ".join(f for f in FORMATS if f != "auto")
    reasons = "; ".join(p.message for p in result.problems if p.fatal)
    detail = f" ({reasons})" if reasons else ""
    return ReadResult(problems=[Problem(
        f"is in no known format; tried {tried}{detail}", path, fatal=True)])
