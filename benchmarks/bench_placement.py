"""Whether placement's short path pays: the provider step with results kept as they were read
(policies/placement.py `in_place`, true when every result already follows its calls) against the
same step made to run full placement (`Placement.run`), which gives the same body and changes
(tests/test_providers_property.py). Ratios above 1 mean the short path pays; it is kept only
while they are.

Run: .venv/bin/python benchmarks/bench_placement.py [messages]
"""

from __future__ import annotations

import sys
from pathlib import Path

from sessionctx.context import Context, build_context
from sessionctx.providers import build_request
from sessionctx.providers.policies import placement
from sessionctx.providers.policies.ids import WireIds

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the package
from benchmarks.bench_providers import synthetic
from benchmarks.turns import REPEATS, least

PROVIDERS = ("anthropic", "openai-chat", "gemini")
SHORT = placement.in_place


def _full(ids: WireIds) -> bool:
    """The short path refused, so placement runs in full."""
    return False


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    for repairs in (True, False):
        ctx = build_context(synthetic(n, repairs))
        print(f"{'repair-heavy' if repairs else 'no-repair'} context, {n} messages "
              f"(least CPU time of {REPEATS} runs, the two taking turns):")
        for provider in PROVIDERS:

            def short(provider: str = provider, ctx: Context = ctx) -> None:
                placement.in_place = SHORT
                build_request(ctx, provider)

            def full(provider: str = provider, ctx: Context = ctx) -> None:
                placement.in_place = _full
                build_request(ctx, provider)

            fast, slow = least((short, None), (full, None))
            placement.in_place = SHORT
            print(f"  {provider:<12} short path {fast * 1000:6.1f} ms, full placement "
                  f"{slow * 1000:6.1f} ms: full / short {slow / fast:.2f}")


if __name__ == "__main__":
    main()
