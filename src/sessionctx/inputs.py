"""Where records come from: a session file in any format sessionctx reads.

The one entry point every command and the stores use to turn a path into native records, so
a format added here is accepted everywhere.
"""

from __future__ import annotations

from sessionctx.records import Progress, ReadResult, read_path

FORMATS = ("auto", "native")


def read_input(path: str, fmt: str = "auto", *, progress: Progress | None = None) -> ReadResult:
    """Read `path` ('-' for stdin) as native records."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return read_path(path, progress=progress)
