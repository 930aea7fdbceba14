"""Documents (PDF and plain text) stored in records, read from the shapes agents store them in
and kept within each provider's limits (docs/provider-rules.md §1.5, §2, §3, §4, §5).

The native block is `{"type": "document", "mimeType", "data" (base64) or "text", "name"?}`.
Stored records also hold Anthropic `document` blocks (Claude Code keeps them in user messages
and Read results), OpenAI Chat `file` parts and Responses `input_file` parts; each is read into
the native block here, the one place that knows those shapes. A document given by URL or file
id carries no content to send, so it is not read.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING, Any

from sessionctx.changes import ChangeKind
from sessionctx.messages import PDF as PDF
from sessionctx.messages import DocumentBlock, StoredBlock, TextBlock

if TYPE_CHECKING:
    from sessionctx.providers.policies.turns import Block

TEXT = "text/plain"
DOCUMENT_KINDS = frozenset({"document", "file", "input_file"})

# Kinds of change about documents.
DOCUMENT_OMITTED = ChangeKind.DOCUMENT_OMITTED
DOCUMENT_NOTE_ADDED = ChangeKind.DOCUMENT_NOTE_ADDED

_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def read(block: StoredBlock) -> DocumentBlock | None:
    """The native document block for any stored shape of one, or None."""
    kind = block.get("type")
    if kind == "document":
        if isinstance(block.get("data"), str) or isinstance(block.get("text"), str):
            mime = block.get("mimeType", block.get("mime_type"))
            return _native(block.get("data"), block.get("text"),
                           mime if isinstance(mime, str) else None, block.get("name"))
        source = block.get("source")
        if not isinstance(source, dict):
            return None
        name = block.get("title", block.get("name"))
        if source.get("type") == "base64":
            return _native(source.get("data"), None, source.get("media_type"), name)
        if source.get("type") == "text":
            return _native(None, source.get("data"), TEXT, name)
        return None
    if kind == "file":
        inner = block.get("file")
        if isinstance(inner, dict):
            return _from_data_url(inner.get("file_data"), inner.get("filename"))
        return None
    if kind == "input_file":
        return _from_data_url(block.get("file_data"), block.get("filename"))
    return None


def _from_data_url(url: Any, name: Any) -> DocumentBlock | None:
    if not isinstance(url, str):
        return None
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        if head == TEXT:  # a text file is sent as text where a provider takes it
            text = _utf8(data)
            if text is not None:
                return _native(None, text, TEXT, name)
        return _native(data, None, head or None, name)
    return _native(url, None, None, name)  # Responses also takes the bare base64


def _utf8(data: str) -> str | None:
    try:
        return base64.b64decode(data, validate=True).decode()
    except (binascii.Error, ValueError):
        return None


def _native(data: Any, text: Any, mime: Any, name: Any) -> DocumentBlock | None:
    out: DocumentBlock
    if isinstance(text, str):
        out = {"type": "document", "text": text, "mimeType": TEXT}
    elif isinstance(data, str) and data:
        out = {"type": "document", "data": data, "mimeType": mime if isinstance(mime, str) and
               mime else (PDF if data.startswith("JVBER") else "application/octet-stream")}
    else:
        return None
    if isinstance(name, str) and name:
        out["name"] = name
    return out


def raw_bytes(document: DocumentBlock) -> bytes | None:
    """The document's bytes, or None when its data is not valid base64."""
    if "text" in document:
        return document["text"].encode()
    try:
        return base64.b64decode(document["data"], validate=True)
    except (binascii.Error, ValueError):
        return None


def pages(raw: bytes) -> int:
    """The pages of a PDF, counted from its page objects (0 when none can be found, as in a
    PDF whose objects are all compressed)."""
    return len(_PAGE.findall(raw))


def label(document: DocumentBlock) -> str:
    return str(document.get("name") or ("text document" if "text" in document
                                        else "PDF document"))


def note(document: DocumentBlock, why: str) -> TextBlock:
    """The text block that stands in for a document that cannot be sent."""
    return {"type": "text", "text": f"[document omitted: {label(document)} {why}]"}


def text_part(document: DocumentBlock) -> str:
    """A text document as the text that carries it where a provider takes text only."""
    return f"[document: {label(document)}]\n{document['text']}"


def result_texts_and_files(content: list[Block]) -> tuple[list[str], list[Block]]:
    """A tool result's texts (a text document's own text among them) and the images and other
    files it holds, for the APIs whose tool result carries text only and whose renderer sends
    the files beside it."""
    texts: list[str] = []
    files: list[Block] = []
    for part in content:
        if part["type"] == "text":
            texts.append(part["text"])
        elif part["type"] == "document":
            if "text" in part:
                texts.append(text_part(part))
            else:
                files.append(part)
        elif part["type"] == "image":
            files.append(part)
    return texts, files


def file_name(document: DocumentBlock) -> str:
    """A file name for APIs that need one."""
    name = document.get("name")
    if isinstance(name, str) and name:
        return name
    return "document.pdf" if document.get("mimeType") == PDF else "document.txt"


_BEDROCK_NAME = re.compile(r"[^A-Za-z0-9 \-()\[\]]")


def bedrock_name(document: DocumentBlock, used: set[str]) -> str:
    """Bedrock's document name: letters, digits, single spaces, hyphens, parentheses and
    square brackets, at most 200 characters, distinct within the request."""
    base = _BEDROCK_NAME.sub("-", file_name(document).rsplit(".", 1)[0])
    base = re.sub(r"\s+", " ", base).strip()[:190] or "document"
    name, n = base, 1
    while name in used:
        n += 1
        name = f"{base} ({n})"
    used.add(name)
    return name
