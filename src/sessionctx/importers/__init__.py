"""Readers for other agents' histories: each turns a file's bytes into native records.

Every importer keeps the source file and line (or array index) of each record, and the
original object under `raw` wherever converting changed its shape. An importer's module is
imported only when a file in its format is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from sessionctx.records import Progress, ReadResult

# (bytes, path, the file decoded as one JSON document or None, progress) -> records
Importer = Callable[[bytes, "str | None", Any, "Progress | None"], ReadResult]

# format name: the module (under sessionctx.importers, or named in full) whose `read` imports it
MODULES: dict[str, str] = {
    "claude-code": "claude_code",
    "codex": "codex",
    "pi": "pi",
    "gemini-cli": "gemini_cli",
    "openai-chat": "openai_chat",
    "anthropic": "anthropic",
    "openai-responses": "openai_responses",
    "gemini-cli-jsonl": "sessionctx.formats.gemini_cli.reading",
    "copilot-cli": "sessionctx.formats.copilot_cli.reading",
    "aider": "sessionctx.formats.aider.reading",
}


def importer(fmt: str) -> Importer:
    """The importer of format `fmt` (one of MODULES)."""
    name = MODULES[fmt]
    module = importlib.import_module(name if "." in name else f"sessionctx.importers.{name}")
    read: Importer = module.read
    return read
