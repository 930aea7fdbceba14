"""Which format a session file is in, from its first lines or its document shape."""

from __future__ import annotations

from typing import Any

from sessionctx import decoding
from sessionctx.formats.aider.reading import looks_like as looks_like_aider
from sessionctx.importers import common
from sessionctx.importers.common import is_in
from sessionctx.messages import MODEL_ROLES

NATIVE = "native"
_CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot",
                           "queue-operation", "progress"})
_CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg",
                          "compacted"})
_NATIVE_BLOCKS = frozenset({"toolCall", "thinking", "image"})


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
    if raw[:1] in (b"\n", b"#") and looks_like_aider(raw):
        return "aider"
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


def _detect_line(obj: dict[str, Any]) -> str | None:
    otype = obj.get("type")
    if otype is None and "role" not in obj and (
            ("sessionId" in obj and "projectHash" in obj) or "$set" in obj or "$rewindTo" in obj):
        return "gemini-cli-jsonl"  # its header or an update row
    if isinstance(otype, str) and otype.startswith(("session.", "user.", "assistant.", "tool.")
                                                   ) and isinstance(obj.get("data"), dict):
        return "copilot-cli"  # an event of its events.jsonl
    if is_in(otype, _CODEX_TYPES) and "payload" in obj:
        return "codex"
    if otype is None and ("record_type" in obj or ("instructions" in obj and "id" in obj
                                                    and "timestamp" in obj)):
        return "codex"  # the early rollout format: a bare header, then bare items
    if otype == "session" and ("version" in obj or "cwd" in obj):
        return "pi"
    if is_in(otype, _CLAUDE_TYPES) and ("uuid" in obj or "sessionId" in obj or "leafUuid" in obj
                                   or "messageId" in obj):
        return "claude-code"
    if otype == "message" and "parentId" in obj:
        return "pi"
    if "payload" not in obj and _responses_item(obj):
        return "openai-responses"
    if "role" in obj or obj.get("kind") == "context" or otype in ("compaction", "custom"):
        return NATIVE
    return None


_RESPONSES_SUFFIXES = ("_call", "_output", "_request", "_response", "_tools", "_reference")


def _responses_item(obj: dict[str, Any]) -> bool:
    """Whether a line is a Responses item; the importer's module, which says it exactly, is
    loaded only for a line shaped like one (a typed call, output or reasoning item, or a
    message with Responses parts), never for a native file's lines."""
    kind = obj.get("type")
    content = obj.get("content")
    if isinstance(kind, str) and kind != "message":
        shaped = kind == "reasoning" or kind.endswith(_RESPONSES_SUFFIXES) or (
            kind == "compaction" and "encrypted_content" in obj)
    else:
        shaped = isinstance(content, list) and any(
            isinstance(p, dict) and isinstance(p.get("type"), str)
            and p["type"].startswith(("input_", "output_", "refusal")) for p in content)
    if not shaped:
        return False
    from sessionctx.importers.openai_responses import is_responses_item

    return is_responses_item(obj)


def _detect_document(document: Any) -> str:
    from sessionctx.importers import anthropic, gemini_cli, openai_chat  # only documents
    from sessionctx.importers.openai_responses import is_item_list

    if isinstance(document, dict):
        if document.get("type") == "xopc_session_transcript":
            return NATIVE
        if is_in(document.get("role"), MODEL_ROLES):
            return "pi"
        line_format = _detect_line(document)  # a one-line JSONL file
        if line_format in ("codex", "claude-code", "pi", "openai-responses"):
            return line_format
        request_input = document.get("input")
        if "model" in document and isinstance(request_input, list) and (
                not request_input or is_item_list(request_input, evident=False)):
            return "openai-responses"  # a Responses request log
    if gemini_cli.messages_of(document) is not None:
        return "gemini-cli"
    if anthropic.messages_of(document) is not None:
        return "anthropic"  # before Responses: Roo Code keeps Responses reasoning items beside
        # its Anthropic messages
    if isinstance(document, list) and is_item_list(document):
        return "openai-responses"
    items = openai_chat.messages_of(document)
    if items is not None and openai_chat.is_chat_list(items):
        if isinstance(document, list) and _looks_native(items):
            return NATIVE
        return "openai-chat"
    return NATIVE


def _looks_native(items: list[Any]) -> bool:
    for item in items:
        if not isinstance(item, dict):
            continue
        if "tool_calls" in item or "function_call" in item or item.get("role") in (
                "tool", "function", "developer"):
            return False
        content = item.get("content")
        if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "image_url" for b in content):
            return False
    return True
