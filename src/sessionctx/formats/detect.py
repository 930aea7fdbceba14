"""Which format a session file is in, from its first lines or its document shape: each
format's own `detect` module is asked, in the order of `registry.FORMATS`."""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import Any

from sessionctx import decoding
from sessionctx.formats import common
from sessionctx.formats.registry import FORMATS, NATIVE, module

__all__ = ["NATIVE", "decode_document", "detect"]


def decode_document(raw: bytes) -> Any | None:
    """The whole file as one JSON value, or None when it is not one (JSONL, say)."""
    try:
        return decoding.decode_or_none(common.document_body(raw))
    except decoding.Malformed:
        return None


def detect(raw: bytes, document: Any = None) -> str:
    """The format name of `raw`; NATIVE when nothing more specific fits."""
    if document is not None:
        return _detect_document(document)
    native = False
    for line in _head_objects(raw):
        fmt = _detect_line(line)
        if fmt == NATIVE and "role" in line and "type" not in line:
            native = True  # a plain message: Responses items may still follow it
        elif fmt is not None and not (native and fmt != "openai-responses"):
            return fmt
    return NATIVE


def _head_objects(raw: bytes, limit: int = 50) -> list[dict[str, Any]]:
    out = []
    for line in raw[:1 << 20].split(b"\n")[:limit]:
        try:
            value = decoding.decode(line)
        except decoding.Malformed:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


@cache
def _detector(fmt: str) -> ModuleType:
    return module(fmt, "detect")


def _detect_line(obj: dict[str, Any]) -> str | None:
    for fmt in FORMATS:
        if _detector(fmt.name).line(obj):
            return fmt.name
    return None


def _detect_document(document: Any) -> str:
    if _detector(NATIVE).envelope(document):
        return NATIVE
    for fmt in FORMATS:
        if _detector(fmt.name).document(document):
            return fmt.name
    return NATIVE
