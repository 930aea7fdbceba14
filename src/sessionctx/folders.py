"""A directory given where a session is expected: the session files it holds.

Claude Code keeps a session as `<project>/<session-id>.jsonl` and the transcripts of the
subagents it started in `<project>/<session-id>/subagents/agent-<id>.jsonl` (beside each, an
`agent-<id>.meta.json` sidecar, which is not a transcript). So a session's own folder means that
session and its subagents; any other directory (a Claude Code project, a day of Codex rollouts)
means each session file directly in it, a Claude Code session with its subagents. opencode's
storage folder (`session/`, `message/`, `part/`) means the session files of each of its
projects, each read with its messages; Goose's and opencode's stores are named as files.
"""

from __future__ import annotations

import os

from sessionctx.errors import InputError
from sessionctx.formats.claude_code.read import subagent_transcripts

SESSION_SUFFIXES = (".jsonl", ".json", ".traj", ".aider.chat.history.md", "sessions.db",
                    "opencode.db")
SIDECAR_SUFFIX = ".meta.json"


def session_files(folder: str) -> list[str]:
    """The session files `folder` stands for, in order; InputError when it holds none."""
    own = os.path.normpath(folder)
    if opencode_storage(own):
        return _opencode_sessions(own)
    beside = own + ".jsonl"
    if os.path.isdir(os.path.join(own, "subagents")) or os.path.isfile(beside):
        files = [beside] if os.path.isfile(beside) else []
        files += subagent_transcripts(beside)
    else:
        files = []
        for name in _names(folder):
            path = os.path.join(folder, name)
            if name.endswith(SESSION_SUFFIXES) and not name.endswith(SIDECAR_SUFFIX) and \
                    os.path.isfile(path):
                files.append(path)
                files += subagent_transcripts(path)
    if not files:
        raise InputError(
            f"{folder}: no session in this directory: a directory is read as the session "
            f"files in it ({', '.join('*' + s for s in SESSION_SUFFIXES)}) or, for a Claude "
            "Code session's own folder, that session (<folder>.jsonl beside it) and its "
            "subagents (subagents/agent-*.jsonl)")
    return files


def opencode_storage(folder: str) -> bool:
    return all(os.path.isdir(os.path.join(folder, d)) for d in ("session", "message", "part"))


def _opencode_sessions(folder: str) -> list[str]:
    """Each session file of an opencode storage folder, project by project."""
    top = os.path.join(folder, "session")
    files = [os.path.join(top, p, n) for p in _names(top) if os.path.isdir(os.path.join(top, p))
             for n in _names(os.path.join(top, p)) if n.endswith(".json")]
    if not files:
        raise InputError(f"{folder}: an opencode storage folder with no session in it "
                         "(session/<project>/<session>.json)")
    return files


def _names(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError as exc:
        raise InputError(f"{folder}: cannot list the directory: {exc.strerror}") from None
