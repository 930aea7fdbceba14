"""What every adapter shares: a framework's message list folded one new message at a time, the
context regrouped by the framework message each of its messages came from, a stored session's
context with its records, and the changes reported.

A framework calls the model with the same list again and again, one turn longer each time. The
fold keeps its builder between calls and takes only the messages it has not seen, so a turn
costs the new messages plus one pass over the result, whatever the length of the history. A
server that loads the history from storage for each request hands it new objects equal to
those it handed before: they are known good already, so they are compared, not converted and
folded again. A list that does not start with objects seen last time, or equal to them, is
folded again from the start.
"""

from __future__ import annotations

import logging
import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sessionctx.adapters.provider_step import Step, run_step
from sessionctx.adapters.provider_watch import Watch
from sessionctx.changes import Change, ChangeKind, Source, change_order
from sessionctx.context import BuildOptions, Context, ContextBuilder, PendingCall, build_context
from sessionctx.gcpause import paused_gc
from sessionctx.messages import Message, text_of
from sessionctx.records import Record, make_record
from sessionctx.store import Store

# A framework message and its index -> (part, native message) pairs in order, part j of object i
# recorded under Source(index=i, part=j) so every change names both; a checkpoint among them
# replaces what came before it. What the converter itself leaves out it logs in the list.
Convert = Callable[[Any, int, list[Change]], list[tuple[int, Message]]]
OnChanges = Callable[[list[Change]], None]
# Whether two framework messages convert to the same native messages (a loaded copy of one
# seen before): `==` by default
Same = Callable[[Any, Any], bool]
T = TypeVar("T")

# How many conversations' folds a pool keeps; one past it drops the least recently used, which
# costs that conversation a fold from the start on its next request, never a wrong answer.
CONVERSATIONS_KEPT = 256
# How many of the latest unnamed conversations a list with a new first object is compared
# with, to find the one it was loaded from.
UNNAMED_COMPARED = 64


@dataclass(frozen=True, slots=True)
class Report:
    """What one request of one conversation changed, and the calls it left with no result: the
    calls whose real outcome the application has to check before retrying them.
    `conversation` is the framework's own id for it (thread, session, run) where it has one."""

    conversation: str | None
    changes: list[Change]
    pending_calls: list[PendingCall]

    def to_json(self) -> dict[str, Any]:
        return {"conversation": self.conversation,
                "changes": [c.to_json() for c in self.changes],
                "pending_calls": [p.to_json() for p in self.pending_calls]}


OnReport = Callable[[Report], None]


@dataclass(slots=True)
class Group:
    """The kept messages of one framework message (`index`), or an added note (`index` None)."""

    index: int | None
    parts: list[tuple[int, Message]]  # (part, the message as the context has it)
    unchanged: bool  # every part kept, none rewritten: the original object can be sent


@dataclass(slots=True)
class Folded:
    context: Context
    natives: list[list[tuple[int, Message]]]  # per framework message, what it became
    dropped: list[Change]  # what the converter left out

    @property
    def changed(self) -> bool:
        return bool(self.context.changes or self.dropped)

    @property
    def changes(self) -> list[Change]:
        if not self.dropped:
            return self.context.changes
        return sorted(self.dropped + self.context.changes, key=change_order)

    def groups(self) -> Iterator[Group]:
        """The context's messages grouped by the framework message they came from, in order."""
        ctx = self.context
        notes = {c.message_index for c in ctx.changes
                 if c.kind == ChangeKind.INTERRUPTED_NOTE_ADDED}
        index: int | None = None
        parts: list[tuple[int, Message]] = []
        for k, (message, source) in enumerate(zip(ctx.messages, ctx.sources, strict=True)):
            if k in notes:
                if parts:
                    yield self._group(index, parts)
                    parts = []
                yield Group(None, [(0, message)], False)
                continue
            if source.index != index and parts:
                yield self._group(index, parts)
                parts = []
            index = source.index
            parts.append((source.part or 0, message))
        if parts:
            yield self._group(index, parts)

    def _group(self, index: int | None, parts: list[tuple[int, Message]]) -> Group:
        natives = self.natives[index] if index is not None else []
        unchanged = len(parts) == len(natives) and all(
            kept[1] is native[1] for kept, native in zip(parts, natives, strict=True))
        return Group(index, parts, unchanged)


def rebuild(messages: Sequence[T], folded: Folded, make_note: Callable[[str], T],
            make_changed: Callable[[T, list[tuple[int, Message]]], T]) -> list[T]:
    """The framework's list as the context has it: each original object the context kept
    whole, `make_note(text)` for a note the context added, and `make_changed(original, parts)`
    for an object it changed (its parts as the context has them). Only how a note and a changed
    message become the framework's objects differs from one framework to another."""
    out: list[T] = []
    for group in folded.groups():
        if group.index is None:
            out.append(make_note(text_of(group.parts[0][1]["content"])))
        elif group.unchanged:
            out.append(messages[group.index])
        else:
            out.append(make_changed(messages[group.index], group.parts))
    return out


class IncrementalFold:
    """The fold of a growing list of framework messages, kept between calls. Not safe to share
    between threads: `Conversations` gives each conversation its own, behind a lock."""

    def __init__(self, convert: Convert, options: BuildOptions | None = None,
                 joined: bool = False, same: Same = operator.eq) -> None:
        self._convert = convert
        self._same = same
        self._options = options or BuildOptions()
        self._joined = joined  # consecutive assistant messages are one turn (provider_step)
        self._reset()

    def _reset(self) -> None:
        self._seen: list[Any] = []
        self._natives: list[list[tuple[int, Message]]] = []
        self._dropped: list[Change] = []
        self._builder = ContextBuilder(self._options)
        self._watch = Watch(self._joined)
        # the provider step's last result: its API and model, the context messages it was
        # run on, and what it made of them
        self._step: tuple[tuple[str, str | None], list[Message], Step | None] | None = None

    def run(self, objects: Sequence[Any], api: str | None = None,
            model: str | None = None) -> Folded:
        """The fold of `objects`; with `api`, also placed and named by that API's provider
        step where the list gives it anything to do (`provider_watch.Watch`)."""
        with paused_gc():
            if not _prefix(self._seen, objects, self._same):
                self._reset()
            # bound once: these run for every new message
            append, natives, convert = self._builder.append, self._natives, self._convert
            dropped, record, start = self._dropped, make_record, len(self._seen)
            for i in range(start, len(objects)):
                pairs = convert(objects[i], i, dropped)
                natives.append(pairs)
                for j, message in pairs:
                    append(record(message, Source(index=i, part=j)))
            self._watch.extend(natives[start:] if start else natives)
            self._seen = list(objects)
            context = self._builder.context()
            if api is not None and self._watch.needed:
                context = self._stepped(context, api, model)
            return Folded(context, natives, list(self._dropped))

    def _stepped(self, context: Context, api: str, model: str | None) -> Context:
        """The context through the provider step. A turn that only appends messages the
        watch finds nothing in, to a context the step was run on, keeps that run's result and
        adds the new messages as they are, so a history the step changed early still costs
        a turn only its new messages (and one pass that finds the old ones are the same)."""
        given, last = context.messages, self._step
        if last is not None and last[0] == (api, model) and not self._watch.fresh and \
                len(given) >= len(last[1]) and all(map(operator.is_, last[1], given)):
            step = last[2]
        else:
            step = run_step(context, api, model, self._joined)
            if step is not None:
                self._watch.taken(step.new_ids)
        self._step = ((api, model), list(given), step)
        return context if step is None else step.applied(context)


def _prefix(seen: list[Any], objects: Sequence[Any], same: Same) -> bool:
    """Whether `objects` starts with the objects seen, or with copies of them."""
    if len(objects) < len(seen):
        return False
    return all(map(operator.is_, seen, objects)) or all(map(same, seen, objects))


@dataclass(slots=True)
class _Slot:
    fold: IncrementalFold
    first: Any = None  # an unnamed conversation's first message, as first seen
    lock: threading.Lock = field(default_factory=threading.Lock)


class Conversations:
    """The folds of every conversation one adapter serves, kept apart.

    A conversation is named by the framework's own id when the adapter has one; otherwise by the
    identity of its first message object, which no two live conversations share, or, for a list
    loaded anew, by the latest unnamed conversation whose first message it equals (`same`). A
    wrong guess costs time, never correctness: a fold whose seen objects are not a prefix of
    the list it is given, nor equal to one, starts again from the list alone. The latest report
    of each named conversation is kept (as boundedly as the folds) for `report`.
    """

    def __init__(self, convert: Convert | Callable[[], Convert],
                 options: BuildOptions | None = None, limit: int = CONVERSATIONS_KEPT, *,
                 stateful: bool = False, joined: bool = False,
                 same: Same = operator.eq) -> None:
        # a converter that keeps state between messages (`stateful`) is given as a class or
        # factory, and each conversation gets its own
        self._make: Callable[[], Convert] = (
            convert if stateful else lambda: convert)  # type: ignore[assignment,return-value]
        self._options = options
        self._joined = joined  # consecutive assistant messages are one turn (provider_step)
        self._same = same
        self._limit = limit
        self._slots: OrderedDict[Hashable, _Slot] = OrderedDict()
        self._reports: OrderedDict[str, Report] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._slots)

    @contextmanager
    def fold(self, objects: Sequence[Any], conversation: str | None = None,
             api: str | None = None, model: str | None = None) -> Iterator[Folded]:
        """The fold of `objects`, held for this conversation alone until the block ends (the
        rebuilt list is made from it inside the block); with `api`, that API's provider step
        applied too (`IncrementalFold.run`)."""
        key: Hashable = conversation if conversation is not None else (
            ("first", id(objects[0])) if len(objects) else ("empty",))
        with self._lock:
            slot = self._slots.get(key)
            if slot is None and conversation is None and len(objects):
                key, slot = self._loaded(objects[0], key)
            if slot is None:
                first = objects[0] if conversation is None and len(objects) else None
                slot = self._slots[key] = _Slot(IncrementalFold(
                    self._make(), self._options, self._joined, self._same), first)
                while len(self._slots) > self._limit:
                    self._slots.popitem(last=False)
            else:
                self._slots.move_to_end(key)
        with slot.lock:
            yield slot.fold.run(objects, api, model)

    def _loaded(self, first: Any, key: Hashable) -> tuple[Hashable, _Slot | None]:
        """The latest unnamed conversation whose first message equals `first`, if any. One
        busy with a request now is passed over: most likely another conversation that starts
        alike (one conversation's requests come one after another), which would wait for it."""
        for compared, (held, slot) in enumerate(reversed(self._slots.items())):
            if compared == UNNAMED_COMPARED:
                break
            if slot.first is not None and not slot.lock.locked() and \
                    self._same(slot.first, first):
                self._slots.move_to_end(held)
                return held, slot
        return key, None

    def keep(self, report: Report) -> None:
        if report.conversation is None:
            return
        with self._lock:
            self._reports[report.conversation] = report
            self._reports.move_to_end(report.conversation)
            while len(self._reports) > self._limit:
                self._reports.popitem(last=False)

    def report(self, conversation: str) -> Report | None:
        """The latest report of a conversation the framework named, if still kept."""
        with self._lock:
            return self._reports.get(conversation)


def stored_context(store: Store, session: str, options: BuildOptions | None
                   ) -> tuple[Context, dict[int | None, Record], int]:
    """A stored session's context (from its latest checkpoint on), its records by seq, and its
    last seq: what a store-backed adapter maps back to its framework's objects."""
    records = store.context_records(session)
    by_seq = {r.source.seq: r for r in records}
    last = (records[-1].source.seq or 0) if records else 0
    return build_context(records, options), by_seq, last


@dataclass(frozen=True, slots=True)
class Reporter:
    """Where an adapter's changes go: every change to the logger (repairs as warnings), each
    log record carrying the conversation's id (`record.sessionctx_conversation`) so a logger
    shared by many conversations can route it; then the list to `on_changes`, and the whole
    report (changes and pending calls) to `on_report`."""

    logger: logging.Logger
    on_changes: OnChanges | None = None
    on_report: OnReport | None = None

    def __call__(self, changes: list[Change], conversation: str | None = None,
                 pending_calls: list[PendingCall] | None = None) -> Report:
        report = Report(conversation, changes, pending_calls or [])
        if not changes and not report.pending_calls:
            return report
        logger = self.logger
        if changes and logger.isEnabledFor(logging.INFO):
            prefix = f"[{conversation}] " if conversation is not None else ""
            extra = {"sessionctx_conversation": conversation}
            for change in changes:
                where = change.record.label() if change.record is not None else "history"
                logger.log(logging.WARNING if change.is_repair else logging.INFO, "%s%s: %s",
                           prefix, where, change.reason, extra=extra)
        if changes and self.on_changes is not None:
            self.on_changes(changes)
        if self.on_report is not None:
            self.on_report(report)
        return report
