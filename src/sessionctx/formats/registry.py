"""The one list of agent formats: every other registry is derived from it.

Each format is a package `sessionctx.formats.<package>` with `detect.py` (`line` and
`document` recognizers), `read.py` (`read`: bytes to native records with their sources) and,
where `repair` writes it back, a `repair.py`: `plan`, `note` and `KEYS` for a file of lines,
`plan_document` for one JSON document. The order of `FORMATS` is the order detection tries
them in. A format's modules are imported only when a file in it is read or written.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from sessionctx.records import Progress, ReadResult

# (bytes, path, the file decoded as one JSON document or None, progress) -> records
Importer = Callable[[bytes, "str | None", Any, "Progress | None"], ReadResult]

NATIVE = "native"


@dataclass(frozen=True, slots=True)
class Format:
    name: str  # the `--from` name
    package: str  # sessionctx.formats.<package>
    expected: str  # what a file in this format holds, said when a file is not one
    lines: bool = False  # repair writes it as a file of lines
    document: bool = False  # repair writes it as one JSON document
    writer: str | None = None  # the package whose repair.py writes it, when not its own
    calls: bool = True  # it can hold tool calls (without, repair has nothing to take out)
    after_repair: str = ""  # what a user must know once repair has written a file of it


FORMATS: tuple[Format, ...] = (
    Format("codex", "codex", "Codex rollout JSONL: session_meta, response_item, turn_context, "
           "event_msg or compacted lines with a payload", lines=True, writer="openai_responses",
           after_repair="Codex keeps its own index of a rollout (byte offsets in its state "
           "database): repair a rollout before Codex resumes it; after a resume it has "
           "indexed the old lines and warns that the rollout shrank, then reads it again"),
    Format("pi", "pi", "a pi session: JSONL entries (a session header, message entries with id "
           "and parentId) or one pi message object", lines=True, document=True,
           writer="native"),
    Format("claude-code", "claude_code", "Claude Code JSONL: lines of type user, assistant, "
           "system or summary with a uuid or sessionId", lines=True),
    Format("gemini-cli", "gemini_cli", "one JSON document: a Gemini CLI session whose "
           "messages are user and gemini messages", document=True),
    Format("anthropic", "anthropic", "one JSON document: a list of Anthropic messages (role "
           "user or assistant, content a string or typed blocks), or an object with such a "
           "messages list", document=True),
    Format("openai-responses", "openai_responses", "OpenAI Responses input items: a JSON list "
           "of them, JSONL with one a line, or a request object with an input list",
           lines=True, document=True),
    Format("openai-chat", "openai_chat", "one JSON document: a list of chat messages (role, "
           "content), or an object with a messages or history list", document=True),
    Format("gemini-cli-jsonl", "gemini_cli_jsonl", "Gemini CLI chat JSONL: a header row "
           "(sessionId, projectHash), message rows (id, type, content) and $set or $rewindTo "
           "update rows", lines=True),
    Format("copilot-cli", "copilot_cli", "Copilot CLI events.jsonl: event lines {type, data, "
           "id, timestamp, parentId} such as session.start, user.message and "
           "assistant.message", lines=True),
    Format("aider", "aider", "an aider .aider.chat.history.md: '# aider chat started at' runs "
           "of '#### ' user lines, '> ' tool lines and the model's replies", calls=False),
    Format("opencode", "opencode", "opencode's opencode.db, a session file of its storage "
           "folder (storage/session/<project>/<session>.json beside message/ and part/) or an "
           "`opencode export` document"),
    Format("goose", "goose", "Goose's sessions.db (tables sessions and messages with "
           "content_json) or a Goose session JSONL (a working_dir header, then messages with "
           "role, created and content)"),
    Format(NATIVE, "native", "sessionctx records: JSONL, a JSON array of records, an "
           "xopc_session_transcript envelope or pi entries, each with a role, kind or type "
           "sessionctx knows", lines=True, document=True),
)

BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}
NAMES: tuple[str, ...] = tuple(f.name for f in FORMATS)


def module(fmt: str, part: str) -> ModuleType:
    """The module `part` (detect, read, repair) of format `fmt`'s own package."""
    return importlib.import_module(f"sessionctx.formats.{BY_NAME[fmt].package}.{part}")


def importer(fmt: str) -> Importer:
    """The reader of format `fmt` (one of NAMES)."""
    read: Importer = module(fmt, "read").read
    return read


def writer(fmt: str) -> ModuleType | None:
    """The repair module that writes format `fmt` back, or None when repair does not."""
    entry = BY_NAME[fmt]
    if not (entry.lines or entry.document):
        return None
    return importlib.import_module(
        f"sessionctx.formats.{entry.writer or entry.package}.repair")
