"""Core speed, as ratios measured in one run.

1. Build throughput (read + build_context) over plain msgspec decoding of the same ~100 MB
   synthetic session (goal >= 0.5).
2. Per-append cost of the incremental builder at 100k records over that at 1k (goal <= 1.5).

Run: .venv/bin/python benchmarks/bench_core.py [--mb 100]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tempfile
import time
from typing import Any

import msgspec

from sessionctx.context import ContextBuilder, build_context
from sessionctx.records import read_path, records_from_objects


def synthetic_turn(i: int, pad: str) -> list[dict[str, Any]]:
    cid = f"call_{i}"
    turn: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": f"step {i}: {pad[:200]}"}],
         "timestamp": i},
        {"role": "assistant", "content": [
            {"type": "text", "text": f"working on {i}"},
            {"type": "toolCall", "id": cid, "name": "browser_use" if i % 5 == 0 else "bash",
             "arguments": {"command": f"run {i}"}}],
         "provider": "anthropic", "api": "anthropic-messages", "model": "claude-sonnet-4-5",
         "stopReason": "toolUse", "usage": {"input": 10, "output": 5}},
    ]
    if i % 50 != 7:  # some calls are interrupted
        # tool outputs of real sessions: mostly a few KB (file reads, command output)
        body = pad * (1 + i % 4)
        content: list[dict[str, Any]] = [{"type": "text", "text": body}]
        if i % 5 == 0:
            content.append({"type": "image", "data": pad[:400], "mimeType": "image/png"})
        turn.append({"role": "toolResult", "toolCallId": cid, "toolName": "bash",
                     "content": content, "isError": False})
    if i % 20 == 0:
        turn.append({"type": "model_change", "provider": "anthropic", "modelId": "x"})
    return turn


def write_session(path: str, megabytes: int) -> int:
    pad = ("lorem ipsum dolor sit amet " * 60)[:1500]
    target = megabytes * 1024 * 1024
    written = 0
    count = 0
    i = 0
    with open(path, "wb") as f:
        while written < target:
            for obj in synthetic_turn(i, pad):
                line = json.dumps(obj).encode() + b"\n"
                f.write(line)
                written += len(line)
                count += 1
            i += 1
    return count


def best_of(n: int, fn: Any) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def per_append_cost(objs: list[dict[str, Any]], warm: int, window: int,
                    freeze: bool) -> float:
    """Seconds per append for `window` records appended after `warm` records.

    With `freeze`, what exists before the window is moved out of the cyclic collector's reach
    (gc.freeze), so its rescans of an older, larger heap are not charged to the builder.
    """
    records = records_from_objects(objs[: warm + window])
    builder = ContextBuilder()
    builder.extend(records[:warm])
    tail = records[warm:]
    gc.collect()
    if freeze:
        gc.freeze()
    t = time.perf_counter()
    for record in tail:
        builder.append(record)
    elapsed = (time.perf_counter() - t) / len(tail)
    gc.unfreeze()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "session.jsonl")
        count = write_session(path, args.mb)
        size = os.path.getsize(path)
        decoder = msgspec.json.Decoder()

        def plain() -> None:
            with open(path, "rb") as f:
                decoder.decode_lines(f.read())

        def ours() -> None:
            build_context(read_path(path).records)

        t_plain = best_of(3, plain)
        t_ours = best_of(3, ours)
        mb = size / 1048576
        print(f"session: {mb:.0f} MB, {count} records")
        print(f"plain msgspec decode: {mb / t_plain:.0f} MB/s; "
              f"read + build: {mb / t_ours:.0f} MB/s")
        print(f"build throughput / plain decoding = {t_plain / t_ours:.2f} (goal >= 0.5)")

    pad = "x" * 200
    objs = [o for i in range(40_000) for o in synthetic_turn(i, pad)]
    window = 2000
    for freeze, label in ((False, "collector as is"), (True, "older heap frozen")):
        small = min(per_append_cost(objs, 1000, window, freeze) for _ in range(5))
        large = min(per_append_cost(objs, 100_000, window, freeze) for _ in range(5))
        print(f"incremental append ({label}): {small * 1e6:.2f} us at 1k, "
              f"{large * 1e6:.2f} us at 100k")
        print(f"per-append cost at 100k / at 1k ({label}) = {large / small:.2f} (goal <= 1.5)")


if __name__ == "__main__":
    main()
