"""What a pi entry is: one description read by the reader and the writer. Entries are chained
by `id`/`parentId` (version 1 files have no ids: entries in file order); a message entry holds
pi's own message under `message`."""

from __future__ import annotations

import secrets
from typing import Any

ID, PARENT = "id", "parentId"  # the tree's links


def entry(anchor: dict[str, Any], parent: str | None, message: dict[str, Any], stamp: str
          ) -> tuple[dict[str, Any], str | None]:
    """A new message entry beside `anchor` (its own id, or none in a version 1 file)."""
    if "id" not in anchor:
        return {"type": "message", "timestamp": anchor.get("timestamp", stamp),
                "message": message}, None
    own = secrets.token_hex(4)
    return {"type": "message", "id": own, "parentId": parent,
            "timestamp": anchor.get("timestamp", stamp), "message": message}, own
