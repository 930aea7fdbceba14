"""Repairing a session in a store: stored rows are never rewritten, so the repaired context
is appended as a checkpoint, which every later read starts from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionctx.compaction.checkpoint import checkpoint_record
from sessionctx.compaction.target import Target
from sessionctx.compaction.tokens import total
from sessionctx.context import BuildOptions, Context, build_context


@dataclass(slots=True)
class StoreRepair:
    context: Context  # the repaired context, with every change that made it
    record: dict[str, Any] | None  # the checkpoint appended, None when nothing needed repair
    seq: int | None


def repair_session(target: Target, *, note_unpaired: bool = False,
                   dry_run: bool = False) -> StoreRepair:
    """Append a checkpoint holding the repaired context of the target's session, if it needs
    one. Raises the target's `SessionChanged` when a record was appended meanwhile."""
    snapshot = target.snapshot()
    ctx = build_context(snapshot.records, BuildOptions(note_unpaired=note_unpaired))
    if not ctx.repairs:
        return StoreRepair(ctx, None, None)
    kinds = sorted({c.kind for c in ctx.repairs})
    record = checkpoint_record(
        snapshot, summary="", messages=ctx.messages, first_kept_index=0,
        tokens_before=total(ctx.messages), model_ref="sessionctx-repair",
        quality_audit=f"repair: {len(ctx.repairs)} change(s) ({', '.join(kinds)})")
    if dry_run:
        return StoreRepair(ctx, record, None)
    return StoreRepair(ctx, record, target.append(record, snapshot))
