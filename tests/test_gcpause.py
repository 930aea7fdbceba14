"""Pausing the cycle collector while a large acyclic tree is built."""

from __future__ import annotations

import gc

from sessionctx.gcpause import paused_gc

# The interpreter's own youngest and oldest generations, not numbers pinned to one version.
YOUNGEST, OLDEST = 0, len(gc.get_threshold()) - 1


def test_the_tree_built_joins_the_oldest_generation_when_the_collector_resumes() -> None:
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        with paused_gc():
            assert not gc.isenabled()
            tree = [[i] for i in range(10_000)]
        assert gc.isenabled()
        # not left young, for a young collection to scan the whole tree at once
        assert any(o is tree for o in gc.get_objects(generation=OLDEST))
        assert not any(o is tree for o in gc.get_objects(generation=YOUNGEST))
    finally:
        if not was_enabled:
            gc.disable()


def test_a_collector_paused_already_stays_paused() -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        if was_enabled:
            gc.enable()
