"""Whether a line is a Gemini CLI chat row only its JSONL files hold: the header or an update."""

from __future__ import annotations

from typing import Any


def line(obj: dict[str, Any]) -> bool:
    if "type" in obj or "role" in obj:
        return False
    return ("sessionId" in obj and "projectHash" in obj) or "$set" in obj or "$rewindTo" in obj


def document(doc: Any) -> bool:
    return False  # a one-row file is the JSON format's session document
