"""OpenAI Agents SDK: a `call_model_input_filter` that repairs each model call's input, a
wrapper that repairs what any `Session` gives back, and a `Session` on a sessionctx store.

    from agents import Agent, Runner, RunConfig
    from sessionctx.adapters.openai_agents import RepairModelInput, RepairedSession

    config = RunConfig(call_model_input_filter=RepairModelInput())
    await Runner.run(agent, "hello", session=RepairedSession(SQLiteSession("user-42")),
                     run_config=config)

`RepairModelInput()` works with any session, or none: it sees the very input of each call.
`RepairedSession(session)` wraps any `Session` implementation (`SQLiteSession`,
`RedisSession`, `SQLAlchemySession`, `EncryptedSession`, one's own): `get_items` gives the
items repaired, everything else goes to the wrapped session untouched, so what is stored is
never rewritten. `SessionctxSession("user-42", "sqlite:///sessions.db")` keeps the items in a
sessionctx store (the path relative to the working directory; four slashes for an absolute one).

Items are stored as records (the item under `raw`, its native message beside it), so the
session is also readable by `sessionctx build --store URL --session ID`. `get_items` reads from
the latest checkpoint on and returns the items the API accepts: an output with no call, or a
call with no output, is left out (and reported), and so is reasoning whose following item went
with it. `pop_item` and `clear_session` delete nothing: they append a checkpoint holding what
remains, so every stored record stays in the store.

One `RepairModelInput` or `RepairedSession` can be shared by any number of runs at once; each
conversation is folded apart (`report(session_id)` gives a session's latest changes and pending
calls).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from agents.items import TResponseInputItem
from agents.memory.session_settings import SessionSettings, resolve_session_limit
from agents.run_config import CallModelData, ModelInputData

from sessionctx.adapters import responses_items as ri
from sessionctx.adapters.fold import (
    Conversations,
    OnChanges,
    OnReport,
    Report,
    Reporter,
    stored_context,
)
from sessionctx.adapters.provider_step import named_api
from sessionctx.changes import Change, Source, change_order
from sessionctx.context import BuildOptions
from sessionctx.messages import Message
from sessionctx.providers import build_from_messages
from sessionctx.providers.wire import OPENAI_CHAT, OPENAI_RESPONSES
from sessionctx.records import Record
from sessionctx.store import SessionChanged, Store, open_store

__all__ = ["RepairModelInput", "RepairedSession", "SessionctxSession"]

_LOG = logging.getLogger("sessionctx.adapters.openai_agents")
_T = TypeVar("_T")
_RETRIES = 5  # checkpoints refused because another writer appended meanwhile


class SessionctxSession:
    """The Agents SDK `Session` protocol on any sessionctx store (a URL or an open store).

    Without a store, `$SESSIONCTX_STORE` or the default SQLite file is used. PostgreSQL
    (`postgresql://...`) serves many workers on one session.
    """

    def __init__(self, session_id: str, store: Store | str | None = None, *,
                 options: BuildOptions | None = None,
                 session_settings: SessionSettings | None = None,
                 on_changes: OnChanges | None = None,
                 logger: logging.Logger | None = None) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self.store: Store = store if store is not None and not isinstance(store, str) \
            else open_store(store)
        self._options = options or BuildOptions()
        self._report = Reporter(logger or _LOG, on_changes)
        self._lock = threading.Lock()

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        limit = resolve_session_limit(limit, self.session_settings)
        items = await self._run(self.items)
        return ri.window(items, limit)  # type: ignore[return-value]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if not items:
            return
        records = [ri.record_of(ri.as_item(item)) for item in items]
        await self._run(lambda: self.store.append_many(self.session_id, records))

    async def pop_item(self) -> TResponseInputItem | None:
        popped: Any = await self._run(self._pop)
        return popped  # type: ignore[no-any-return]

    async def clear_session(self) -> None:
        await self._run(lambda: self._replace(lambda items: ([], None), "clear_session"))

    def close(self) -> None:
        self.store.close()

    # -- synchronous core ------------------------------------------------------------------

    def items(self) -> list[ri.Item]:
        """Every item the model should see now, the changes reported."""
        items, _, changes = self._read()
        self._report(changes)
        return items

    def _read(self) -> tuple[list[ri.Item], int, list[Change]]:
        context, by_seq, last = stored_context(self.store, self.session_id, self._options)
        originals = _Originals(by_seq)
        items, _, dropped = ri.items_of(context, originals)
        changes = sorted(context.changes + dropped, key=change_order) if dropped else \
            context.changes
        return items, last, changes

    def _pop(self) -> ri.Item | None:
        popped: list[ri.Item] = []

        def less_last(items: list[ri.Item]) -> tuple[list[ri.Item], ri.Item | None]:
            if not items:
                return items, None
            popped.append(items[-1])
            return items[:-1], items[-1]

        self._replace(less_last, "pop_item")
        return popped[-1] if popped else None

    def _replace(self, change: Callable[[list[ri.Item]], tuple[list[ri.Item], ri.Item | None]],
                 why: str) -> None:
        """Append a checkpoint holding `change(items)`; retried when another writer won."""
        for _ in range(_RETRIES):
            items, last, changes = self._read()
            kept, popped = change(items)
            if last == 0 or (popped is None and why == "pop_item"):
                return
            self._report(changes)
            checkpoint = _checkpoint(kept, last, why, popped)
            try:
                self.store.append_checkpoint(self.session_id, checkpoint, expected_last_seq=last)
                return
            except SessionChanged:
                continue
        raise SessionChanged(f"session {self.session_id!r} kept changing while {why} ran; "
                             "try again")

    async def _run(self, fn: Callable[[], _T]) -> _T:
        def locked() -> _T:
            with self._lock:
                return fn()
        return await asyncio.to_thread(locked)


class _Originals:
    """A context message's stored item and native message, by the source the fold gave it: a
    stored record by its seq, or a message of a checkpoint by its place there."""

    def __init__(self, by_seq: dict[int | None, Record]) -> None:
        self._by_seq = by_seq
        self._checkpoint_items: dict[int, list[list[ri.Item]]] = {}

    def __call__(self, source: Source) -> tuple[list[ri.Item], Message] | None:
        record = self._by_seq.get(source.seq)
        if record is None:
            return None
        if source.part is None:
            raw = record.data.get("raw")
            item = raw if isinstance(raw, dict) else None
            return ([item] if item is not None else _rendered(record.view)), record.view
        messages = record.view["messages"]
        items = self._items_of(record)
        return items[source.part], messages[source.part]

    def _items_of(self, record: Record) -> list[list[ri.Item]]:
        """A checkpoint's items: those it holds, or its messages rendered as Responses items
        when another writer (`sessionctx compact`) made it."""
        seq = record.source.seq or 0
        if seq not in self._checkpoint_items:
            stored = record.data.get("items")
            messages = record.view["messages"]
            if isinstance(stored, list) and len(stored) == len(messages):
                self._checkpoint_items[seq] = [[item] for item in stored]
            else:
                self._checkpoint_items[seq] = [_rendered(m) for m in messages]
        return self._checkpoint_items[seq]


def _rendered(message: Message) -> list[ri.Item]:
    """A native message as the Responses items the provider renderer makes of it (an
    assistant message with text and calls gives several)."""
    body = build_from_messages([message], None, "openai-responses", repair=False).body
    items: list[ri.Item] = body["input"]
    return items


def _checkpoint(items: list[ri.Item], last: int, why: str, popped: ri.Item | None
                ) -> dict[str, Any]:
    """A checkpoint whose messages are `items` as they are, the items kept beside them."""
    out: dict[str, Any] = {
        "type": "compaction", "at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "baseSeq": last, "plannerVersion": 0, "summaryModelRef": f"openai-agents:{why}",
        "qualityAudit": "not a summary: the session's items as they were"
                        + (", less the popped one" if why == "pop_item" else ", cleared"),
        "summary": "", "messages": [ri.to_message(item) for item in items],
        "firstKeptIndex": 0, "tokensBefore": 0, "tokensAfter": 0, "items": items}
    if popped is not None:
        out["popped"] = popped
    return out


class RepairModelInput:
    """A `call_model_input_filter`: the run's input items repaired before each model call.

    Each conversation keeps the fold of the input it saw last, so each call costs only the new
    items; one instance serves concurrent runs. The items are also placed and named as the
    provider step of the API the agent's model calls would (results right after their calls,
    no call id twice, ids of the API's pattern): the Responses API's, or Chat Completions' for
    an `OpenAIChatCompletionsModel`, unless `provider` names another.
    """

    def __init__(self, options: BuildOptions | None = None, *,
                 on_changes: OnChanges | None = None,
                 on_report: OnReport | None = None,
                 logger: logging.Logger | None = None,
                 provider: str | None = None) -> None:
        # one item, one message: parallel calls are consecutive messages of one turn
        self._conversations = Conversations(_natives, options, joined=True)
        self._report = Reporter(logger or _LOG, on_changes, on_report)
        self._provider = named_api(provider)

    def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        items = self.repair(model_data.input, None, getattr(data.agent, "model", None))
        if items is model_data.input:
            return model_data
        return ModelInputData(input=items, instructions=model_data.instructions)

    def repair(self, items: list[Any], conversation: str | None = None,
               model: Any = None) -> list[Any]:
        """The items `model` (an Agents SDK model or model name, or None) should be sent;
        `items` itself when nothing changes."""
        api = self._provider or _api(model)
        name = model if isinstance(model, str) else getattr(model, "model", None)
        with self._conversations.fold(items, conversation, api,
                                      name if isinstance(name, str) else None) as folded:
            if not folded.changed:
                return items
            natives = folded.natives

            def original(source: Source) -> tuple[list[ri.Item], Message] | None:
                index = source.index
                if index is None:
                    return None
                return [ri.as_item(items[index])], natives[index][0][1]

            repaired, _, dropped = ri.items_of(folded.context, original)
            report = self._report(folded.changes + dropped, conversation,
                                  folded.context.pending_calls)
        self._conversations.keep(report)
        return repaired

    def report(self, conversation: str) -> Report | None:
        """The latest changes and pending calls of a named conversation (a session id)."""
        return self._conversations.report(conversation)


class RepairedSession:
    """Any Agents SDK `Session`, its items given back repaired. What it stores is the wrapped
    session's business: items are added, popped and cleared there untouched."""

    def __init__(self, session: Any, options: BuildOptions | None = None, *,
                 repair: RepairModelInput | None = None,
                 on_changes: OnChanges | None = None,
                 on_report: OnReport | None = None,
                 logger: logging.Logger | None = None) -> None:
        self.session = session
        self.session_id: str = session.session_id
        self.session_settings: SessionSettings | None = getattr(session, "session_settings",
                                                                None)
        self._repair = repair or RepairModelInput(options, on_changes=on_changes,
                                                  on_report=on_report, logger=logger)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        items = await self.session.get_items()
        repaired = self._repair.repair(list(items), self.session_id)
        window = ri.window(repaired, resolve_session_limit(limit, self.session_settings))
        return window  # type: ignore[return-value]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await self.session.add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        popped: TResponseInputItem | None = await self.session.pop_item()
        return popped

    async def clear_session(self) -> None:
        await self.session.clear_session()

    def report(self) -> Report | None:
        """This session's latest changes and pending calls, if any were made."""
        return self._repair.report(self.session_id)


def _api(model: Any) -> str:
    """The API an Agents SDK model calls: Chat Completions' for its chat model, else the
    Responses API's."""
    name = type(model).__name__
    return OPENAI_CHAT if name == "OpenAIChatCompletionsModel" else OPENAI_RESPONSES


def _natives(item: Any, index: int, dropped: list[Change]) -> list[tuple[int, Message]]:
    return [(0, ri.to_message(ri.as_item(item)))]

