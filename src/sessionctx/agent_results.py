"""Results an agent wrote for itself: the text an agent puts in place of a tool's result when
the call never finished (a crash, an interrupt, a resumed session). None of them says what the
tool did, so the call's outcome is unknown: sessionctx lists the call as pending and infers
nothing from the text, which stays in the context as the agent sent it (the model has seen it).

Each marker is the agent's own text, as its source or its transcripts write it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sessionctx.changes import Change, ChangeKind, Source


class Marker(NamedTuple):
    agent: str
    text: str
    prefix: bool = False  # the agent adds details after the text (a tool name, a time)
    error_only: bool = False  # only on a result the agent marked as an error


MARKERS: tuple[Marker, ...] = (
    # Claude Code 2.1.3xx, writing the JSONL of a session that ended mid-call
    Marker("claude-code", "[Tool call interrupted: the session ended before this call's "
           "result was recorded", prefix=True),
    Marker("claude-code", "[Tool use interrupted]"),
    # Codex: the output it sends for a call whose turn was aborted
    Marker("codex", "aborted"),
    # pydantic-ai: the return part it makes for a call left without one
    Marker("pydantic-ai", "The tool call was interrupted before a result was produced."),
    # Cline: the result it inserts for a tool_use with none after it
    Marker("cline", "Tool execution was interrupted before a result was produced.",
           prefix=True),
    Marker("cline", "result missing"),
    # Cline's SDK: the result it inserts for a call of the extension's history with none
    Marker("cline", "[migration] Tool result missing in legacy conversation history."),
    # Roo Code: the results it adds for the calls a resumed task left open
    # (Task.ts) and for a call with none when a message is saved (validateToolResultIds.ts)
    Marker("roo-code", "Task was interrupted before this tool call could be completed."),
    Marker("roo-code", "Tool execution was interrupted before completion."),
    # pi: the error result its loader adds for an unanswered call
    Marker("pi", "No result provided", error_only=True),
    # opencode: the error result it adds on replay for a pending or running tool
    Marker("opencode", "[Tool execution was interrupted]"),
    # Copilot CLI 1.0.x: the failed `tool.execution_complete` it writes on resuming a session
    # whose call has none
    Marker("copilot-cli", "Tool execution was interrupted before a result was recorded.",
           prefix=True, error_only=True),
    # Goose: the error response goose-cli (and its desktop app) writes for each call it was
    # interrupted in, and for one a tool's panic cut short
    Marker("goose", "Interrupted by the user to make a correction", error_only=True),
    Marker("goose", "An uncaught error happened during tool use", error_only=True),
    # LiteLLM with modify_params: the result it adds when translating for Anthropic
    Marker("litellm", "[System: Tool execution skipped/interrupted by user", prefix=True),
)
_LONGEST = max(len(m.text) for m in MARKERS)
# assistant messages an agent writes in the model's place: Claude Code 2.1.3xx after a session
# that ended mid-call
REPLIES: dict[str, str] = {"No response requested.": "claude-code"}


_MOST = _LONGEST + 2000  # a marker plus at most a few details: longer text is the tool's


def _text(message: dict[str, Any]) -> str | None:
    """The result's text when it is short text alone (no image, no structured output), else
    None; a long result is let go without joining its text."""
    content = message.get("content")
    if isinstance(content, str):
        return content.strip() if len(content) <= _MOST else None
    if not isinstance(content, list):
        return None
    parts = []
    size = 0
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "text":
            return None
        text = block.get("text")
        if not isinstance(text, str):
            return None
        size += len(text)
        if size > _MOST:
            return None
        parts.append(text)
    return "".join(parts).strip()


def written_by(result: dict[str, Any]) -> str | None:
    """The agent that wrote this tool result itself, or None when it is the tool's own."""
    text = _text(result)
    if not text:
        return None
    for marker in MARKERS:
        if marker.error_only and result.get("isError") is not True:
            continue
        if text == marker.text or (marker.prefix and text.startswith(marker.text)):
            return marker.agent
    return None


def agent_result_change(author: str, call_id: str | None, source: Source, *,
                        slot: int | None = None, dropped: bool = False) -> Change:
    """The change that names a result its agent wrote: kept as sent, or left out."""
    what = "left out" if dropped else "kept as the agent sent it"
    return Change(ChangeKind.RESULT_WRITTEN_BY_AGENT,
                  f"the result of call {call_id or '(no id)'} was written by {author} itself, "
                  f"not by the tool; the call's outcome is unknown and it is pending ({what})",
                  source, slot, {"tool_call_id": call_id, "agent": author, "dropped": dropped})


def reply_written_by(message: dict[str, Any]) -> str | None:
    """The agent that wrote this assistant message itself (no model did), or None."""
    content = message.get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) and \
            content[0].get("type") == "text" and isinstance(text := content[0].get("text"), str):
        return REPLIES.get(text.strip())
    return None


def reply_change(author: str, source: Source, *, slot: int | None = None,
                 dropped: bool = False) -> Change:
    """The change that names an assistant message its agent wrote in the model's place."""
    what = "left out" if dropped else "kept as the agent sent it"
    return Change(ChangeKind.RESULT_WRITTEN_BY_AGENT,
                  f"an assistant message written by {author} itself, not by a model ({what})",
                  source, slot, {"tool_call_id": None, "agent": author, "dropped": dropped})
