"""Planning a repair: read the session, let the context say what is wrong, edit the format.

Pure: bytes in, the repaired bytes and the list of fixes out. The repaired bytes are read
back the same way before anyone writes them, and what still needs repair is named.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from sessionctx.context import Context, PendingCall, build_context
from sessionctx.errors import SessionctxError
from sessionctx.formats.detect import decode_document
from sessionctx.formats.registry import BY_NAME, writer
from sessionctx.inputs import detect_format, read_raw
from sessionctx.pairing import REUSED_KIND, repeated_calls, reused_note
from sessionctx.records import ReadResult, select_branch
from sessionctx.writeback import notes
from sessionctx.writeback.common import remove_unreadable
from sessionctx.writeback.edits import Fix, Lines
from sessionctx.writeback.links import LinkKeys, Links
from sessionctx.writeback.wanted import Wanted, wanted

# (the lines, the read, what the context drops, the note maker) -> the fixes: each line
# format's `repair.py` `plan`
Planner = Callable[[Lines, ReadResult, Wanted, "notes.NoteMaker | None"], list[Fix]]


class RepairError(SessionctxError):
    """The session cannot be repaired: unreadable, or in a shape repair does not write."""


@dataclass(slots=True)
class Plan:
    format: str
    before: bytes
    after: bytes
    fixes: list[Fix]
    pending_calls: list[PendingCall]
    remaining: list[str] = field(default_factory=list)  # what repair could not fix
    note: str = ""  # why there is nothing to repair, when the format says so

    @property
    def changed(self) -> bool:
        return self.after != self.before


def plan_repair(raw: bytes, path: str | None, fmt: str = "auto", *, leaf: str | None = None,
                note_unpaired: bool = False) -> Plan:
    chosen = detect_format(raw, fmt)
    result = read_raw(raw, path, fmt)
    if result.fatal:
        raise RepairError("; ".join(str(p) for p in result.problems if p.fatal))
    if not BY_NAME[chosen].calls:
        article = "an" if chosen[:1] in "aeiou" else "a"
        return Plan(chosen, raw, raw, [], [], note=f"{article} {chosen} session holds no tool "
                    "calls: nothing to repair")
    ctx = _context(result, leaf)
    document = _document(raw, chosen)
    if document is not None:
        if not BY_NAME[chosen].document:
            raise RepairError(f"{path or 'the input'}: repair does not write {chosen} "
                              "sessions stored as one JSON document")
        module = writer(chosen)
        assert module is not None
        after, fixes = module.plan_document(raw, document, wanted(ctx, False, raw),
                                            note_unpaired)
    else:
        if not BY_NAME[chosen].lines:
            raise RepairError(f"{path or 'the input'}: repair does not write {chosen} "
                              "sessions (read only): `sessionctx build` sends one repaired, "
                              "`sessionctx import` keeps it in a store")
        after, fixes, ctx = _plan_lines(raw, path, chosen, result, ctx, leaf, note_unpaired)
    pending = ctx.pending_calls
    if after != raw:
        del result, ctx  # the stored file's records are freed before the repaired file's are made
        repaired = read_raw(after, path, chosen)
    else:
        repaired = result
    if repaired.fatal:
        raise RepairError(f"{path or 'the input'}: nothing of the conversation would be left "
                          "after the repair (every entry is broken); the file is left as it is")
    return Plan(chosen, raw, after, fixes, pending, remaining(repaired, leaf))


def _plan_lines(raw: bytes, path: str | None, fmt: str, result: ReadResult, ctx: Context,
                leaf: str | None, note_unpaired: bool) -> tuple[bytes, list[Fix], Context]:
    """Unreadable lines go first, their children re-attached: that can join a chain the torn
    line had cut, so what else needs repair is read from the file as it is then. Fixes and
    pending calls name the lines of the original."""
    module = writer(fmt)
    assert module is not None
    planner: Planner = module.plan
    builder: notes.Builder = module.note
    keys: LinkKeys | None = module.KEYS
    first = Lines(raw, _decoded(result))
    fixes = remove_unreadable(first, result.problems)
    if keys is not None and first.removed:
        fixes += Links(first, first.removed, keys).relink()
    origin = list(first.kept())  # line n of the file after this step is origin[n - 1]
    lines = first
    if fixes:
        raw = first.render()
        result = read_raw(raw, path, fmt)
        ctx = _context(result, leaf)
        lines = Lines(raw, _decoded(result))
    maker = notes.NoteMaker(builder) if note_unpaired else None
    for fix in planner(lines, result, wanted(ctx, raw=raw), maker):
        fix.line = origin[fix.line - 1] if fix.line is not None else None
        fixes.append(fix)
    # pending calls name the lines of the original: new Sources, as the ones the context
    # holds are shared and never modified
    ctx.pending_calls = [
        msgspec.structs.replace(p, record=msgspec.structs.replace(
            p.record, line=origin[p.record.line - 1])) if p.record.line is not None else p
        for p in ctx.pending_calls]
    fixes.sort(key=lambda f: (f.line or 0, f.action == "inserted"))
    return lines.render(), fixes, ctx


def _decoded(result: ReadResult) -> dict[int, dict[str, Any]] | None:
    """The objects the reader decoded, by line (a line the reader could not read holds
    none): the lines a repair edits are not decoded a second time. None when the reader
    kept no line's object."""
    if result.entries is None:
        return None
    return {line: r.data for r in result.entries if (line := r.source.line) is not None}


def _document(raw: bytes, chosen: str) -> Any:
    """The file as one JSON document when it is stored as one, else None (JSONL)."""
    body = raw.strip()
    if body[:1] not in (b"[", b"{"):
        return None
    document = decode_document(raw)
    if isinstance(document, list) or (isinstance(document, dict) and (
            not BY_NAME[chosen].lines or b"\n" in body
            or (chosen == "openai-responses" and "input" in document))):
        return document
    return None


def _context(result: ReadResult, leaf: str | None) -> Context:
    try:
        records, _ = select_branch(result.records, leaf)
    except KeyError:
        raise RepairError(f"no entry with id {leaf!r}") from None
    return build_context(records)


def remaining(result: ReadResult, leaf: str | None) -> list[str]:
    """What a check of the session `result` was read from would still name."""
    out = [str(p) for p in result.problems]
    if result.fatal:
        return out
    try:
        ctx = _context(result, leaf)
    except RepairError:
        ctx = _context(result, None)
    out.extend(f"{c.record.label() if c.record else 'session'}: {c.kind}: {c.reason}"
               for c in ctx.repairs)
    out.extend(f"{ctx.sources[r.call_slot].label()}: {REUSED_KIND}: {reused_note(r.call_id)}"
               for r in repeated_calls(ctx.messages))
    return out
