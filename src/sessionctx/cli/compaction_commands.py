"""compact, restore, budget: checkpoints that shorten the context, undoing one, and whether
the context fits a model's window."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from sessionctx.cli.app import emit_json, fail, main, warn_problems
from sessionctx.cli.loader import SessionSource, load, open_target
from sessionctx.cli.options import (
    TEXT,
    build_options,
    finite_float,
    json_option,
    source_options,
    tokenizer_option,
)
from sessionctx.context import BuildOptions
from sessionctx.errors import CompactionError, SessionChanged
from sessionctx.render import counted

if TYPE_CHECKING:
    from sessionctx.compaction.checkpoint import SummaryJob, Written
    from sessionctx.compaction.target import Target
    from sessionctx.compaction.tokens import TokenCounter

SUMMARY_ALLOWANCE = 2000


def _counter(tokenizer: str) -> TokenCounter:
    from sessionctx.compaction import tokens

    if tokenizer == "estimate":
        return tokens.estimate_message
    try:
        return tokens.exact_counter(tokenizer)
    except tokens.TokenizerUnavailable as exc:
        raise click.BadParameter(str(exc), param_hint="--tokenizer") from None


@main.command()
@click.option("--summarizer", "spec", metavar="SPEC", type=TEXT,
              help="'command:CMD' (prompt on stdin, summary on stdout), 'anthropic:MODEL' or "
                   "'openai:MODEL' (key from ANTHROPIC_API_KEY / OPENAI_API_KEY).")
@click.option("--keep-turns", type=click.IntRange(min=0), default=3, show_default=True,
              metavar="N", help="Keep at least the last N turns.")
@click.option("--keep-tokens", type=click.IntRange(min=0), default=20_000, show_default=True,
              metavar="K", help="Keep at least the last K tokens (whichever keeps more wins).")
@click.option("--force", is_flag=True,
              help="When the keep rules keep everything, cut at the start of the active turn.")
@click.option("--dry-run", is_flag=True, help="Print the plan and the prompt; write nothing.")
@click.option("--timeout", type=finite_float(0, min_open=True), default=180.0,
              show_default=True, metavar="SECONDS", help="Give up on the summarizer after this.")
@click.option("--max-identifiers", type=click.IntRange(min=0), default=40, show_default=True,
              metavar="N", help="How many exact identifiers the audit requires at most.")
@click.option("--chunk-tokens", type=click.IntRange(min=0), default=24_000, show_default=True,
              metavar="N", help="Send the records to the summarizer in chunks of about N "
                                "tokens (0: one prompt).")
@json_option
@tokenizer_option
@build_options
@source_options(appends=True)
def compact(source: SessionSource, spec: str | None, keep_turns: int, keep_tokens: int,
            force: bool, dry_run: bool, timeout: float, max_identifiers: int, chunk_tokens: int,
            as_json: bool, tokenizer: str, options: BuildOptions) -> None:
    """Summarize the older part of the session at PATH and append a checkpoint.

    Exit 0 when a checkpoint was appended (or the dry run planned one), 1 when nothing was
    written (nothing to compact, summarizer or audit failure, the session changed), 2 when the
    input or the usage is wrong.
    """
    from sessionctx.compaction import checkpoint as cp
    from sessionctx.compaction import own
    from sessionctx.compaction.summarizers import parse_summarizer

    settings = cp.Settings(keep_turns, keep_tokens, force, max_identifiers, chunk_tokens,
                           build=options, counter=_counter(tokenizer))
    target = open_target(source)
    summarizer = None
    if not dry_run:
        if spec is None:
            raise click.UsageError("--summarizer is required unless --dry-run is given")
        try:
            summarizer = parse_summarizer(spec, timeout=timeout)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--summarizer") from None
    snapshot = target.snapshot()
    warn_problems(snapshot.problems)
    try:
        own.writer(target.label, snapshot.format)
        if summarizer is None:
            _print_job(cp.prepare(snapshot, settings), as_json)
            return
        written = cp.compact(target, summarizer, settings, snapshot=snapshot)
    except (CompactionError, SessionChanged) as exc:
        fail(f"{target.label}: no checkpoint written: {exc}", 1)
    _print_written(written, target, as_json)


def _plan_json(job: SummaryJob) -> dict[str, Any]:
    p = job.plan
    return {"cut": p.cut, "messages": len(p.messages), "summarized": len(p.summarized),
            "kept": len(p.kept), "previous_summary": p.previous_summary is not None,
            "forced": p.forced, "tokens_before": p.tokens_before, "tokens_kept": p.tokens_kept,
            "base_seq": job.snapshot.base_seq, "identifiers": job.identifiers,
            "chunks": len(job.chunks)}


def _print_job(job: SummaryJob, as_json: bool) -> None:
    plan_json = _plan_json(job)
    if as_json:
        emit_json({"plan": plan_json, "prompt": job.prompt})
        return
    click.echo(f"plan: summarize messages {1 if plan_json['previous_summary'] else 0}.."
               f"{plan_json['cut'] - 1} ({counted(plan_json['summarized'], 'message')}"
               f"{', with the previous summary' if plan_json['previous_summary'] else ''}), "
               f"keep {plan_json['kept']} from #{plan_json['cut']}; tokens "
               f"{plan_json['tokens_before']} -> {plan_json['tokens_kept']} + summary"
               f"{' (forced)' if plan_json['forced'] else ''}")
    click.echo(f"identifiers the summary must keep: {len(job.identifiers)}")
    if plan_json["chunks"] > 1:
        click.echo(f"the records go to the summarizer in {plan_json['chunks']} chunks, each "
                   "prompt carrying the summary so far; the first prompt follows")
    click.echo("--- prompt ---")
    click.echo(job.prompt)


def _print_written(written: Written, target: Target, as_json: bool) -> None:
    record = written.record
    unit = target.unit
    entry = written.entry
    info = {"id": record["id"] if entry is None else entry.get("id", entry.get("uuid")),
            unit: written.position,
            "baseSeq": record["baseSeq"],
            "firstKeptIndex": record["firstKeptIndex"], "tokensBefore": record["tokensBefore"],
            "tokensAfter": record["tokensAfter"], "summaryModelRef": record["summaryModelRef"],
            "qualityAudit": record["qualityAudit"], "messages": len(record["messages"])}
    if record.get("restoredFromCompactionId"):
        info["restoredFromCompactionId"] = record["restoredFromCompactionId"]
    if entry is not None:
        info["wrote"] = entry.get("subtype") or entry["type"]  # the agent's own compaction
    if as_json:
        emit_json(info)
        return
    what = "restore checkpoint" if "restoredFromCompactionId" in info else "checkpoint"
    if entry is not None:
        what = f"the agent's own {info['wrote']} entry"
    click.echo(f"{target.label}: appended {what} {info['id']} at {unit} {info[unit]}: "
               f"{counted(info['messages'], 'message')}, tokens {info['tokensBefore']} -> "
               f"{info['tokensAfter']}")


@main.command()
@click.option("--before", "before", required=True, metavar="CHECKPOINT", type=TEXT,
              help="The checkpoint to undo: its id, or its line (file) or seq (store) number.")
@json_option
@source_options(appends=True)
def restore(source: SessionSource, before: str, as_json: bool) -> None:
    """Append a checkpoint that brings back the context as it was before CHECKPOINT.

    Nothing is deleted; the undone checkpoint stays in the history. Exit 0 appended, 1 not.
    """
    from sessionctx.compaction import checkpoint as cp

    target = open_target(source)
    snapshot = target.snapshot()
    warn_problems(snapshot.problems)
    try:
        written = cp.restore(target, before, snapshot=snapshot)
    except (CompactionError, SessionChanged) as exc:
        fail(f"{target.label}: nothing restored: {exc}", 1)
    _print_written(written, target, as_json)


@main.command()
@click.option("--window", type=click.IntRange(min=1), required=True, metavar="N",
              help="The model's context window in tokens.")
@click.option("--reserve", type=click.IntRange(min=0), default=8192, show_default=True,
              metavar="R", help="Tokens kept free for the answer.")
@click.option("--threshold", type=finite_float(0, 1, min_open=True), default=0.8,
              show_default=True, metavar="T", help="Compact above this share of the window.")
@json_option
@tokenizer_option
@build_options
@source_options()
def budget(source: SessionSource, window: int, reserve: int, threshold: float, as_json: bool,
           tokenizer: str, options: BuildOptions) -> None:
    """Say whether the context of PATH fits the window, needs compaction, or cannot fit.

    Exit 0 fits, 1 needs compaction or cannot fit, 2 unreadable input or bad usage.
    """
    from sessionctx.compaction.budget import FITS, Budget, assess
    from sessionctx.compaction.planner import NothingToCompact, plan
    from sessionctx.compaction.tokens import total

    try:
        limits = Budget(window, reserve, threshold)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    counter = _counter(tokenizer)
    loaded = load(source)
    warn_problems(loaded.problems)
    messages = loaded.context(options).messages
    tokens = total(messages, counter)
    try:
        smallest = plan(messages, keep_turns=0, keep_tokens=0, force=True, counter=counter)
        minimum = smallest.tokens_kept + SUMMARY_ALLOWANCE
    except NothingToCompact:
        minimum = tokens
    verdict = assess(tokens, limits, minimum)
    if as_json:
        emit_json(verdict.to_json())
    else:
        click.echo(f"{verdict.verdict}: {tokens} tokens; compaction trigger {verdict.trigger}, "
                   f"hard limit {verdict.hard_limit} (window {window} - reserve {reserve}); "
                   f"smallest after compaction about {minimum} (active turn + "
                   f"{SUMMARY_ALLOWANCE} for the summary)")
    sys.exit(0 if verdict.verdict == FITS else 1)
