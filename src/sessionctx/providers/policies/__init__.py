"""The provider step: a context's messages turned into turns one provider accepts, one policy
module per concern of docs/provider-rules.md, each keyed off the capability row of the target.

| concern                              | module         |
|--------------------------------------|----------------|
| turns and the block shapes           | turns.py       |
| reading: block repairs               | reading.py     |
| ids, names, arguments                | ids.py         |
| result placement                     | placement.py   |
| reasoning replay, own Responses items | reasoning.py   |
| image limits                         | image_limits.py|
| document limits                      | document_limits.py |
| roles and system messages            | roles.py       |
| thinking switch, prefill, call limits | request_settings.py (run by build_request after these) |

`prepare` runs them as passes over the turns, in that order: read, ids, placement, reasoning,
limits, roles. Every change goes into one log, named by a member of `changes.ChangeKind`, the
one vocabulary of change kinds; the log comes out in the one order of changes
(`Prepared.ordered_changes`), so it does not depend on which pass logged a change first.
"""

from __future__ import annotations

from sessionctx.changes import Source
from sessionctx.messages import Message
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies import placement
from sessionctx.providers.policies.document_limits import limit_documents
from sessionctx.providers.policies.ids import RAW_ARGUMENTS_KEY, Results, WireIds, repair_arguments
from sessionctx.providers.policies.image_limits import limit_images
from sessionctx.providers.policies.placement import EMPTY_OUTPUT, ERROR_NOTE, Placement
from sessionctx.providers.policies.reading import Reader
from sessionctx.providers.policies.reasoning import Replay
from sessionctx.providers.policies.roles import CONTINUED, first_user, merge_roles, place_systems
from sessionctx.providers.policies.turns import RESULT, Block, Prepared, Site, Turn

__all__ = [
    "CONTINUED", "EMPTY_OUTPUT", "ERROR_NOTE", "RAW_ARGUMENTS_KEY", "RESULT", "Block", "Prepared",
    "Reader", "Results", "Site", "Turn", "prepare", "repair_arguments",
]


def prepare(messages: list[Message], sources: list[Source] | None, cap: Capability, model: str,
            system: str | None = None, repair: bool = True,
            thinking_as_text: bool = False, tools_as_text: bool = False) -> Prepared:
    """Turns ready for one provider's renderer, with every change logged; with
    `thinking_as_text`, reasoning that cannot be replayed is sent as plain text; with
    `tools_as_text` (calls already text), server-run calls stay text too."""
    prep = Prepared([], [system] if system else [], sources, messages=messages)
    reader = Reader(prep, cap, repair, model, thinking_as_text)
    if not repair:
        prep.turns = reader.read(messages)
        prep.repaired = False
        return prep
    turns = reader.read(messages)
    ids = WireIds(prep, cap)
    ids.run(reader.sites)
    results = ids.results
    replay = Replay(prep, messages, cap, model, thinking_as_text, reader.bound,
                    items=not tools_as_text)
    place = Placement(prep, results, reader.reasoning | reader.bound, reader.empty)
    turns, positions = place.grouped(turns, reader.settle) if \
        placement.in_place(ids) else place.run(turns)
    turns = replay.run(turns, positions, reader.reasoning)
    if cap.own_items and not tools_as_text:
        turns = replay.server_items(turns)
    prep.turns = turns
    limit_images(prep, reader.images, results, cap)
    if reader.documents:
        limit_documents(prep, reader.documents, results, cap)
    if reader.systems:
        place_systems(prep, cap)
    if cap.merge_roles:
        merge_roles(prep)
    if cap.first_user:
        first_user(prep)
    return prep
