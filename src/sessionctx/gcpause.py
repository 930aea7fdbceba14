"""Pausing the cyclic garbage collector while large acyclic trees are built.

Decoding a session allocates millions of dicts and lists that hold no cycles; the collector
would rescan them over and over, which costs more than the decoding itself.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _to_oldest_generation()
            gc.enable()


def _to_oldest_generation() -> None:
    """Every object the collector tracks, the trees just built included, joins the oldest
    generation, as they would after surviving two collections: resuming then does not scan
    the whole new heap at once in a young collection that would free none of it."""
    gc.freeze()
    gc.unfreeze()
