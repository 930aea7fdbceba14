"""Properties of the fold over random record sequences."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.context import BuildOptions, ContextBuilder, build_context
from sessionctx.messages import calls, result_id
from sessionctx.records import CHECKPOINT, records_from_objects
from tests.test_context import checkpoint

IDS = st.sampled_from(["a", "b", "c", "d", None])
TOOLS = st.sampled_from(["bash", "browser_use", "edit"])
WORDS = st.text(alphabet="abcdefgh ", min_size=0, max_size=8)


def _call(cid: str | None, name: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "toolCall", "name": name, "arguments": {}}
    if cid is not None:
        block["id"] = cid
    return block


@st.composite
def assistant_msg(draw: st.DrawFn) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if draw(st.booleans()):
        blocks.append({"type": "text", "text": draw(WORDS)})
    for _ in range(draw(st.integers(0, 3))):
        blocks.append(_call(draw(IDS), draw(TOOLS)))
    if draw(st.booleans()):
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": draw(IDS), "type": "function",
                                "function": {"name": draw(TOOLS), "arguments": "{}"}}]}
    return {"role": "assistant", "content": blocks}


@st.composite
def result_msg(draw: st.DrawFn) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": draw(WORDS)}]
    for _ in range(draw(st.integers(0, 2))):
        content.append({"type": "image", "data": draw(WORDS), "mimeType": "image/png"})
    msg: dict[str, Any] = {"role": "toolResult", "toolName": draw(TOOLS), "content": content}
    cid = draw(IDS)
    if cid is not None:
        msg["toolCallId"] = cid
    return msg


USER = st.builds(lambda t: {"role": "user", "content": [{"type": "text", "text": t}]}, WORDS)
OTHER = st.sampled_from([
    {"kind": "context", "text": "stop"},
    {"role": "bashExecution", "command": "ls", "output": "x", "exitCode": 0},
    {"role": "bashExecution", "command": "rm", "excludeFromContext": True},
    {"role": "custom", "content": "steer", "display": False},
    {"type": "label", "label": "x"},
    {"role": "compactionSummary", "summary": "s"},
    {"type": "compaction", "summary": "bad"},
])


@st.composite
def records(draw: st.DrawFn) -> list[dict[str, Any]]:
    simple = st.one_of(USER, assistant_msg(), result_msg(), OTHER)
    objs = draw(st.lists(simple, max_size=25))
    if draw(st.booleans()) and objs:
        at = draw(st.integers(0, len(objs)))
        inner = draw(st.lists(st.one_of(USER, assistant_msg(), result_msg()), max_size=4))
        objs.insert(at, checkpoint(*inner))
    return objs


OPTIONS = st.builds(BuildOptions, keep_screenshots=st.integers(0, 2),
                    note_unpaired=st.booleans())


def assert_one_to_one(messages: list[dict[str, Any]]) -> None:
    open_calls: dict[str, int] = {}
    for m in messages:
        for c in calls(m):
            assert c.id is not None
            open_calls[c.id] = open_calls.get(c.id, 0) + 1
        rid = result_id(m)
        if m.get("role") in ("toolResult", "tool"):
            assert rid is not None and open_calls.get(rid, 0) > 0, "result without earlier call"
            open_calls[rid] -= 1
    assert all(v == 0 for v in open_calls.values()), "call without later result"


@settings(max_examples=300, deadline=None)
@given(records(), OPTIONS)
def test_every_kept_call_and_result_is_paired(objs, options):
    ctx = build_context(records_from_objects(objs), options)
    assert_one_to_one(ctx.messages)
    assert len(ctx.messages) == len(ctx.sources)


@settings(max_examples=300, deadline=None)
@given(records(), OPTIONS)
def test_no_text_of_a_kept_record_is_lost(objs, options):
    recs = records_from_objects(objs)
    ctx = build_context(recs, options)
    start = max([i for i, r in enumerate(recs) if r.kind == CHECKPOINT and r.problem is None],
                default=-1)
    by_index: dict[int | None, dict[str, Any]] = {}
    for m, s in zip(ctx.messages, ctx.sources, strict=True):
        if s.part is None:
            by_index.setdefault(s.index, m)
    for i, rec in enumerate(recs):
        if i <= start or rec.view.get("role") not in ("user", "assistant", "toolResult"):
            continue
        content = rec.view.get("content")
        texts = [b["text"] for b in content or [] if b.get("type") == "text"
                 and b["text"].strip()]
        if not texts:
            continue
        if rec.view["role"] == "user":
            assert i in by_index, "a user message never goes"
        if i in by_index:
            kept = [b.get("text") for b in by_index[i]["content"]]
            assert all(t in kept for t in texts)


@settings(max_examples=200, deadline=None)
@given(records(), OPTIONS)
def test_incremental_equals_batch(objs, options):
    recs = records_from_objects(objs)
    builder = ContextBuilder(options)
    for n, rec in enumerate(recs, 1):
        builder.append(rec)
        inc = builder.context()
        batch = build_context(recs[:n], options)
        assert inc.messages == batch.messages
        assert inc.changes == batch.changes
        assert inc.pending_calls == batch.pending_calls


@settings(max_examples=300, deadline=None)
@given(records(), OPTIONS)
def test_building_the_built_context_changes_nothing(objs, options):
    ctx = build_context(records_from_objects(objs), options)
    again = build_context(records_from_objects(ctx.messages), options)
    assert again.messages == ctx.messages
    assert not again.repairs


def reference_pairs(messages: list[dict[str, Any]]) -> set[tuple[int, int]]:
    """The spec, written plainly: each result answers the earliest unanswered earlier call."""
    call_sites = [(i, c.id) for i, m in enumerate(messages) for c in calls(m)]
    used: set[int] = set()
    pairs = set()
    for j, m in enumerate(messages):
        rid = result_id(m)
        if rid is None:
            continue
        for k, (i, cid) in enumerate(call_sites):
            if k not in used and cid == rid and i < j:
                used.add(k)
                pairs.add((k, j))
                break
    return pairs


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(USER, assistant_msg(), result_msg()), max_size=25))
def test_kept_results_match_the_plain_spec(objs):
    ctx = build_context(records_from_objects(objs))
    expected_results = {j for _, j in reference_pairs(objs)}
    kept_results = {s.index for m, s in zip(ctx.messages, ctx.sources, strict=True)
                    if m.get("role") == "toolResult"}
    assert kept_results == expected_results
    expected_calls = len(reference_pairs(objs))
    assert sum(1 for m in ctx.messages for _ in calls(m)) == expected_calls
