"""Where records come from: a session file in any format sessionctx reads.

The one entry point every command and the stores use to turn a path into native records, so
a format added here is accepted everywhere. `auto` looks at the file: native records stay the
default, and another agent's history is read by its importer.
"""

from __future__ import annotations

import sys
from typing import Any

from sessionctx.errors import BadArgument
from sessionctx.gcpause import paused_gc
from sessionctx.importers import MODULES, importer
from sessionctx.importers.detect import NATIVE, decode_document, detect
from sessionctx.records import (
    UNKNOWN,
    Problem,
    Progress,
    ReadResult,
    read_bytes,
    read_path,
)

FORMATS = ("auto", NATIVE, *MODULES)


def read_input(path: str, fmt: str = "auto", *, progress: Progress | None = None) -> ReadResult:
    """Read `path` ('-' for stdin) as native records, in format `fmt` or the one detected."""
    if fmt not in FORMATS:
        raise BadArgument(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if fmt == NATIVE:
        return read_path(path, progress=progress)
    if path == "-":
        raw, label = sys.stdin.buffer.read(), "<stdin>"
    else:
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            return read_path(path)  # the core names what is wrong with the path
        label = path
    return read_raw(raw, label, fmt, progress=progress)


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
        result = read_bytes(raw, path, progress=progress)
        if fmt == "auto" and _unrecognised(result):
            return _no_format(path, result)
        return result
    result = importer(chosen)(raw, path, document, progress)
    if fmt == "auto" and result.fatal:
        return _no_format(path, result)
    result.format = chosen
    return result


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
