"""What a person sees of a session: the whole history as a chat UI shows it (no pairing or
checkpoint applied), and the text a local command becomes, which the fold sends as well."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sessionctx.messages import Message, text_of
from sessionctx.records import EXTENSION_MESSAGE, LOCAL_COMMAND, MESSAGE, SUMMARY, Record


def is_displayed(record: Record) -> bool:
    """Whether a chat UI shows this record: chat, local commands, summaries, and extension
    messages unless `display` is false."""
    if record.kind == EXTENSION_MESSAGE:
        return record.view.get("display") is not False
    return record.kind in (MESSAGE, LOCAL_COMMAND, SUMMARY)


def display_messages(records: Iterable[Record]) -> list[Message]:
    """What a chat UI shows: the whole history, no pairing or checkpoint applied; extension
    messages with `display: false` hidden."""
    out: list[Message] = []
    for record in records:
        if not is_displayed(record):
            continue
        view = record.view
        if record.kind != EXTENSION_MESSAGE:
            out.append(view)
        else:
            content = view.get("content")
            message: Message = {"role": "user", "content": content if content is not None
                                else ""}
            if "customType" in view:
                message["customType"] = view["customType"]
            carry_timestamp(view, message)
            out.append(message)
    return out


def render_local_command(view: dict[str, Any]) -> str:
    """The text a local command becomes: command, exit code (and signal), output."""
    code = view.get("exitCode")
    status = f"exit={code if isinstance(code, int) and not isinstance(code, bool) else '?'}"
    signal = view.get("signal")
    if signal not in (None, ""):
        status += f" signal={signal}"
    output = text_of(view.get("output")).strip()
    lines = ["<local_shell>", f"$ {str(view.get('command', '')).strip()}", status]
    lines.extend(["output:", output] if output else ["output: (empty)"])
    if view.get("truncated") is True:
        lines.append("[output truncated]")
    lines.append("</local_shell>")
    return "\n".join(lines)


def carry_timestamp(view: dict[str, Any], message: Message) -> None:
    if "timestamp" in view:
        message["timestamp"] = view["timestamp"]
