"""Readers for other agents' histories: each turns a file's bytes into native records.

Every importer keeps the source file and line (or array index) of each record, and the
original object under `raw` wherever converting changed its shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sessionctx.importers import claude_code, codex, gemini_cli, openai_chat, pi
from sessionctx.records import Progress, ReadResult

# (bytes, path, the file decoded as one JSON document or None, progress) -> records
Importer = Callable[[bytes, "str | None", Any, "Progress | None"], ReadResult]

IMPORTERS: dict[str, Importer] = {
    "claude-code": claude_code.read,
    "codex": codex.read,
    "pi": pi.read,
    "gemini-cli": gemini_cli.read,
    "openai-chat": openai_chat.read,
}
