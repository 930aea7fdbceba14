"""Whether a line or document is a Codex rollout's."""

from __future__ import annotations

from typing import Any

from sessionctx.formats.codex.lines import TYPES
from sessionctx.formats.common import is_in


def line(obj: dict[str, Any]) -> bool:
    otype = obj.get("type")
    if is_in(otype, TYPES) and "payload" in obj:
        return True
    # the early rollout format: a bare header, then bare items
    return otype is None and ("record_type" in obj or ("instructions" in obj and "id" in obj
                                                        and "timestamp" in obj))


def document(doc: Any) -> bool:
    return isinstance(doc, dict) and line(doc)  # a one-line file
