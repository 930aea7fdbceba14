"""Claude Code JSONL written back repaired: blocks out of their lines, the chain kept whole.

An unanswered `tool_use` block leaves the assistant line that holds it (an assistant message
streams one line per block, all with one `message.id`, so the block may be on any of them);
an orphan or duplicate `tool_result` block leaves its user line. A line left with no content
goes, and the lines that named it as `parentUuid` (or `logicalParentUuid`) name its parent.
"""

from __future__ import annotations

import bisect
import uuid
from datetime import UTC, datetime
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.formats.anthropic.order import results_after_other_blocks, results_first
from sessionctx.formats.claude_code.lines import (
    CONTENT,
    ID,
    OTHER_PARENTS,
    PARENT,
    of_this_agent,
    own_side,
)
from sessionctx.records import MESSAGE, ReadResult
from sessionctx.writeback import spans
from sessionctx.writeback.common import delete_members, dig, last, remove_unreadable
from sessionctx.writeback.edits import REMOVED_EMPTY, Fix, Lines
from sessionctx.writeback.links import LinkKeys, Links
from sessionctx.writeback.notes import NoteMaker
from sessionctx.writeback.wanted import REUSED_REASON, Reused, Wanted

__all__ = ["KEYS", "note", "plan"]
KEYS = LinkKeys(ID, PARENT, OTHER_PARENTS)
_CARRIED = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")


def note(anchor: dict[str, Any], parent: str | None, text: str
         ) -> tuple[dict[str, Any], str | None]:
    """A user entry after `anchor`, carrying its session fields, with an id of its own."""
    own = str(uuid.uuid4())
    entry: dict[str, Any] = {"parentUuid": parent}
    entry.update({k: anchor[k] for k in _CARRIED if k in anchor})
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    entry.update({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": text}]}, "uuid": own,
        "timestamp": anchor.get("timestamp", stamp)})
    return entry, own


def _blocks(obj: dict[str, Any] | None) -> list[Any]:
    content = dig(obj, CONTENT)
    return content if isinstance(content, list) else []


def _streamed(lines: Lines) -> dict[str, list[int]]:
    """The lines of each assistant message of the file's own agent (in a subagent's own
    transcript, its sidechain), by message id, in file order: made once, since no edit
    changes a line's type, chain or message id."""
    out: dict[str, list[int]] = {}
    entries = [(m, o) for m in lines.numbers() if (o := lines.obj(m)) is not None]
    own = own_side(o for _, o in entries)
    for m, o in entries:
        if o.get("type") == "assistant" and of_this_agent(o, own):
            mid = dig(o, ("message", "id"))
            if isinstance(mid, str):
                out.setdefault(mid, []).append(m)
    return out


def _message_id(lines: Lines, n: int) -> str | None:
    mid = dig(lines.obj(n), ("message", "id"))
    return mid if isinstance(mid, str) else None


def _group(streamed: dict[str, list[int]], n: int, mid: str | None) -> list[int]:
    """The lines of the assistant message `mid` from line `n` on (one per streamed block)."""
    if mid is None:
        return [n]
    held = streamed.get(mid, [])
    return held[bisect.bisect_left(held, n):]


Held = list[tuple[int, int, Any]]  # (line, index in its content, the block)


def _calls_by_id(lines: Lines, group: list[int]) -> dict[str | None, Held]:
    """The `tool_use` blocks on the lines of `group`, by call id (None: an id that is not a
    string): one pass over a message however many of its calls went unanswered."""
    out: dict[str | None, Held] = {}
    for m in group:
        for i, b in enumerate(_blocks(lines.obj(m))):
            if isinstance(b, dict) and b.get("type") == "tool_use":
                cid = b.get("id")
                out.setdefault(cid if isinstance(cid, str) else None, []).append((m, i, b))
    return out


def _matches(block: Any, btype: str, key: str, call_id: str | None) -> bool:
    if not isinstance(block, dict) or block.get("type") != btype:
        return False
    value = block.get(key)
    return value == call_id if call_id is not None else not isinstance(value, str)


def plan(lines: Lines, result: ReadResult, wanted: Wanted, notes: NoteMaker | None
         ) -> list[Fix]:
    fixes = remove_unreadable(lines, result.problems)
    cut: dict[int, set[int]] = {}  # line -> content indexes to take out
    streamed = _streamed(lines) if wanted.unpaired or wanted.empty or wanted.reused else {}
    fixes.extend(_rename_reused(lines, streamed, wanted.reused))
    calls: dict[str, dict[str | None, Held]] = {}  # a streamed message's calls, by its id
    for (n, call_id), changes in wanted.unpaired.items():
        mid = _message_id(lines, n)
        group = _group(streamed, n, mid)
        if mid in streamed:
            if mid not in calls:
                calls[mid] = _calls_by_id(lines, streamed[mid])
            by_id = calls[mid]
        else:
            by_id = _calls_by_id(lines, group)
        held = [c for c in by_id.get(call_id, []) if c[0] >= n]  # the group: from line n on
        distinct: list[Any] = []  # a later streamed line may repeat a block already held
        for _, _, block in held:
            if block not in distinct:
                distinct.append(block)
        gone = last(distinct, len(changes))
        for m, i, block in held:
            if block in gone:
                cut.setdefault(m, set()).add(i)
                fixes.append(Fix(ChangeKind.DROPPED_UNPAIRED_CALL, changes[0].reason, line=m,
                                 detail={"tool_call_id": call_id,
                                         "name": block.get("name")}))
        if notes is not None and gone:
            notes.after(group[-1], changes)
    for (n, call_id), changes in wanted.results.items():
        held_at = [i for i, b in enumerate(_blocks(lines.obj(n)))
                   if _matches(b, "tool_result", "tool_use_id", call_id)]
        for i, change in zip(last(held_at, len(changes)), changes, strict=False):
            cut.setdefault(n, set()).add(i)
            fixes.append(Fix(change.kind, change.reason, line=n,
                             detail={"tool_call_id": call_id}))
    fixes.extend(_results_first(lines, result))
    for m, indexes in sorted(cut.items()):
        delete_members(lines, m, CONTENT, sorted(indexes))
        if not _blocks(lines.obj(m)):
            lines.remove(m)
            fixes.append(Fix(REMOVED_EMPTY, "nothing is left on the line", line=m,
                             action="removed"))
    for n, change in wanted.empty.items():
        for m in _group(streamed, n, _message_id(lines, n)):
            if m not in lines.removed:
                lines.remove(m)
                fixes.append(Fix(REMOVED_EMPTY, change.reason, line=m, action="removed"))
    if notes is not None:
        fixes.extend(notes.write(lines, KEYS))
    fixes.extend(Links(lines, lines.removed, KEYS).relink())
    return fixes


def _results_first(lines: Lines, result: ReadResult) -> list[Fix]:
    """The user entries read as the conversation whose tool results follow another block get
    their results first, as `build` sends them (Claude Code sends the entry as stored)."""
    fixes = []
    read = sorted({n for r in result.records if r.kind == MESSAGE
                   and (n := r.source.line) is not None})
    for n in read:
        obj = lines.obj(n)
        if obj is None or obj.get("type") != "user" or not results_after_other_blocks(
                obj.get("message")):
            continue
        order = results_first(_blocks(obj))
        lines.put(n, spans.reordered(lines.text(n), list(CONTENT), order))
        fixes.append(Fix(ChangeKind.RESULTS_MOVED, "tool results put before the other blocks "
                         "of their user entry, as the API takes them", line=n))
    return fixes


def _rename_reused(lines: Lines, streamed: dict[str, list[int]], reused: list[Reused]
                   ) -> list[Fix]:
    """A `tool_use` that reuses an earlier call's id, and the `tool_result` answering it, get
    a new id: both pairs stay, as the API takes them (it refuses a repeated tool_use id).
    Only the id's bytes change, so block indexes hold for the edits that follow."""
    fixes = []
    for r in reused:
        group = _group(streamed, r.call_at, _message_id(lines, r.call_at))
        held: Held = []
        for m in group:  # a later streamed line may repeat a block already held
            for i, b in enumerate(_blocks(lines.obj(m))):
                if _matches(b, "tool_use", "id", r.old) and all(
                        b != h[2] for h in held if h[0] != m):
                    held.append((m, i, b))
        if r.call_nth >= len(held):
            continue
        m, i, _ = held[r.call_nth]
        lines.put(m, spans.replace(lines.text(m), [*CONTENT, i, "id"], r.new))
        detail = {"old": r.old, "new": r.new}
        fixes.append(Fix(ChangeKind.DUPLICATE_ID_RENAMED, REUSED_REASON, line=m, detail=detail))
        if r.result_at is None:
            continue
        at = [j for j, b in enumerate(_blocks(lines.obj(r.result_at)))
              if _matches(b, "tool_result", "tool_use_id", r.old)]
        if r.result_nth < len(at):
            lines.put(r.result_at, spans.replace(
                lines.text(r.result_at), [*CONTENT, at[r.result_nth], "tool_use_id"], r.new))
            fixes.append(Fix(ChangeKind.DUPLICATE_ID_RENAMED, "the result answers the renamed "
                             "call", line=r.result_at,
                             detail={"old": r.old, "new": r.new}))
    return fixes
