"""What a call goes out with (docs/provider-rules.md §1.3, §2, §3, §5): an id the provider's
pattern and length take, distinct from the others and the same for the call and its result; a
tool name of the providers' pattern; arguments that are a JSON object.

The rewrites are pure functions of their input, so calls, results and tool definitions rewrite
alike. `WireIds` is the ids step of the provider step: it gives each call of one request its
wire id and name, and each result the call it answers, indexed under that wire id."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from sessionctx import decoding
from sessionctx.changes import ChangeKind
from sessionctx.pairing import OpenCalls, context_ids, renamed_id
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.turns import RESULT, Prepared, ResultBlock, Site, TurnCall

RAW_ARGUMENTS_KEY = "_sessionctx_raw_arguments"
ID_REWRITTEN = ChangeKind.ID_REWRITTEN
SAFE_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
# SAFE_CHARS' rewrite of an ASCII text's bytes, as one table lookup a byte
_SAFE_BYTES = bytes(c if c < 128 and not SAFE_CHARS.match(chr(c)) else ord("_")
                    for c in range(256))
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def split_id(raw: str | None) -> tuple[str | None, str | None]:
    """pi's Responses convention: '<call_id>|<fc item id>'."""
    if raw is not None and "|" in raw:
        head, _, tail = raw.partition("|")
        if head and tail.startswith("fc"):
            return head, tail
    return raw, None


def tool_name(name: str | None) -> str:
    """The name a tool goes out with: its own when the providers' pattern allows it; the same
    rewrite serves calls and definitions, so they still match."""
    if name is not None and TOOL_NAME.fullmatch(name):
        return name
    return safe_chars(name or "")[:64] or "unknown_tool"


def safe_chars(text: str) -> str:
    """`text` with every character outside [a-zA-Z0-9_-] replaced by an underscore."""
    if text.isascii():  # the common case, some times faster than the expression
        return text.encode().translate(_SAFE_BYTES).decode()
    return SAFE_CHARS.sub("_", text)


NOT_AN_OBJECT = "were not a JSON object"


def repair_arguments(args: Any) -> tuple[dict[str, Any], str | None]:
    """Arguments as a JSON object, and why they changed (None when they did not): anything
    else, strict JSON text only (no NaN or Infinity, which no provider accepts), is kept under
    RAW_ARGUMENTS_KEY."""
    if isinstance(args, dict):
        return args, None
    if args is None:
        return {}, NOT_AN_OBJECT
    if isinstance(args, str):
        if not args.strip():
            return {}, NOT_AN_OBJECT
        try:
            value = decoding.parse_text(args)
        except decoding.Malformed as exc:
            why = f"hold a value JSON cannot carry ({exc.reason})" if exc.nonfinite else (
                NOT_AN_OBJECT)
            return {RAW_ARGUMENTS_KEY: args}, why
        if isinstance(value, dict):
            return value, None
        return {RAW_ARGUMENTS_KEY: args}, NOT_AN_OBJECT
    return {RAW_ARGUMENTS_KEY: json.dumps(args, ensure_ascii=False)}, NOT_AN_OBJECT


def id_map_entry(original: str, fits: Callable[[str], object], max_len: int,
                 used: set[str]) -> str:
    """A deterministic id that `fits` the provider's pattern, is at most `max_len` long and is
    distinct from `used`."""
    if fits(original) and len(original) <= max_len and original not in used:
        return original
    return rewritten_id(original, max_len, used)


def rewritten_id(original: str, max_len: int, used: set[str]) -> str:
    """`id_map_entry` for an id known not to fit or to be taken."""
    base = safe_chars(original) or "call"
    if len(base) <= max_len and base not in used:
        return base
    digest = hashlib.sha256(original.encode()).hexdigest()[:8]
    candidate = ""
    n = 0
    while not candidate or candidate in used:
        tag = digest if n == 0 else f"{digest}{n}"
        candidate = f"{base[:max_len - len(tag) - 1]}_{tag}"
        n += 1
    return candidate


# wire id of a result that answers an open call: (message index, result)
Results = dict[str, tuple[int, ResultBlock]]
# a call as the ids pass is given it: the turn's call, or the stored block the reader copied
Call = Mapping[str, Any]


def sent(results: Results, result: ResultBlock) -> bool:
    """Whether `result` answers a call, so that it is sent: the ids pass indexed it."""
    rid = result["id"]
    found = results.get(rid) if rid is not None else None
    return found is not None and found[1] is result


class WireIds:
    """The ids step over one request's calls and results, in message order: each call goes
    out with an id the provider takes (a reused id renamed `<id>_2`, an id outside the pattern
    rewritten), a tool name of the pattern and arguments that are an object, and is opened
    under its stored id; each result answers the earliest open call with its id and then goes
    out with that call's wire id and name (a result stored without a name, or under the name
    before a rewrite, would not match its call where the API matches by name).

    As it pairs them it notes whether each result stands where placement puts it (`in_order`:
    the message right after its call's, at the call's place among that message's calls), so
    that placement knows, with no walk of its own, when it has nothing to move."""

    __slots__ = (
        "context_ids",
        "fits",
        "good_names",
        "in_order",
        "max_len",
        "open_calls",
        "prep",
        "reason",
        "renamed",
        "results",
        "seen",
        "used",
    )

    def __init__(self, prep: Prepared, cap: Capability) -> None:
        self.prep = prep
        self.max_len = cap.id_max_len
        self.fits = re.compile(cap.id_pattern).fullmatch
        self.reason = f"tool ids must match {cap.id_pattern} with at most " \
            f"{cap.id_max_len} characters (or were taken)"
        self.seen: set[str] = set()  # stored ids of the calls so far
        self.renamed: dict[str, int] = {}  # stored id -> the n of its last `<id>_<n>`
        self.context_ids: set[str] | None = None  # every call and result id of the messages
        self.used: set[str] = set()  # wire ids taken
        self.good_names: set[str] = set()  # names known to fit the pattern
        # by stored call id: (wire id, wire name, message index, place among that message's
        # calls) of each call still to be answered
        self.open_calls: OpenCalls[tuple[str, str, int, int]] = OpenCalls()
        self.results: Results = {}  # every result that answers a call, by wire id
        # whether every result answered a call and stands in its place, and every call had an
        # id to be answered by
        self.in_order = True

    def run(self, sites: list[Site]) -> None:
        """The ids pass: every call and result the reader read (`sites`, in message order)
        given its wire id and name. A stored call that changes is replaced by
        a copy in its turn (the reader's lists of calls are its own); the reader's copies
        change in place. A call and a result are handled here, in one walk, and only their
        rare repairs (arguments, names, reused ids) in methods of their own: the pass runs
        once for every call and result of a request."""
        prep, copied = self.prep, self.prep.copied
        good_names, seen, used = self.good_names, self.seen, self.used
        fits, max_len, open_calls, results = self.fits, self.max_len, self.open_calls, self.results
        in_order = True
        call_at, place = -1, 0  # the message of the last call, and that call's place in it
        for blocks, k, i in sites:
            block = blocks[k]
            if block["type"] == RESULT:  # it answers the earliest open call with its id
                rid = block["id"]
                found = open_calls.answer(rid) if rid is not None else None
                if found is None:
                    in_order = False
                    continue
                answered, block["name"], called, called_place = found
                block["id"] = answered
                results[answered] = (i, block)
                if i != called + 1 + called_place:
                    in_order = False
                continue
            if block["type"] != "toolCall":  # never: a site is a call or a result
                continue
            if i == call_at:
                place += 1
            else:
                call_at, place = i, 0
            call_id, name, args = block["id"], block["name"], block["arguments"]
            same = call_id is not None
            if not isinstance(args, dict):
                args = self._arguments(args, call_id, i, block)
                same = False
            if name not in good_names:
                name = self._name(name, i, block)
                same = same and name is block["name"]
            wire: str | None = None
            if call_id is not None:
                if call_id in seen:
                    wire = self._wire_id(call_id, i, block)
                    same = False
                elif call_id in used or len(call_id) > max_len or not fits(call_id):
                    seen.add(call_id)
                    wire = rewritten_id(call_id, max_len, used)
                    prep.log_one((ID_REWRITTEN, self.reason, i, copied.get(id(block), block),
                                  {"old": call_id, "new": wire}))
                    same = False
                else:
                    seen.add(call_id)
                    wire = call_id
                used.add(wire)
                open_calls.open(call_id, (wire, name, i, place))
            else:
                in_order = False
            if same:
                continue
            if id(block) in copied:
                block["id"], block["name"], block["arguments"] = wire, name, args
                continue
            new: TurnCall = {"type": "toolCall", "id": wire, "name": name, "arguments": args}
            signature = block.get("thoughtSignature")
            if signature is not None:
                new["thoughtSignature"] = signature
            copied[id(new)] = block
            blocks[k] = new
        self.in_order = in_order

    def _arguments(self, args: Any, call_id: str | None, i: int, block: Call) -> dict[str, Any]:
        """A call's arguments that are not an object, as one (`repair_arguments`)."""
        repaired, why = repair_arguments(args)
        if why is not None:
            self.prep.log(ChangeKind.ARGUMENTS_REPAIRED, f"call arguments {why}; the stored "
                          f"text is kept under {RAW_ARGUMENTS_KEY!r}", i, block=block,
                          id=call_id)
        return repaired

    def _name(self, name: str | None, i: int, block: Call) -> str:
        if name is not None and TOOL_NAME.fullmatch(name):
            self.good_names.add(name)
            return name
        new = tool_name(name)
        self.prep.log(ChangeKind.NAME_REWRITTEN, "tool names must match "
                      "^[a-zA-Z0-9_-]{1,64}$", i, block=block, old=name, new=new)
        return new

    def _wire_id(self, call_id: str, i: int, block: Call) -> str:
        """The id for a reused call id: named as `repair` names it (`pairing.renamed_id`),
        clear of every id of the messages and every wire id taken, then fitted to the
        pattern."""
        if self.context_ids is None:  # asked only once a call reuses an id
            self.context_ids = context_ids(self.prep.messages or [])
        taken, used = self.context_ids, self.used
        unique = renamed_id(call_id, lambda new: new in taken or new in used,
                            self.renamed.get(call_id, 1) + 1)
        self.renamed[call_id] = int(unique.rpartition("_")[2])
        self.prep.log(ChangeKind.DUPLICATE_ID_RENAMED, "tool_use ids must be unique", i,
                      block=block, old=call_id, new=unique)
        wire = id_map_entry(unique, self.fits, self.max_len, used)
        if wire != unique:
            self.prep.log_one((ID_REWRITTEN, self.reason, i,
                               self.prep.copied.get(id(block), block),
                               {"old": unique, "new": wire}))
        return wire
