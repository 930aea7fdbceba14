"""Planning a repair: read the session, let the context say what is wrong, edit the format.

Pure: bytes in, the repaired bytes and the list of fixes out. The repaired bytes are read
back the same way before anyone writes them, and what still needs repair is named.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sessionctx.context import Context, PendingCall, build_context
from sessionctx.errors import SessionctxError
from sessionctx.inputs import detect_format, read_raw
from sessionctx.records import ReadResult, select_branch
from sessionctx.writeback import claude_code, codex, native, notes
from sessionctx.writeback.edits import Fix, Lines
from sessionctx.writeback.wanted import Wanted, wanted

Planner = Callable[[Lines, ReadResult, Wanted, "notes.NoteMaker | None"], list[Fix]]

LINE_FORMATS: dict[str, tuple[Planner, notes.Builder]] = {
    "claude-code": (claude_code.plan, notes.claude_code_note),
    "codex": (codex.plan, notes.codex_note),
    "pi": (native.plan, notes.pi_note),
    "native": (native.plan, notes.pi_note),
}


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

    @property
    def changed(self) -> bool:
        return self.after != self.before


def plan_repair(raw: bytes, path: str | None, fmt: str = "auto", *, leaf: str | None = None,
                note_unpaired: bool = False) -> Plan:
    chosen = detect_format(raw, fmt)
    result = read_raw(raw, path, fmt)
    if result.fatal:
        raise RepairError("; ".join(str(p) for p in result.problems if p.fatal))
    if chosen not in LINE_FORMATS or raw.lstrip()[:1] == b"[" or _is_document(raw):
        raise RepairError(f"{path or 'the input'}: repair writes JSONL sessions "
                          f"(claude-code, codex, pi, native); this {chosen} file is one JSON "
                          "document")
    ctx = _context(result, leaf)
    planner, builder = LINE_FORMATS[chosen]
    lines = Lines(raw)
    maker = notes.NoteMaker(builder) if note_unpaired else None
    fixes = sorted(planner(lines, result, wanted(ctx), maker),
                   key=lambda f: (f.line or 0, f.action == "inserted"))
    after = lines.render()
    return Plan(chosen, raw, after, fixes, ctx.pending_calls,
                remaining(after, path, chosen, leaf))


def _is_document(raw: bytes) -> bool:
    from sessionctx.importers.detect import decode_document

    return raw.lstrip()[:1] == b"{" and isinstance(decode_document(raw), dict) and (
        raw.strip().count(b"\n") > 0)


def _context(result: ReadResult, leaf: str | None) -> Context:
    try:
        records, _ = select_branch(result.records, leaf)
    except KeyError:
        raise RepairError(f"no entry with id {leaf!r}") from None
    return build_context(records)


def remaining(raw: bytes, path: str | None, fmt: str, leaf: str | None) -> list[str]:
    """What a check of these bytes, read as `fmt`, would still name."""
    result = read_raw(raw, path, fmt)
    out = [str(p) for p in result.problems]
    if result.fatal:
        return out
    try:
        ctx = _context(result, leaf)
    except RepairError:
        ctx = _context(result, None)
    out.extend(f"{c.record.label() if c.record else 'session'}: {c.kind}: {c.reason}"
               for c in ctx.repairs)
    return out
