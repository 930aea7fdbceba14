"""Compaction in the agent's own format, for a session file its agent resumes.

An agent reads only its own compaction: a sessionctx checkpoint appended to its file is not one
(pi, given one, resumed with nothing of the history). So a file in an agent format is compacted
with that agent's own entry, from its format package's `compaction.py` (`compaction_lines`);
a format with none is refused before anything runs, with the route that works: import it into
a store, then compact the store's session.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

from sessionctx.changes import Source
from sessionctx.context import BuildOptions, build_context
from sessionctx.errors import CompactionError
from sessionctx.formats.registry import BY_NAME, FORMATS, NATIVE
from sessionctx.records import Record

__all__ = ["NATIVE", "NoOwnCompaction", "has_writer", "kept_lines", "writer"]

# (file bytes, *, kept_lines, summary, tokens_before, at) -> the lines to append
Writer = Callable[..., list[dict[str, Any]]]


def _module(fmt: str) -> str:
    return f"sessionctx.formats.{BY_NAME[fmt].package}.compaction"


def has_writer(fmt: str) -> bool:
    """Whether format `fmt`'s package writes the agent's own compaction (a compaction.py)."""
    return fmt in BY_NAME and importlib.util.find_spec(_module(fmt)) is not None


class NoOwnCompaction(CompactionError):
    """The file is in an agent format sessionctx writes no compaction for."""

    def __init__(self, label: str, fmt: str) -> None:
        written = ", ".join(f.name for f in FORMATS if f.name != NATIVE and has_writer(f.name))
        super().__init__(
            f"{label} is a {fmt} session, and sessionctx does not write {fmt}'s own compaction "
            f"(it does for: {written}); a sessionctx checkpoint appended "
            f"there would not be read by the agent. Import it into a store "
            f"(sessionctx import {label} --store URL --session ID), then compact that "
            f"(sessionctx compact --store URL --session ID ...)")


def writer(label: str, fmt: str) -> Writer | None:
    """The agent's own compaction writer for `fmt`; None for native records; NoOwnCompaction
    for an agent format without one."""
    if fmt == NATIVE:
        return None
    if not has_writer(fmt):
        raise NoOwnCompaction(label, fmt)
    found: Writer = importlib.import_module(_module(fmt)).compaction_lines
    return found


def line_of(source: Source) -> int | None:
    """The file line a context message came from (a kept message of an earlier compaction
    names the line of its own entry)."""
    if source.part is not None and source.message_lines and source.part < len(
            source.message_lines):
        return source.message_lines[source.part]
    return source.line


def kept_lines(records: list[Record], options: BuildOptions, cut: int) -> list[int]:
    """The file lines the kept part of the context comes from, in the context's order (every
    streamed line of a message included)."""
    out: list[int] = []
    for source in build_context(records, options).sources[cut:]:
        line = line_of(source)
        pieces = [line] if source.part is not None else [line, *(source.block_lines or ())]
        out.extend(n for n in pieces if n is not None and n not in out)
    if not out:
        raise CompactionError("the kept messages come from no line of the file; nothing was "
                              "written")
    return out
