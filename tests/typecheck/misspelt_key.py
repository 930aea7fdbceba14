"""Must FAIL mypy: a renderer-like function reading a call block's key misspelt ("nmae").

Excluded from the normal mypy run (pyproject.toml); `tests/typecheck/expect.py` runs mypy on
this file and succeeds only when mypy rejects exactly this key with `typeddict-item`, which
shows that mypy checks the keys the renderers read from a turn's blocks.
"""

from typing import Any

from sessionctx.providers.policies.turns import Block


def render(block: Block) -> dict[str, Any]:
    if block["type"] == "toolCall":
        return {"type": "tool_use", "id": block["id"], "name": block["nmae"],
                "input": block["arguments"]}
    return {}
