"""Helpers for the repair tests: broken variants of real sessions, and what must hold after."""

from __future__ import annotations

import difflib
import json
import os
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from sessionctx.cli import main


def lines_of(raw: bytes) -> list[bytes]:
    parts = raw.split(b"\n")
    if raw.endswith(b"\n"):
        parts.pop()
    return parts


def differing_lines(before: bytes, after: bytes) -> set[int]:
    """The 1-based lines of `before` that do not reach `after` unchanged, in order."""
    old, new = lines_of(before), lines_of(after)
    kept: set[int] = set()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for block in matcher.get_matching_blocks():
        kept.update(range(block.a + 1, block.a + block.size + 1))
    return set(range(1, len(old) + 1)) - kept


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def repair_json(path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code, out = run("repair", str(path), "--json", *extra)
    return code, json.loads(out)


def check_ok(path: Path, fmt: str = "auto") -> None:
    code, out = run("check", str(path), "--from", fmt)
    assert code == 0, out


def assert_repaired(path: Path, original: bytes, fmt: str = "auto",
                    *extra: str) -> dict[str, Any]:
    """Repair `path` and hold it to every promise: check passes, only the named lines
    differ, the backup is the original."""
    mode = path.stat().st_mode & 0o777
    written_earlier(path)
    code, report = repair_json(path, "--from", fmt, *extra)
    assert code == 0, report
    assert report["written"], report
    after = path.read_bytes()
    check_ok(path, fmt)
    named = {c["line"] for c in report["changes"] if c["action"] != "inserted"}
    assert differing_lines(original, after) == named
    assert Path(report["backup"]).read_bytes() == original
    # the backup is the original file itself (its inode, so its permissions), not a copy
    assert Path(report["backup"]).stat().st_mode & 0o777 == mode
    assert Path(report["backup"]).stat().st_nlink == 1
    assert path.stat().st_mode & 0o777 == mode  # the agent's file keeps its permissions
    return report


def written_earlier(path: Path, seconds: float = 3600) -> None:
    """Date the file's last write `seconds` back: a torn last line is then a crash's, not
    one its agent is still writing (live_writers.TAIL_GRACE_SECONDS)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def objects(raw: bytes) -> list[dict[str, Any]]:
    out = []
    for line in lines_of(raw):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def jsonl(objs: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(o, separators=(",", ":")).encode() + b"\n" for o in objs)
