"""A provider in one module, as docs/architecture.md shows: a made-up "toy" API whose body is
`{"turns": [{"speaker", "lines"}], "functions"?}`, registered by one line in a test."""

from __future__ import annotations

from typing import Any

from sessionctx.providers import tools
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.turns import RESULT, Prepared
from sessionctx.providers.provider import Provider
from sessionctx.providers.violations import Violation, nothing_sent

# No image, no error field: the policies send those as text; roles alternate, a user first.
ROWS = (Capability("toy", "", error_flag=False, max_images=0),)


def render(prep: Prepared, cap: Capability) -> dict[str, Any]:
    turns = []
    for role, blocks, _ in prep.turns:
        lines = []
        for b in blocks:
            if b["type"] == "text":
                lines.append(b["text"])
            elif b["type"] == "toolCall":
                lines.append(f"call {b['id']} {b['name']}")
            elif b["type"] == RESULT:
                lines.append(f"result {b['id']}: " + " ".join(
                    c["text"] for c in b["content"] if c["type"] == "text"))
        turns.append({"speaker": role, "lines": lines})
    return {"turns": turns}


def validate(body: dict[str, Any], cap: Capability) -> list[Violation]:
    turns = body.get("turns")
    if not isinstance(turns, list):
        return [Violation("turns", "turns must be a list")]
    out = nothing_sent(turns, "turns")
    for i, turn in enumerate(turns):
        if turn.get("speaker") != ("user" if i % 2 == 0 else "assistant"):
            out.append(Violation(f"turns[{i}].speaker", "speakers alternate, a user first"))
        if not turn.get("lines") or not all(isinstance(x, str) and x for x in turn["lines"]):
            out.append(Violation(f"turns[{i}].lines", "lines are non-empty text"))
    return out


def render_tools(defined: list[tools.Tool], choice: str | None) -> dict[str, Any]:
    return {"functions": [tools.definition(t, "schema") for t in defined]}


def tool_violations(body: dict[str, Any]) -> list[Violation]:
    out: list[Violation] = []
    entries = tools.listed(body, "functions")
    if entries is None or isinstance(entries, Violation):
        return out if entries is None else [entries]
    found = [(p, t.get("name"), t.get("schema")) for p, t in tools.objects(entries, out)]
    return out + tools.check_definitions(found, [])


PROVIDER = Provider("toy", "toy-1", ROWS, render, validate, render_tools, tool_violations,
                    choices=("auto",))
