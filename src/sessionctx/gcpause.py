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
            gc.enable()
