"""The budget verdict: does a context fit its window, need compaction, or not fit even after it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionctx.errors import BadArgument

DEFAULT_RESERVE = 8192
DEFAULT_THRESHOLD = 0.8

FITS = "fits"
COMPACT = "compact"
CANNOT_FIT = "cannot-fit"


@dataclass(frozen=True, slots=True)
class Budget:
    window: int
    reserve: int = DEFAULT_RESERVE
    threshold: float = DEFAULT_THRESHOLD

    def __post_init__(self) -> None:
        if self.window <= 0:
            raise BadArgument("the window must be a positive number of tokens")
        if not 0 <= self.reserve < self.window:
            raise BadArgument("the reserve must be at least 0 and below the window")
        if not 0 < self.threshold <= 1:
            raise BadArgument("the threshold must be in (0, 1]")

    @property
    def hard_limit(self) -> int:
        """The most tokens a request may hold: the window less the reserve for the answer."""
        return self.window - self.reserve

    @property
    def trigger(self) -> int:
        """Above this many tokens a compaction is due."""
        return min(self.hard_limit, int(self.window * self.threshold))


@dataclass(frozen=True, slots=True)
class Verdict:
    verdict: str
    tokens: int
    trigger: int
    hard_limit: int
    window: int
    reserve: int
    threshold: float
    minimum_after: int | None  # the smallest context a compaction can leave

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "tokens": self.tokens, "trigger": self.trigger,
                "hard_limit": self.hard_limit, "window": self.window, "reserve": self.reserve,
                "threshold": self.threshold, "minimum_after": self.minimum_after}


def assess(tokens: int, budget: Budget, minimum_after: int | None = None) -> Verdict:
    """`minimum_after`: the tokens a compaction cannot remove (the active turn plus a summary);
    when it is over the hard limit, compaction cannot help."""
    if tokens <= budget.trigger:
        verdict = FITS
    elif minimum_after is not None and minimum_after > budget.hard_limit:
        verdict = CANNOT_FIT
    else:
        verdict = COMPACT
    return Verdict(verdict, tokens, budget.trigger, budget.hard_limit, budget.window,
                   budget.reserve, budget.threshold, minimum_after)
