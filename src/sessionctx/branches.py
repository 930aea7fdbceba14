"""Tree-shaped sessions (pi): the branch from the root to a leaf, and the entries off it."""

from __future__ import annotations

from collections.abc import Iterable

from sessionctx.errors import NoSuchEntry
from sessionctx.kinds import Record


def _is_node(record: Record) -> bool:
    return "parentId" in record.data and isinstance(record.data.get("id"), str)


def has_tree(records: Iterable[Record]) -> bool:
    return any(_is_node(r) for r in records)


def select_branch(records: list[Record], leaf: str | None = None
                  ) -> tuple[list[Record], list[Record]]:
    """The records on the path from the root to `leaf` (default: the last entry of the tree),
    and those left off it. Records that are not tree entries (a session header) stay."""
    if leaf is None and _is_chain(records):
        return records, []  # every entry is on the one branch
    nodes = [r for r in records if _is_node(r)]
    if not nodes:
        return records, []
    by_id = id_index(nodes)
    if leaf is None:
        leaf = nodes[-1].data["id"]
    elif leaf not in by_id:
        raise NoSuchEntry(leaf)
    on_path: set[str] = set()
    current: str | None = leaf
    while current is not None and current in by_id and current not in on_path:
        on_path.add(current)
        parent = by_id[current].data.get("parentId")
        current = parent if isinstance(parent, str) else None
    kept: list[Record] = []
    off: list[Record] = []
    for r in records:
        (kept if not _is_node(r) or r.data["id"] in on_path else off).append(r)
    return kept, off


def _is_chain(records: list[Record]) -> bool:
    """Whether the tree entries form one linear branch: the first is a root, each other's
    parent is the entry before it, and no id repeats. Most sessions are one; this one pass
    then stands for the index and the walk."""
    previous: str | None = None
    seen: set[str] = set()
    for r in records:
        data = r.data
        if "parentId" not in data:
            continue
        node_id = data.get("id")
        if not isinstance(node_id, str):
            continue
        if data["parentId"] != previous or node_id in seen:
            return False
        seen.add(node_id)
        previous = node_id
    return True


def id_index(records: Iterable[Record]) -> dict[str, Record]:
    """Each record with a string id under that id; the last one wins a repeated id."""
    return {r.data["id"]: r for r in records if isinstance(r.data.get("id"), str)}
