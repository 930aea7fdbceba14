"""A request body's violations located at the stored records their turns came from, so that
`check` names a file line ("line 12"), not a place in a body nobody sees ("messages[370]")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sessionctx.changes import Source
from sessionctx.messages import Message
from sessionctx.providers.violations import Violation

_TURN = re.compile(r"(?:messages|contents|input)\[(\d+)\]")


def located(violations: Sequence[Violation], messages: Sequence[Message],
            sources: Sequence[Source] | None, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Each violation as {"path", "message", "record"}: the record is where the first message
    that went into the violated turn was stored (None for a rule about the request as a whole,
    or a turn sessionctx added)."""
    if not violations:
        return []
    owner: dict[int, int] = {}
    if sources is not None and any(_TURN.match(v.path) for v in violations):
        from sessionctx.report.turns import turns_of_messages

        for j, turns in enumerate(turns_of_messages(messages, body)[1]):
            for k in turns:
                owner.setdefault(k, j)
    out = []
    for v in violations:
        match = _TURN.match(v.path)
        at = owner.get(int(match.group(1))) if match else None
        where = sources[at].to_json() if sources is not None and at is not None else None
        out.append({"path": v.path, "message": v.message, "record": where or None})
    return out
