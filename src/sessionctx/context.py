"""The fold from stored records to the model's context (the display a person sees: display.py).

`ContextBuilder` takes one record at a time at a cost that does not grow with the session;
`build_context` is the same builder run over a whole list, so batch and incremental builds are
one piece of code. The records are never modified: changed messages are copies. Its steps,
each a method named for it: `_filter` (what never reaches the model), `_local_command`,
`_extension_message`, `_checkpoint`, then for every message `_message` and `_pair_result`
(pairing), `_screenshots`; `context()` assembles the result (`assembly.py`: unanswered calls
removed, old screenshots replaced by notes, the interrupted notes added).
"""

from __future__ import annotations

from collections.abc import Iterable
from sys import intern
from typing import Any

import msgspec

from sessionctx.agent_results import (
    agent_result_change,
    reply_change,
    reply_written_by,
    written_by,
)
from sessionctx.assembly import Assembly
from sessionctx.assembly import Context as Context  # the names readers import
from sessionctx.assembly import PendingCall as PendingCall
from sessionctx.changes import Change, ChangeKind, Source, in_order
from sessionctx.display import carry_timestamp, render_local_command
from sessionctx.display import display_messages as display_messages  # the names readers import
from sessionctx.display import is_displayed as is_displayed
from sessionctx.gcpause import paused_gc
from sessionctx.messages import (
    RESULT_ROLES,
    Message,
    calls,
    has_substance,
    result_id,
    user_text,
)
from sessionctx.pairing import OpenCall, Pairing, Unpaired
from sessionctx.records import (
    CHECKPOINT,
    CONTEXT,
    EXTENSION_MESSAGE,
    EXTENSION_STATE,
    INVALID,
    LOCAL_COMMAND,
    MESSAGE,
    METADATA,
    SUMMARY,
    Record,
)
from sessionctx.screenshots import (
    DEFAULT_BROWSER_TOOLS,
    ScreenshotWindow,
    has_images,
)


class BuildOptions(msgspec.Struct, frozen=True):
    browser_tools: frozenset[str] = DEFAULT_BROWSER_TOOLS
    keep_screenshots: int = 1
    note_unpaired: bool = False
    drop_agent_results: bool = False  # leave out results an agent wrote for itself


class ContextBuilder:
    """Builds the context one record at a time; `context()` gives the result so far."""

    def __init__(self, options: BuildOptions | None = None) -> None:
        self.options = options or BuildOptions()
        self._reset()

    def _reset(self) -> None:
        # Slot i is the i-th message accumulated so far: kept in parallel lists, not one
        # object per message, since a session has hundreds of thousands of them.
        self._messages: list[Message] = []
        self._sources: list[Source] = []
        self._calls: dict[int, list[OpenCall]] = {}  # slot -> the calls its message holds
        self._images_omitted: set[int] = set()
        self._empty: set[int] = set()  # assistant messages with nothing to say
        self._pairing = Pairing()
        self._window = ScreenshotWindow(self.options.keep_screenshots)
        # the changes made record by record; those at the positions `_at_slot` name hold the
        # slot of their message where the context gives its index (known once assembled)
        self._log: list[Change] = []
        self._at_slot: list[int] = []
        self._agent_written: list[PendingCall] = []  # calls answered by their agent's text

    def extend(self, records: Iterable[Record]) -> ContextBuilder:
        for record in records:
            self.append(record)
        return self

    def append(self, record: Record) -> None:
        """One record through the step its kind asks for."""
        kind, source = record.kind, record.source
        if kind == MESSAGE:
            data = record.data
            inner = data.get("message")  # record.view, inline: it runs for every message
            self._message(inner if isinstance(inner, dict) and
                          data.get("type") == "message" else data, source)
        elif kind == LOCAL_COMMAND:
            self._local_command(record.view, source)
        elif kind == EXTENSION_MESSAGE:
            self._extension_message(record.view, source)
        elif kind == CHECKPOINT:
            self._checkpoint(record)
        else:
            self._filter(record)

    # -- the steps, one per kind of record --------------------------------------------------

    def _filter(self, record: Record) -> None:
        """A record that never reaches the model (metadata, context rows, extension state,
        summaries, unreadable or unknown records) is logged as skipped, with why; the reasons
        repeat across records, so each distinct text is held once (interned)."""
        if record.kind == INVALID:
            reason = intern(f"unreadable record skipped: {record.problem}")
            self._log.append(Change(ChangeKind.SKIPPED_INVALID, reason, record.source))
        elif record.kind in _SKIP_REASONS:
            kind, reason = _SKIP_REASONS[record.kind]
            note = record.view.get("note") if record.kind == CONTEXT else None
            if isinstance(note, str) and note:
                reason = intern(f"{note}: not sent to the model")  # the importer's cause
            self._log.append(Change(kind, reason, record.source))
        else:
            what = record.view.get("type") or record.view.get("role") or "untyped"
            self._log.append(Change(ChangeKind.SKIPPED_UNKNOWN, intern(
                f"record of unknown kind ({what!r}) skipped"), record.source))

    def _checkpoint(self, record: Record) -> None:
        """A valid checkpoint replaces everything built before it, its change log included:
        the context starts at the checkpoint, as a store's context does (read from the latest
        valid checkpoint on), so `check` reports what the checkpoint left, not what it
        replaced. A malformed one is reported and changes nothing."""
        if record.problem is not None:
            self._log.append(Change(ChangeKind.CHECKPOINT_INVALID,
                                     f"ignored a malformed checkpoint: {record.problem}",
                                     record.source))
            return
        replaced = len(self._messages)
        self._reset()
        view = record.view
        self._log.append(Change(
            ChangeKind.CHECKPOINT_APPLIED,
            f"checkpoint replaced the {replaced} message{'' if replaced == 1 else 's'} built "
            "before it" if replaced else "checkpoint starts the context (nothing was built "
            "before it)",
            record.source, detail={"replaced_messages": replaced,
                                   "checkpoint_messages": len(view["messages"])}))
        for i, message in enumerate(view["messages"]):
            self._message(message, record.source.of_message(i))

    def _local_command(self, view: dict[str, Any], source: Source) -> None:
        """A local command (a shell command the user ran) is given to the model as user
        text, unless it is marked excluded or is empty."""
        command = view.get("command")
        excluded = view.get("excludeFromContext") is True or view.get(
            "excludedFromContext") is True
        if excluded or not isinstance(command, str) or not command.strip():
            why = "marked as excluded from context" if excluded else "its command is empty"
            self._log.append(Change(ChangeKind.LOCAL_COMMAND_EXCLUDED,
                                     f"local command skipped: {why}", source))
            return
        message = user_text(render_local_command(view))
        carry_timestamp(view, message)
        slot = self._push(message, source)
        self._log_at_slot(Change(ChangeKind.LOCAL_COMMAND_RENDERED,
                                 "local command given to the model as user text", source, slot))

    def _extension_message(self, view: dict[str, Any], source: Source) -> None:
        """An extension's message is sent as a user message, whether displayed or not."""
        content = view.get("content")
        if isinstance(content, str):
            blocks: Any = [{"type": "text", "text": content}]
        else:
            blocks = content
        message: Message = {"role": "user", "content": blocks}
        if not has_substance(message):
            self._log.append(Change(ChangeKind.EXTENSION_MESSAGE_EMPTY,
                                     "extension message has no content to send", source))
            return
        carry_timestamp(view, message)
        slot = self._push(message, source)
        hidden = " (hidden from display, still sent)" if view.get("display") is False else ""
        self._log_at_slot(Change(ChangeKind.EXTENSION_MESSAGE_CONVERTED,
                                 f"extension message sent as a user message{hidden}", source,
                                 slot, {"customType": view.get("customType")}))

    def _message(self, message: Message, source: Source) -> None:
        """A message is kept in its slot; an assistant's calls open for pairing (a result
        goes through `_pair_result`)."""
        role = message.get("role")
        if isinstance(role, str) and role in RESULT_ROLES:  # is_result, with the role kept
            self._pair_result(message, source)
            return
        if role == "assistant" and (author := reply_written_by(message)) is not None:
            if self.options.drop_agent_results:
                self._log.append(reply_change(author, source, dropped=True))
                return
            self._log_at_slot(reply_change(author, source, slot=len(self._messages)))
        slot = len(self._messages)  # _push, inline: it runs for every message
        self._messages.append(message)
        self._sources.append(source)
        if role == "assistant":
            found = [self._pairing.add_call(slot, call) for call in calls(message)]
            if found:
                self._calls[slot] = found
            if not has_substance(message):
                self._empty.add(slot)

    def _pair_result(self, message: Message, source: Source) -> None:
        """Pairing: a result answers the open call with its id; one that answers none, or a
        call already answered, is dropped (no result is ever invented for a call: the calls
        left open are removed when the context is assembled)."""
        call_id = result_id(message)
        author = written_by(message)  # a result its agent wrote for itself, not the tool
        if author is not None and self.options.drop_agent_results:
            self._log.append(agent_result_change(author, call_id, source, dropped=True))
            return  # its call stays unanswered, so it goes, and is pending
        answered = self._pairing.answer(call_id)
        if isinstance(answered, Unpaired):
            self._log.append(Change(answered.kind, f"tool result dropped: {answered.reason}",
                                    source, detail={"tool_call_id": call_id}))
            return
        slot = self._push(message, source)
        if author is not None:
            self._agent_written.append(PendingCall(
                answered.call.id, answered.call.name, answered.call.arguments,
                self._sources[answered.slot], author))
            self._log_at_slot(agent_result_change(author, call_id, source, slot=slot))
        name = answered.call.name or message.get("toolName")
        if name in self.options.browser_tools and has_images(message):
            self._screenshots(slot)

    def _screenshots(self, slot: int) -> None:
        """Screenshots: a browser result with images enters the window of the latest ones;
        the one it pushes out loses its images when the context is assembled."""
        fallen = self._window.push(slot)
        if fallen is not None:
            self._images_omitted.add(fallen)

    def _log_at_slot(self, change: Change) -> None:
        self._at_slot.append(len(self._log))
        self._log.append(change)

    def _push(self, message: Message, source: Source) -> int:
        self._messages.append(message)
        self._sources.append(source)
        return len(self._messages) - 1

    # -- the result -----------------------------------------------------------------------

    def context(self) -> Context:
        lost_at = self._lost_calls()
        changed = sorted(lost_at.keys() | self._images_omitted | self._empty)
        out = Assembly(self._messages, self._sources, self.options.note_unpaired)
        start = 0
        for slot in changed:
            out.take_unchanged(start, slot)
            out.take_changed(slot, lost_at.get(slot, []), slot in self._images_omitted)
            start = slot + 1
        out.take_unchanged(start, len(self._messages))
        out.flush_notes()
        logged = self._log.copy()  # the log's own changes, not copies of them: most are final
        for at in self._at_slot:
            change = logged[at]
            assert change.message_index is not None
            logged[at] = msgspec.structs.replace(
                change, message_index=out.index_of[change.message_index])
        return Context(out.messages, out.sources, in_order(logged, out.changes),
                       self._agent_written + out.pending)

    def _lost_calls(self) -> dict[int, list[OpenCall]]:
        """slot -> its calls that no result answered, in the message's order."""
        slots = {entry.slot for entry in self._pairing.unanswered()}
        return {slot: [c for c in self._calls[slot] if not c.paired] for slot in slots}


def build_context(records: Iterable[Record], options: BuildOptions | None = None) -> Context:
    """The messages the model should see for these records, with every change explained."""
    with paused_gc():
        return ContextBuilder(options).extend(records).context()


def nothing_sent(records: list[Record], ctx: Context) -> str | None:
    """Why records that are there give the model nothing at all, or None when they give it
    something (or there are none): every provider refuses a request with no message."""
    if ctx.messages or not records:
        return None
    kinds: dict[str, int] = {}
    for record in records:
        kinds[record.kind] = kinds.get(record.kind, 0) + 1
    held = ", ".join(f"{kind} ×{n}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return f"nothing would reach the model: none of the {len(records)} record(s) read ({held}) " \
           "gives it a message"


_SKIP_REASONS = {
    CONTEXT: (ChangeKind.SKIPPED_CONTEXT_ROW, "context rows never reach the model"),
    EXTENSION_STATE: (ChangeKind.SKIPPED_EXTENSION_STATE,
                      "extension state never reaches the model"),
    SUMMARY: (ChangeKind.SKIPPED_SUMMARY, "summaries are for display and audit, not the model"),
    METADATA: (ChangeKind.SKIPPED_METADATA, "metadata never reaches the model"),
}
