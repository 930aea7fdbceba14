"""A session in a store as a compaction target: the store's own last-seq guard does the check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionctx.compaction.target import Snapshot, TargetError, branch_of
from sessionctx.errors import SessionChanged, StoreError
from sessionctx.store import base


@dataclass(slots=True)
class StoreTarget:
    store: base.Store
    session: str

    @property
    def label(self) -> str:
        return f"session {self.session}"

    @property
    def unit(self) -> str:
        return "seq"

    def snapshot(self) -> Snapshot:
        try:
            records = self.store.records(self.session)
        except StoreError as exc:
            raise TargetError(f"{self.label}: {exc}") from exc
        if not records:
            raise TargetError(f"{self.label}: no such session, or it holds no records")
        last = records[-1].source.seq or 0
        selected, leaf = branch_of(records)
        return Snapshot(selected, [], last, leaf, last)

    def append(self, record: dict[str, Any], snapshot: Snapshot) -> int:
        try:
            return self.store.append_checkpoint(self.session, record,
                                                expected_last_seq=snapshot.guard)
        except SessionChanged as exc:
            raise SessionChanged(f"{self.label}: {exc}; checkpoint not written") from exc
        except StoreError as exc:
            raise TargetError(f"{self.label}: {exc}") from exc
