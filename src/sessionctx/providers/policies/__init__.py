"""The provider step: a context's messages turned into turns one provider accepts, one policy
module per concern of docs/provider-rules.md, each keyed off the capability row of the target.

| concern                              | module         |
|--------------------------------------|----------------|
| turns and the block shapes           | turns.py       |
| reading: ids, names, arguments       | reading.py     |
| result placement                     | placement.py   |
| reasoning replay, own Responses items | reasoning.py   |
| image limits                         | image_limits.py|
| document limits                      | document_limits.py |
| roles and system messages            | roles.py       |
| thinking switch, prefill, call limits | request_settings.py (run by build_request after these) |

`prepare` runs them in that order; every change goes into one log. The names below are the
vocabulary the change log and the renderers use.
"""

from __future__ import annotations

from sessionctx.changes import Source
from sessionctx.messages import Message
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.document_limits import limit_documents
from sessionctx.providers.policies.ids import RAW_ARGUMENTS_KEY, repair_arguments
from sessionctx.providers.policies.image_limits import (
    IMAGE_DOWNSCALED,
    IMAGE_OMITTED,
    IMAGE_OVER_LIMIT,
    limit_images,
)
from sessionctx.providers.policies.placement import (
    CALL_WITHOUT_RESULT,
    EMPTY_OUTPUT,
    EMPTY_OUTPUT_MARKED,
    ERROR_AS_TEXT,
    ERROR_NOTE,
    RESULT_WITHOUT_CALL,
    RESULTS_MOVED,
    TOOL_IMAGES_MOVED,
    Placement,
)
from sessionctx.providers.policies.reading import (
    ARGUMENTS_REPAIRED,
    DUPLICATE_ID_RENAMED,
    ID_REWRITTEN,
    NAME_REWRITTEN,
    Reader,
)
from sessionctx.providers.policies.reasoning import (
    CALL_SIGNATURE_ADDED,
    REASONING_ID_REMOVED,
    SIGNATURE_CORRUPT,
    THINKING_AS_TEXT,
    THINKING_DROPPED,
    Replay,
)
from sessionctx.providers.policies.roles import (
    CONTINUED,
    FIRST_USER_ADDED,
    SYSTEM_CONVERTED,
    SYSTEM_HOISTED,
    TURNS_MERGED,
    first_user,
    merge_roles,
    place_systems,
)
from sessionctx.providers.policies.turns import (
    EMPTY_TEXT_REMOVED,
    EMPTY_TURN_DROPPED,
    RESULT,
    UNSUPPORTED_BLOCK,
    Block,
    Prepared,
    Turn,
)

__all__ = [
    "ARGUMENTS_REPAIRED", "CALL_SIGNATURE_ADDED", "CALL_WITHOUT_RESULT", "CONTINUED",
    "DUPLICATE_ID_RENAMED", "EMPTY_OUTPUT", "EMPTY_OUTPUT_MARKED", "EMPTY_TEXT_REMOVED",
    "EMPTY_TURN_DROPPED", "ERROR_AS_TEXT", "ERROR_NOTE", "FIRST_USER_ADDED", "ID_REWRITTEN",
    "IMAGE_DOWNSCALED", "IMAGE_OMITTED", "IMAGE_OVER_LIMIT", "NAME_REWRITTEN",
    "RAW_ARGUMENTS_KEY", "REASONING_ID_REMOVED", "RESULT", "RESULTS_MOVED",
    "RESULT_WITHOUT_CALL", "SIGNATURE_CORRUPT", "SYSTEM_CONVERTED", "SYSTEM_HOISTED",
    "THINKING_AS_TEXT", "THINKING_DROPPED", "TOOL_IMAGES_MOVED", "TURNS_MERGED",
    "UNSUPPORTED_BLOCK", "Block", "Prepared", "Reader", "Turn", "prepare", "repair_arguments",
]


def prepare(messages: list[Message], sources: list[Source] | None, cap: Capability, model: str,
            system: str | None = None, repair: bool = True,
            thinking_as_text: bool = False, tools_as_text: bool = False) -> Prepared:
    """Turns ready for one provider's renderer, with every change logged; with
    `thinking_as_text`, reasoning that cannot be replayed is sent as plain text; with
    `tools_as_text` (calls already text), server-run calls stay text too."""
    prep = Prepared([], [system] if system else [], sources, messages=messages)
    reader = Reader(prep, cap, repair, model, thinking_as_text)
    prep.turns = reader.read(messages)
    if not repair:
        prep.repaired = False
        return prep
    replay = Replay(prep, messages, cap, model, thinking_as_text, reader.bound,
                    items=not tools_as_text)
    placement = Placement(prep, reader.results, reader.reasoning, replay)
    prep.turns = placement.settle(reader.settle) if reader.regular else placement.run()
    if cap.own_items and not tools_as_text:
        prep.turns = replay.server_items(prep.turns)
    limit_images(prep, reader.images, reader.results, cap)
    if reader.documents:
        limit_documents(prep, reader.documents, reader.results, cap)
    if reader.systems:
        place_systems(prep, cap)
    if cap.merge_roles:
        merge_roles(prep)
    if cap.first_user:
        first_user(prep)
    return prep
