"""The rows of `explain`: each stored record beside what a person sees and what the model gets.

A record is matched to the context messages it became and to the changes that concern it by
where it came from; a change about one line of a record gathered from several lines (a
streamed Claude Code message, a Codex turn) is the record's too. A run of records that never
reach the model and that nothing else concerns folds into one line, so a real file reads as
its conversation rather than as hundreds of bookkeeping lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.context import Context, is_displayed, nothing_sent
from sessionctx.records import (
    CHECKPOINT,
    CONTEXT,
    EXTENSION_STATE,
    METADATA,
    Record,
    SourceKey,
    owner_keys,
)
from sessionctx.render import counted, one_line, summarize_message

Key = SourceKey
QUIET_KINDS = frozenset({CONTEXT, METADATA, EXTENSION_STATE})
QUIET_CHANGES = frozenset({ChangeKind.SKIPPED_CONTEXT_ROW, ChangeKind.SKIPPED_METADATA,
                           ChangeKind.SKIPPED_EXTENSION_STATE})
_RULE = f"{'-' * 14} {'-' * 18} {'-' * 8} {'-' * 40}"


@dataclass(slots=True)
class _Matches:
    """Context messages and changes, found by the record they concern."""

    targets: dict[Key, list[int]] = field(default_factory=dict)
    changes: dict[Key, list[Change]] = field(default_factory=dict)
    unmatched: list[Change] = field(default_factory=list)


def _match(records: list[Record], ctx: Context) -> _Matches:
    owner = owner_keys(records)
    out = _Matches()
    for i, src in enumerate(ctx.sources):
        out.targets.setdefault(owner.get(Source.key(src), Source.key(src)), []).append(i)
    for change in ctx.changes:
        found = owner.get(Source.key(change.record)) if change.record is not None else None
        if found is None:
            out.unmatched.append(change)
        else:
            out.changes.setdefault(found, []).append(change)
    return out


def explain_lines(records: list[Record], ctx: Context, label: str | None = None,
                  fmt: str | None = None) -> list[str]:
    """The explain report: a header naming the format read, one row per record (quiet runs
    folded), the changes that name no listed record, and the totals."""
    matches = _match(records, ctx)
    rows = [f"{label or '<input>'}: read as {fmt}"] if fmt is not None else []
    rows += [f"{'record':<14} {'kind':<18} {'display':<8} context", _RULE]
    run: list[Record] = []
    fates: dict[Key, str] = {}  # records a reader split from one stored record share theirs
    for record in records:
        key = Source.key(record.source)
        concerns = matches.changes.get(key, [])
        targets = matches.targets.get(key)
        if _is_quiet(record, targets, concerns):
            run.append(record)
            continue
        rows.extend(_run_rows(run, matches))
        run = []
        held = _held(record, matches) if record.kind == CHECKPOINT else []
        if key not in fates:
            fates[key] = index_ranges(targets) if targets else "not sent"
        rows.extend(_record_rows(record, fates[key], concerns, held))
    rows.extend(_run_rows(run, matches))
    if matches.unmatched:
        rows.append("\nchanges to entries not listed above:")
        rows.extend(f"{c.record.label() if c.record else '-':<14} ^ {c.kind}: {c.reason}"
                    for c in matches.unmatched)
    rows.append(f"\n{counted(len(records), 'record')} stored, "
                f"{counted(len(ctx.messages), 'message')} for the model, "
                f"{counted(len(ctx.repairs), 'repair')}")
    empty = nothing_sent(records, ctx)
    if empty is not None:
        rows.append(empty)
    return rows


def explain_json(records: list[Record], ctx: Context, fmt: str | None = None
                 ) -> dict[str, Any]:
    """What `explain_lines` shows, one object per stored record (none folded): its kind,
    whether a person sees it, the context messages it became and the changes about it."""
    matches = _match(records, ctx)
    rows = []
    for record in records:
        key = Source.key(record.source)
        rows.append({"record": record.source.to_json(), "kind": record.kind,
                     "displayed": is_displayed(record),
                     "context": matches.targets.get(key, []),
                     "changes": [c.to_json() for c in matches.changes.get(key, [])]})
    return {"format": fmt, "records": rows,
            "other_changes": [c.to_json() for c in matches.unmatched],
            "messages": len(ctx.messages), "repairs": len(ctx.repairs),
            "nothing_sent": nothing_sent(records, ctx)}


def _is_quiet(record: Record, targets: list[int] | None, concerns: list[Change]) -> bool:
    return record.kind in QUIET_KINDS and not targets and all(
        c.kind in QUIET_CHANGES for c in concerns)


def _held(record: Record, matches: _Matches) -> list[int]:
    """The context messages a checkpoint gives: its own, and those of the records it kept."""
    held = list(matches.targets.get(Source.key(record.source), []))
    for line in set(record.source.message_lines or ()) - {record.source.line, None}:
        held.extend(matches.targets.get((line, None, None), []))
    return held


def _record_rows(record: Record, fate: str, concerns: list[Change],
                 held: list[int] | None = None) -> list[str]:
    """`fate`: the context messages the record became, as index ranges, or "not sent"."""
    displayed = "shown" if is_displayed(record) else "hidden"
    if record.kind == CHECKPOINT:
        what = _checkpoint_summary(record, held or [])
    elif record.kind in QUIET_KINDS:
        what = _what(record)
    else:
        what = summarize_message(record.view, 50)
    rows = [f"{record.source.span_label():<14} {record.kind:<18} {displayed:<8} {fate}  {what}"]
    rows.extend(f"{'':<14} {'':<18} {'':<8} ^ {c.kind}: {c.reason}" for c in concerns)
    return rows


def _run_rows(run: list[Record], matches: _Matches) -> list[str]:
    """A run of quiet records: one row each when alone, else one line for all of them."""
    if len(run) == 1:
        key = Source.key(run[0].source)
        return _record_rows(run[0], "not sent", matches.changes.get(key, []))
    if not run:
        return []
    by_kind: dict[str, dict[str, int]] = {}
    for record in run:
        whats = by_kind.setdefault(record.kind, {})
        what = _what(record)
        whats[what] = whats.get(what, 0) + 1
    parts = [", ".join(f"{w} ×{n}" for w, n in whats.items()) for whats in by_kind.values()]
    if len(by_kind) == 1:
        held = f"{len(run)} {next(iter(by_kind))} rows ({parts[0]})"
    else:
        held = f"{len(run)} rows (" + "; ".join(
            f"{kind}: {p}" for kind, p in zip(by_kind, parts, strict=True)) + ")"
    return [f"{_span(run[0].source, run[-1].source)}: {held}, not sent"]


def _what(record: Record) -> str:
    """What a quiet record is, in a word or two: the importer's note, or its type."""
    view = record.view
    note = view.get("note")
    if record.kind == CONTEXT and isinstance(note, str) and note:
        return note.removesuffix(" line").removesuffix(" item")
    for key in ("customType", "type"):
        value = view.get(key)
        if isinstance(value, str) and value:
            return value
    return record.kind


def _span(first: Source, last: Source) -> str:
    for attr, plural in (("seq", "seq"), ("line", "lines"), ("index", "items")):
        a, b = getattr(first, attr), getattr(last, attr)
        if a is not None and b is not None:
            return f"{plural} {a}–{b}"
    return f"{first.label()}–{last.label()}"


def _checkpoint_summary(record: Record, held: list[int]) -> str:
    view = record.view
    summary = view.get("summary")
    first = summary.strip().splitlines()[0] if isinstance(summary, str) and summary.strip() \
        else ""
    messages = view.get("messages")
    count = len(messages) if isinstance(messages, list) else 0
    gives = f", giving {index_ranges(held)}" if held else ""
    return f"checkpoint of {counted(count, 'message')}{gives}, summary {one_line(first, 60)!r}"


def index_ranges(indices: Iterable[int]) -> str:
    """`#0–#4, #7` for 0, 1, 2, 3, 4, 7: a long list of messages in a few characters."""
    out: list[str] = []
    start = prev = None
    for i in sorted(indices):
        if prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            out.append(f"#{start}" if start == prev else f"#{start}–#{prev}")
        start = prev = i
    if start is not None:
        out.append(f"#{start}" if start == prev else f"#{start}–#{prev}")
    return ", ".join(out)
