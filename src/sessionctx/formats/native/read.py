"""sessionctx's own records, read by the core: JSONL with line provenance, or the items of a
JSON array."""

from __future__ import annotations

from typing import Any

from sessionctx.records import Progress, ReadResult, read_bytes


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    array = document if isinstance(document, list) else None
    return read_bytes(raw, path, progress=progress, array=array)
