"""Tool-call pairing: a call is kept only when a result with its id comes after it.

Pairing is order-aware and one to one: each result answers the earliest still-open call with its
id, so a result that arrives before its call, or a second result for an answered call, pairs with
nothing and is dropped. Nothing is ever invented for a call that has no result.

`OpenCalls` is that rule, the one home of it: the fold pairs a session's records with it
(`Pairing`), `check` finds reused call ids with it (`repeated_calls`), and the provider step
pairs the turns it places with it (providers/policies/ids.py `WireIds`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

import msgspec

from sessionctx.changes import ChangeKind
from sessionctx.messages import Call, call_ids, result_id

# The one vocabulary of pairing, core to provider step. The fold (this module) pairs a
# session's records; the provider step pairs again the turns it places, as the messages it is
# given need not come from the fold (`build_from_messages`, `naive_request`), and names what it
# drops with its own kinds, for the step that dropped it. A call or result the fold kept is
# never dropped again by the provider step on a context the fold built.
PROVIDER_STEP_KIND = {
    ChangeKind.DROPPED_UNPAIRED_CALL: ChangeKind.CALL_WITHOUT_RESULT,
    ChangeKind.DROPPED_ORPHAN_RESULT: ChangeKind.RESULT_WITHOUT_CALL,
    ChangeKind.DROPPED_DUPLICATE_RESULT: ChangeKind.RESULT_WITHOUT_CALL,
}


T = TypeVar("T")


class OpenCalls(Generic[T]):
    """The calls still open, by id, each with what its caller keeps of it: a result answers
    the earliest open call with its id."""

    __slots__ = ("_open",)

    def __init__(self) -> None:
        # a list, not a deque: nearly every id is opened once, and a one-entry list costs a
        # third of a deque to make (a deque allocates a block of 64 slots)
        self._open: dict[str, list[T]] = {}

    def open(self, call_id: str, entry: T) -> None:
        queue = self._open.get(call_id)
        if queue is None:
            self._open[call_id] = [entry]
        else:
            queue.append(entry)

    def answer(self, call_id: str) -> T | None:
        """The entry of the call a result with `call_id` answers, no longer open; None when no
        call with that id is open."""
        queue = self._open.get(call_id)
        if queue is None:
            return None
        entry = queue.pop(0)
        if not queue:
            del self._open[call_id]
        return entry

    def __bool__(self) -> bool:
        """Whether any call is still open."""
        return bool(self._open)

    def pending(self) -> Iterator[tuple[str, T]]:
        """The calls no result has answered, with their ids."""
        for call_id, queue in self._open.items():
            for entry in queue:
                yield call_id, entry


class OpenCall(msgspec.Struct):
    slot: int
    call: Call
    paired: bool = False


class Unpaired(NamedTuple):
    """Why a result answers no call: an orphan (no earlier open call) or a duplicate."""

    kind: ChangeKind
    reason: str


class Pairing(msgspec.Struct):
    """The running state of pairing over messages appended one at a time."""

    _open: OpenCalls[OpenCall] = msgspec.field(default_factory=OpenCalls)
    _answered: set[str] = msgspec.field(default_factory=set)
    _without_id: list[OpenCall] = msgspec.field(default_factory=list)  # nothing can answer these

    def add_call(self, slot: int, call: Call) -> OpenCall:
        entry = OpenCall(slot, call)
        if call.id is not None:
            self._open.open(call.id, entry)
        else:
            self._without_id.append(entry)
        return entry

    def unanswered(self) -> Iterator[OpenCall]:
        """The calls no result has answered so far, found without looking at the others."""
        for _, entry in self._open.pending():
            yield entry
        yield from self._without_id

    def answer(self, call_id: str | None) -> OpenCall | Unpaired:
        """The call a result with `call_id` answers, or why it answers none."""
        if call_id is None:
            return Unpaired(ChangeKind.DROPPED_ORPHAN_RESULT, "the result carries no call id")
        entry = self._open.answer(call_id)
        if entry is None:
            if call_id in self._answered:
                return Unpaired(ChangeKind.DROPPED_DUPLICATE_RESULT,
                                f"a second result for call {call_id}, which already has one")
            return Unpaired(ChangeKind.DROPPED_ORPHAN_RESULT, f"no earlier call has id {call_id}")
        entry.paired = True
        self._answered.add(call_id)
        return entry


def context_ids(messages: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every call id and every id a result answers, in `messages`: what a new id avoids."""
    taken = {i for m in messages for i in call_ids(m)}
    taken.update(rid for m in messages if (rid := result_id(m)) is not None)
    return taken


def renamed_id(call_id: str, taken: Callable[[str], bool], first: int = 2) -> str:
    """The id a call that reuses `call_id` gets: `<call_id>_<n>` for the least n from `first`
    up that `taken` refuses none of. `build` (providers/policies/ids.py) and `repair`
    (writeback/wanted.py) both name a reused id by it, so a request built from a session and
    the session repaired name the call alike."""
    n = first
    while taken(f"{call_id}_{n}"):
        n += 1
    return f"{call_id}_{n}"


REUSED_KIND = "duplicate_call_id"  # what `check` names a call found by `repeated_calls`


def reused_note(call_id: str) -> str:
    return (f"call {call_id} reuses the id of an earlier call, and a provider refuses a "
            "repeated tool call id")


class Repeated(NamedTuple):
    """A call whose id an earlier call already used (the API refuses a second tool_use with
    one id), and the result that answers it: slots of the messages given, and the call's
    ordinal among the calls with that id in its message and the result's among the results
    with that id at its source (None when no result answers the call)."""

    call_slot: int
    call_id: str
    call_nth: int
    result_slot: int | None


def repeated_calls(messages: Sequence[Mapping[str, Any]]) -> list[Repeated]:
    """The calls of `messages` (a context's, so every result answers a call) that reuse an
    id, paired as the fold pairs: a result answers the earliest open call with its id."""
    seen: set[str] = set()
    open_calls: OpenCalls[tuple[int, int, bool]] = OpenCalls()
    out: list[Repeated] = []
    for slot, message in enumerate(messages):
        rid = result_id(message)
        if rid is not None:
            found = open_calls.answer(rid)
            if found is not None:
                call_slot, nth, again = found
                if again:
                    out.append(Repeated(call_slot, rid, nth, slot))
            continue
        counted: dict[str, int] = {}
        for cid in call_ids(message):
            nth = counted.get(cid, 0)
            counted[cid] = nth + 1
            open_calls.open(cid, (slot, nth, cid in seen))
            seen.add(cid)
    out.extend(Repeated(call_slot, cid, nth, None)
               for cid, (call_slot, nth, again) in open_calls.pending() if again)
    return sorted(out)


INTERRUPTED_NOTE = (
    "[Note from sessionctx: the tool call {calls} was interrupted before any result was "
    "recorded. Its outcome is unknown: it may not have run, or it may have completed. Check "
    "the actual state before relying on it or retrying it.]"
)


def interrupted_note(calls: list[tuple[str | None, str | None]]) -> str:
    """The note that tells the model these (name, id) calls were interrupted."""
    names = ", ".join(f"{name or '?'} (id {cid or 'none'})" for name, cid in calls)
    return INTERRUPTED_NOTE.format(calls=names)
