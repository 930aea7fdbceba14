"""What each kind of change says in its `detail`: one TypedDict per shape of detail, and
`DETAILS`, every `ChangeKind` mapped to the shape of its detail.

A change's `detail` stays a plain mapping (it is made by the thousand, from keyword arguments
at the place that logs it), so this module is where its keys are written down for a reader of
the JSON (`sessionctx build --json`, `check --json`) and for mypy: `tests/test_change_details.py`
checks every change the fixtures produce against its kind's shape, and that every kind has one.
"""

from __future__ import annotations

from typing import TypedDict

from sessionctx.changes import ChangeKind as K


class NoDetail(TypedDict):
    """The kind says it all (the change's record and reason name the rest)."""


class CallDetail(TypedDict):
    """A call the fold dropped (or a result an adapter dropped): the stored id it had."""

    tool_call_id: str | None
    name: str | None


class ResultDetail(TypedDict):
    """A result dropped for answering no call, or a call already answered."""

    tool_call_id: str | None


class AgentWrittenDetail(TypedDict):
    """A result (or an assistant message) its agent wrote for itself: which agent, the call it
    stands for (a result's), and whether it was left out."""

    agent: str
    dropped: bool
    tool_call_id: str | None  # None for an assistant message


class CallIdsDetail(TypedDict):
    """The calls a note tells the model were interrupted."""

    tool_call_ids: list[str | None]


class CheckpointDetail(TypedDict):
    replaced_messages: int  # what the checkpoint replaced
    checkpoint_messages: int  # what it holds


class ExtensionDetail(TypedDict):
    customType: str | None  # pi's custom message type


class ImagesDetail(TypedDict):
    images: int  # the screenshot's images left out


class IdDetail(TypedDict):
    """The wire id of the call (or result, or reasoning item) the change concerns."""

    id: str | None


class IdsDetail(TypedDict):
    ids: list[str]  # the ids of the results moved


class NamedCallDetail(TypedDict):
    id: str | None
    name: str | None


class RenameDetail(TypedDict):
    """An id or name rewritten: what it was, and what was sent."""

    old: str
    new: str


class CountDetail(TypedDict):
    count: int  # how many blocks of the message the change concerns


class SizeDetail(TypedDict):
    width: int  # the stored image's size, px
    height: int
    limit: int  # the largest side the provider takes, px


class NameDetail(TypedDict):
    name: str  # a tool's (or a document's) name


class SplitDetail(TypedDict):
    calls: int  # the calls of the message
    messages: int  # the messages they were sent in


# The repair command's own edits are `writeback.edits.Fix`es, whose detail is their own; a
# relink says which field it changed. Its keys are not identifiers, so it is spelt this way.
RelinkDetail = TypedDict("RelinkDetail", {"field": str, "from": object, "to": object})


DETAILS: dict[K, type] = {
    K.RESULT_WRITTEN_BY_AGENT: AgentWrittenDetail,
    K.SKIPPED_CONTEXT_ROW: NoDetail,
    K.SKIPPED_EXTENSION_STATE: NoDetail,
    K.SKIPPED_SUMMARY: NoDetail,
    K.SKIPPED_METADATA: NoDetail,
    K.SKIPPED_UNKNOWN: NoDetail,
    K.SKIPPED_INVALID: NoDetail,
    K.OFF_BRANCH: NoDetail,
    K.CHECKPOINT_APPLIED: CheckpointDetail,
    K.CHECKPOINT_INVALID: NoDetail,
    K.LOCAL_COMMAND_RENDERED: NoDetail,
    K.LOCAL_COMMAND_EXCLUDED: NoDetail,
    K.EXTENSION_MESSAGE_CONVERTED: ExtensionDetail,
    K.EXTENSION_MESSAGE_EMPTY: NoDetail,
    K.DROPPED_UNPAIRED_CALL: CallDetail,
    K.DROPPED_ORPHAN_RESULT: ResultDetail,
    K.DROPPED_DUPLICATE_RESULT: ResultDetail,
    K.DROPPED_EMPTY_MESSAGE: NoDetail,
    K.SCREENSHOT_OMITTED: ImagesDetail,
    K.INTERRUPTED_NOTE_ADDED: CallIdsDetail,
    K.EMPTY_TEXT_REMOVED: CountDetail,
    K.UNSUPPORTED_BLOCK: NoDetail,
    K.EMPTY_TURN_DROPPED: NoDetail,
    K.ARGUMENTS_REPAIRED: IdDetail,
    K.DUPLICATE_ID_RENAMED: RenameDetail,
    K.ID_REWRITTEN: RenameDetail,
    K.NAME_REWRITTEN: RenameDetail,
    K.RESULTS_MOVED: IdsDetail,
    K.CALL_WITHOUT_RESULT: IdDetail,
    K.RESULT_WITHOUT_CALL: IdDetail,
    K.EMPTY_OUTPUT_MARKED: IdDetail,
    K.ERROR_AS_TEXT: IdDetail,
    K.TOOL_IMAGES_MOVED: IdDetail,
    K.IMAGE_OVER_LIMIT: NoDetail,
    K.IMAGE_DOWNSCALED: SizeDetail,
    K.IMAGE_OMITTED: NoDetail,
    K.THINKING_DROPPED: CountDetail,
    K.THINKING_AS_TEXT: CountDetail,
    K.REASONING_ID_REMOVED: IdDetail,
    K.CALL_SIGNATURE_ADDED: IdDetail,
    K.SIGNATURE_CORRUPT: CountDetail,
    K.SYSTEM_CONVERTED: NoDetail,
    K.SYSTEM_HOISTED: NoDetail,
    K.TURNS_MERGED: NoDetail,
    K.FIRST_USER_ADDED: NoDetail,
    K.CALL_AS_TEXT: NamedCallDetail,
    K.RESULT_AS_TEXT: IdDetail,
    K.PLACEHOLDER_ADDED: NameDetail,
    K.DEFINITION_RENAMED: RenameDetail,
    K.LOOP_AS_TEXT: NoDetail,
    K.PREFILL_TRIMMED: NoDetail,
    K.PREFILL_ADDED: NoDetail,
    K.CALLS_SPLIT: SplitDetail,
    K.CACHE_REMOVED: NoDetail,
    K.DOCUMENT_OMITTED: NameDetail,
    K.DOCUMENT_NOTE_ADDED: NoDetail,
    K.DROPPED_INVENTED_RESULT: ResultDetail,
    K.DROPPED_LONE_REASONING: NoDetail,
    K.REMOVED_UNREADABLE: NoDetail,
    K.REMOVED_INVALID: NoDetail,
    K.REMOVED_EMPTY: NoDetail,
    K.RELINKED: RelinkDetail,
}
"""Every kind of change, with the shape of its detail (`NoDetail`: the detail is empty)."""
