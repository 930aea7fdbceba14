"""The provider step's cost as a ratio to the core build's cost, on one synthetic 10k-message
context (goals, worst provider: <= 0.7 on the repair-heavy context, <= 1.0 on any context).

Run: .venv/bin/python benchmarks/bench_providers.py [messages]

The core build is the stored session turned into its context: the JSONL file read and its
records folded, as `sessionctx build` does it and as the core's and the importers' benchmarks
measure it. The goal's ratio is taken against it. A second ratio, against `build_context` over
records already in memory ("the fold alone"), is printed as a stricter reference: the fold copies
runs of unchanged messages by slice, so even a bare copy of every message into a new body (the
reference line, no rule applied) costs about half of it. The provider step is `build_request`
on the built context, its change log included. Times are the least CPU time of the process over
several rounds in which every step takes its turn. Two contexts are measured: one that needs no
repairs, and one in which every call id needs rewriting and every assistant turn has an empty
block and foreign thinking to drop.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from sessionctx.context import build_context
from sessionctx.providers import PROVIDERS, build_request
from sessionctx.records import Record, read_path, records_from_objects

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the package
from benchmarks.turns import REPEATS, least


def synthetic(n: int, repairs: bool = True) -> list[Record]:
    """Tool loops with parallel calls and a few images; with `repairs`, every call id needs
    rewriting and every assistant turn has an empty block and foreign thinking to drop."""
    objects: list[dict[str, Any]] = []
    i = 0
    while len(objects) < n:
        objects.append({"role": "user", "content": [{"type": "text", "text": f"step {i}"}]})
        ids = [f"call.{i}.{k}" if repairs else f"call_{i}_{k}" for k in range(2)]
        objects.append({"role": "assistant", "api": "anthropic-messages",
                        "model": "claude-sonnet-4-5", "content": [
                            *([{"type": "thinking", "thinking": "plan " * 20,
                                "thinkingSignature": "sig" * 10},
                               {"type": "text", "text": " "}] if repairs else []),
                            *[{"type": "toolCall", "id": c, "name": "bash",
                               "arguments": {"cmd": f"ls {i}"}} for c in ids]]})
        for c in ids:
            content: list[dict[str, Any]] = [{"type": "text", "text": "out " * 50}]
            if i % 50 == 0:
                content.append({"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"})
            objects.append({"role": "toolResult", "toolCallId": c, "toolName": "bash",
                            "content": content, "isError": False})
        objects.append({"role": "assistant", "api": "anthropic-messages",
                        "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": f"done {i}"}]})
        i += 1
    return records_from_objects(objects[:n])


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    for repairs in (True, False):
        print("repair-heavy context:" if repairs else "context needing no repairs:")
        run(synthetic(n, repairs), n, 0.7 if repairs else 1.0)


def bare_copy(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A reference, not a provider step: each message copied one to one into Anthropic's
    shape with no rule applied (no ids checked, no results placed, nothing logged). It shows
    what any conversion that writes a new body pays before doing any of the work."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "toolResult":
            out.append({"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": m["toolCallId"],
                "content": [{"type": "text", "text": b["text"]} for b in m["content"]
                            if b["type"] == "text"]}]})
            continue
        blocks: list[dict[str, Any]] = []
        for b in m["content"]:
            if b["type"] == "text":
                blocks.append({"type": "text", "text": b["text"]})
            elif b["type"] == "toolCall":
                blocks.append({"type": "tool_use", "id": b["id"], "name": b["name"],
                               "input": b["arguments"]})
        out.append({"role": m["role"], "content": blocks})
    return out


def run(records: list[Record], n: int, goal: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "session.jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(r.data) + "\n" for r in records)
        ctx = build_context(records)

        def core_build() -> None:
            build_context(read_path(path).records)

        def fold() -> None:
            build_context(records)

        core, folded, bare, *each = least(
            (core_build, None), (fold, None), (lambda: bare_copy(ctx.messages), None),
            *((partial(build_request, ctx, provider), None) for provider in PROVIDERS))
    costs = dict(zip(PROVIDERS, each, strict=True))
    print(f"{n} records, {len(ctx.messages)} context messages; core build (read + fold) "
          f"{core * 1000:.1f} ms; fold alone {folded * 1000:.1f} ms "
          f"(least CPU time of {REPEATS} runs)")
    for provider, cost in costs.items():
        print(f"  {provider:<17} {cost * 1000:8.1f} ms   ratio {cost / core:.2f}   "
              f"(over the fold alone {cost / folded:.2f})")
    print(f"  (reference: a bare one-to-one copy with no rule applied, ratio {bare / core:.2f}; "
          f"over the fold alone {bare / folded:.2f})")
    worst = max(costs.values())
    print(f"worst ratio over the core build {worst / core:.2f} (goal <= {goal}); "
          f"over the fold alone {worst / folded:.2f} (reference)")


if __name__ == "__main__":
    main()
