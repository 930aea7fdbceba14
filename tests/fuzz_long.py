"""The long fuzz run: the fuzz test's inputs and promises for a fixed time, every failure
collected (not only the first), and a summary of what was tried.

Run: .venv/bin/python -m tests.fuzz_long --minutes 10 [--seed N] [--commands K] [--slow S]

First, the inputs that are not bytes in a file (devices, a FIFO, an endless stdin, a 10 GB
sparse file) go through the commands once each. Then each input goes through the library in
every `--from` format and K commands (all commands, all `--from` values, all five providers,
drawn at random). It prints the inputs and command
invocations tried, the three slowest inputs, and every distinct exception (or input slower than
`--slow` seconds, default 30) with the input that caused it; it exits 1 when there was any.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback

from hypothesis import HealthCheck, Phase, given, settings

from tests import fuzzing


def run_batch(seeds: list[bytes], rnd: random.Random, deadline: float,
              args: argparse.Namespace, tried: dict[str, int], failures: dict[str, str],
              slowest: list[tuple[float, bytes]]) -> None:
    """One hypothesis run of `args.batch` inputs; each failure is recorded, not raised, and
    so is an input slower than `args.slow` seconds."""

    @settings(max_examples=args.batch, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(fuzzing.inputs(seeds))
    def one(raw: bytes) -> None:
        if time.monotonic() >= deadline:
            return
        tried["inputs"] += 1
        started = time.monotonic()
        try:
            tried["invocations"] += fuzzing.check_input(
                raw, lambda found: rnd.sample(found, args.commands))
        except Exception as exc:
            cause = exc.__cause__ or exc
            frames = traceback.extract_tb(cause.__traceback__)
            where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
            key = f"{type(cause).__name__} at {where}"
            if key not in failures:
                failures[key] = f"{exc}\ninput (first 300 bytes): {raw[:300]!r}"
        took = time.monotonic() - started
        slowest.append((took, raw))
        slowest.sort(key=lambda pair: -pair[0])
        del slowest[3:]
        if took > args.slow:  # an input no command should take this long over
            failures.setdefault("slow input", f"{took:.1f} s, {len(raw):,} bytes\n"
                                f"input (first 300 bytes): {raw[:300]!r}")

    one()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--commands", type=int, default=6)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--slow", type=float, default=30.0,
                        help="seconds an input may take over all its commands")
    parser.add_argument("--skip-special", action="store_true",
                        help="skip the devices, FIFO, endless stdin and sparse file")
    args = parser.parse_args()
    seeds = fuzzing.seeds()
    tried = {"inputs": 0, "invocations": 0}
    failures: dict[str, str] = {}
    slowest: list[tuple[float, bytes]] = []
    with tempfile.TemporaryDirectory(prefix="sessionctx-special-") as work:
        for case in [] if args.skip_special else fuzzing.special_inputs(work):
            tried["special inputs"] = tried.get("special inputs", 0) + 1
            try:
                fuzzing.run_special(case)
            except Exception as exc:
                failures[f"special input {' '.join(case.args)}"] = str(exc)[-500:]
    deadline = time.monotonic() + args.minutes * 60
    batch = 0
    while time.monotonic() < deadline:
        rnd = random.Random(args.seed * 1_000_003 + batch)
        run_batch(seeds, rnd, deadline, args, tried, failures, slowest)
        batch += 1
    print(f"inputs tried: {tried['inputs']}; command invocations: {tried['invocations']}; "
          f"library reads: {tried['inputs'] * len(fuzzing.FORMATS)}; "
          f"special inputs: {tried.get('special inputs', 0)}; "
          f"distinct failures: {len(failures)}")
    for took, raw in slowest:
        print(f"slow: {took:.2f} s, {len(raw):,} bytes: {raw[:80]!r}")
    for key, detail in failures.items():
        print(f"--- {key}\n{detail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
