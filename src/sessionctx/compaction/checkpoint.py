"""Checkpoints: the compaction record, the pipeline that writes it, and restore.

A checkpoint's messages are the summary message followed by the kept messages, pair-checked by
the core build. A session file in an agent's format gets that agent's own compaction entry
instead (compaction/own.py), made from the same plan and summary. The next compaction plans
over those messages plus what came after, so what one compaction kept is never lost by the
next. Restore appends a checkpoint holding the context as it was before a given checkpoint;
nothing is ever deleted.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import msgspec

from sessionctx.compaction import own
from sessionctx.compaction.audit import (
    DEFAULT_MAX_IDENTIFIERS,
    AuditResult,
    audit,
    audit_record,
    required_identifiers,
)
from sessionctx.compaction.planner import (
    DEFAULT_KEEP_TOKENS,
    DEFAULT_KEEP_TURNS,
    PLANNER_VERSION,
    Plan,
    is_summary_message,
    plan,
    summary_text,
)
from sessionctx.compaction.prompt import build_prompt, chunks, repair_prompt, summary_message
from sessionctx.compaction.summarizers import Summarizer
from sessionctx.compaction.target import FileTarget, Snapshot, Target
from sessionctx.compaction.tokens import TokenCounter, estimate_message, total
from sessionctx.context import BuildOptions, build_context
from sessionctx.errors import CompactionError
from sessionctx.gcpause import paused_gc
from sessionctx.messages import Message
from sessionctx.records import (
    CHECKPOINT,
    DEFAULT_MAX_LINE_BYTES,
    Record,
    records_from_objects,
)

RESTORE_REF = "logical-restore"
# a checkpoint's summary is its first message; the `summary` field says so rather than hold a
# second copy of it
SUMMARY_IN_MESSAGES = "The summary is the first message of this checkpoint's messages."
DEFAULT_CHUNK_TOKENS = 24_000


class AuditFailed(CompactionError):
    def __init__(self, result: AuditResult) -> None:
        super().__init__("summary failed the quality audit after one repair attempt: "
                         f"{result.describe()}; nothing was written")
        self.result = result


@dataclass(frozen=True, slots=True)
class Settings:
    keep_turns: int = DEFAULT_KEEP_TURNS
    keep_tokens: int = DEFAULT_KEEP_TOKENS
    force: bool = False
    max_identifiers: int = DEFAULT_MAX_IDENTIFIERS
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS
    build: BuildOptions = field(default_factory=BuildOptions)
    counter: TokenCounter = estimate_message


@dataclass(frozen=True, slots=True)
class SummaryJob:
    """Everything decided before the summarizer runs (what a dry run shows)."""

    snapshot: Snapshot
    plan: Plan
    identifiers: list[str]
    chunks: list[list[Message]]
    settings: Settings

    def prompt_for(self, index: int, running_summary: str | None) -> str:
        """The prompt for chunk `index`, given the summary so far."""
        return build_prompt(self.chunks[index], running_summary, self.identifiers,
                            part=(index + 1, len(self.chunks)),
                            max_record_chars=self.settings.chunk_tokens * 4)

    @property
    def prompt(self) -> str:
        """The first prompt (the only one when the records fit one chunk)."""
        return self.prompt_for(0, self.plan.previous_summary)


@dataclass(frozen=True, slots=True)
class Written:
    record: dict[str, Any]  # the checkpoint: what the model is given from here on
    position: int  # the new record's line (file) or seq (store)
    job: SummaryJob
    entry: dict[str, Any] | None = None  # the line appended in the agent's own format, if so

    @property
    def summary(self) -> str:
        """The summary the checkpoint holds (in its first message), or a restore's note."""
        first = self.record["messages"][0] if self.record["messages"] else {}
        return summary_text(first) if is_summary_message(first) else self.record["summary"]


def pair_checked(messages: list[Message], options: BuildOptions) -> list[Message]:
    """The messages as the core build leaves them: pairs intact, nothing unpaired.

    The collector is paused as for a read: the records made here are many small acyclic
    objects, and a collection meanwhile would rescan the whole session held in memory."""
    with paused_gc():
        return build_context(records_from_objects(messages), options).messages


def prepare(snapshot: Snapshot, settings: Settings,
            messages: list[Message] | None = None) -> SummaryJob:
    """Plan over the snapshot's context; `messages` is that context when already built."""
    if messages is None:
        messages = build_context(snapshot.records, settings.build).messages
    p = plan(messages, keep_turns=settings.keep_turns, keep_tokens=settings.keep_tokens,
             force=settings.force, counter=settings.counter)
    summarized = p.summarized
    identifiers = required_identifiers(summarized, p.previous_summary,
                                       limit=settings.max_identifiers)
    return SummaryJob(snapshot, p, identifiers,
                    chunks(summarized, p.summarized_sizes, settings.chunk_tokens), settings)


def summarize_audited(job: SummaryJob, summarizer: Summarizer
                      ) -> tuple[str, AuditResult, bool]:
    """The summary, its passing audit and whether a repair was needed; AuditFailed if the one
    repair attempt fails too. Each chunk's summary is carried into the next chunk's prompt.
    Summarizer errors propagate."""
    summary = job.plan.previous_summary
    prompt = ""
    for index in range(len(job.chunks)):
        prompt = job.prompt_for(index, summary)
        summary = summarizer.summarize(prompt)
    assert summary is not None
    result = audit(summary, job.identifiers)
    if result.ok:
        return summary, result, False
    summary = summarizer.summarize(repair_prompt(prompt, summary, result.failures()))
    result = audit(summary, job.identifiers)
    if not result.ok:
        raise AuditFailed(result)
    return summary, result, True


def new_id() -> str:
    return uuid.uuid4().hex


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def checkpoint_record(snapshot: Snapshot, *, summary: str, messages: list[Message],
                      first_kept_index: int, tokens_before: int, model_ref: str,
                      quality_audit: Any, counter: TokenCounter = estimate_message,
                      restored_from: str | None = None,
                      at: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "compaction", "id": new_id()}
    if snapshot.leaf_id is not None:
        record["parentId"] = snapshot.leaf_id
    at = at or _now()
    record.update({
        "timestamp": at, "at": at, "baseSeq": snapshot.base_seq,
        "plannerVersion": PLANNER_VERSION, "summaryModelRef": model_ref,
        "qualityAudit": quality_audit, "summary": summary, "messages": messages,
        "firstKeptIndex": first_kept_index, "tokensBefore": tokens_before,
        "tokensAfter": total(messages, counter)})
    if restored_from is not None:
        record["restoredFromCompactionId"] = restored_from
    return record


def compact(target: Target, summarizer: Summarizer, settings: Settings | None = None,
            *, snapshot: Snapshot | None = None,
            messages: list[Message] | None = None) -> Written:
    """Plan, summarize, audit and append one checkpoint; any failure writes nothing.

    `snapshot` and `messages` (its built context) may be passed when the caller has them.
    """
    settings = settings or Settings()
    snapshot = snapshot or target.snapshot()
    write_own = own.writer(target.label, snapshot.format)
    job = prepare(snapshot, settings, messages)
    summary, result, repaired = summarize_audited(job, summarizer)
    p = job.plan
    message = summary_message(summary)
    replaced = p.tokens_before - p.tokens_kept
    tokens = settings.counter(message)
    if tokens >= replaced:
        raise CompactionError(f"the summary is {tokens} tokens, not fewer than the {replaced} "
                              "tokens of the messages it would replace; nothing was written")
    record = checkpoint_record(job.snapshot, summary=SUMMARY_IN_MESSAGES,
                               messages=[message, *pair_checked(p.kept, settings.build)],
                               first_kept_index=p.cut, tokens_before=p.tokens_before,
                               model_ref=summarizer.ref,
                               quality_audit=audit_record(result, repaired=repaired),
                               counter=settings.counter)
    if write_own is not None:
        if not isinstance(target, FileTarget):
            raise CompactionError("an agent's own compaction goes to its file; nothing written")
        lines = write_own(snapshot.raw, summary=summary, tokens_before=p.tokens_before,
                          kept_lines=own.kept_lines(snapshot.records, settings.build, p.cut),
                          at=record["at"])
        position = target.append_lines([within_limit(x) for x in lines], snapshot)
        return Written(record, position, job, lines[0])
    position = target.append(within_limit(record), job.snapshot)
    return Written(record, position, job)


def within_limit(record: dict[str, Any]) -> dict[str, Any]:
    """`record`, if its line stays under the limit readers skip a line at; else an error."""
    size = len(msgspec.json.encode(record))
    if size > DEFAULT_MAX_LINE_BYTES:
        raise CompactionError(f"the checkpoint would be {size / 1048576:.1f} MiB, over the "
                              f"{DEFAULT_MAX_LINE_BYTES / 1048576:.0f} MiB a record may take "
                              "(readers skip a longer line); nothing was written")
    return record


def find_checkpoint(records: list[Record], ref: str) -> int:
    """The index of the checkpoint named by its id, or by its line or seq number."""
    for i, r in enumerate(records):
        if r.kind != CHECKPOINT:
            continue
        src = r.source
        if r.data.get("id") == ref or ref in (str(src.line), str(src.seq)):
            if r.problem is not None:
                raise CompactionError(f"{r.source.label()} is a malformed checkpoint: "
                                      f"{r.problem}")
            return i
    raise CompactionError(f"no checkpoint {ref!r} in the session (give its id, or its line "
                          "or seq number)")


def restore(target: Target, before: str, settings: Settings | None = None, *,
            snapshot: Snapshot | None = None) -> Written:
    """Append a checkpoint re-establishing the context as it was before checkpoint `before`;
    `snapshot` may be passed when the caller has it."""
    settings = settings or Settings()
    snapshot = snapshot or target.snapshot()
    if snapshot.format != own.NATIVE:
        raise CompactionError(
            f"{target.label} is a {snapshot.format} session: restore appends a sessionctx "
            f"checkpoint, which {snapshot.format} does not read. Import it into a store "
            f"(sessionctx import {target.label} --store URL --session ID), then restore there")
    index = find_checkpoint(snapshot.records, before)
    earlier = build_context(snapshot.records[:index], settings.build).messages
    if not earlier:
        raise CompactionError(f"no restorable context exists before checkpoint {before!r}")
    current = build_context(snapshot.records, settings.build).messages
    ref = snapshot.records[index].data.get("id")
    restored_from = ref if isinstance(ref, str) else before
    record = checkpoint_record(
        snapshot, summary=f"Restored the effective context that existed before compaction "
                          f"checkpoint {restored_from}.",
        messages=earlier, first_kept_index=0, tokens_before=total(current, settings.counter),
        model_ref=RESTORE_REF, quality_audit="disabled", counter=settings.counter,
        restored_from=restored_from)
    position = target.append(within_limit(record), snapshot)
    sizes = [settings.counter(m) for m in earlier]
    job = SummaryJob(snapshot, Plan(0, earlier, sizes, None, record["tokensBefore"],
                                       record["tokensAfter"], False), [], [], settings)
    return Written(record, position, job)
