"""OpenAI Agents SDK end to end: a real Runner against a stub Responses server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

import openai
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.models.openai_responses import OpenAIResponsesModel

from sessionctx.adapters.openai_agents import RepairModelInput, SessionctxSession
from sessionctx.changes import Change, ChangeKind
from sessionctx.store import open_store
from tests.stub_servers import Stub, serve

set_tracing_disabled(True)

# The #4827 history: an approved tool's output was written, its function_call never was.
ORPHAN_HISTORY: list[Any] = [
    {"role": "user", "content": "restart the web service"},
    {"type": "function_call_output", "call_id": "call_ORPHAN", "output": "restarted"},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "The service is restarted.", "annotations": []}]},
]


@pytest.fixture
def stub() -> Iterator[Stub]:
    with serve("responses") as s:
        yield s


def _agent(stub: Stub, **extra: Any) -> Agent[Any]:
    client = openai.AsyncOpenAI(base_url=stub.url, api_key="test", max_retries=0)
    return Agent(name="ops", instructions="You run ops.",
                 model=OpenAIResponsesModel(model="gpt-stub", openai_client=client), **extra)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'sessions.db'}"


def test_the_4827_history_fails_without_the_adapter_and_runs_with_it(
        stub: Stub, tmp_path: Path) -> None:
    plain = SQLiteSession("s1", str(tmp_path / "agents.db"))
    _run(plain.add_items(ORPHAN_HISTORY))
    with pytest.raises(openai.BadRequestError, match="No tool call found for function call output"):
        _run(Runner.run(_agent(stub), "is it up?", session=plain))
    with pytest.raises(openai.BadRequestError):  # and every later turn too
        _run(Runner.run(_agent(stub), "hello?", session=plain))

    got: list[Change] = []
    session = SessionctxSession("s1", _store_url(tmp_path), on_changes=got.extend)
    _run(session.add_items(ORPHAN_HISTORY))
    result = _run(Runner.run(_agent(stub), "is it up?", session=session))
    assert result.final_output.startswith("answer")
    sent = stub.bodies[-1]["input"]
    assert not [i for i in sent if i.get("type") == "function_call_output"]
    assert sent[0] == ORPHAN_HISTORY[0] and sent[1] == ORPHAN_HISTORY[2]
    assert [c.kind for c in got if c.is_repair] == [ChangeKind.DROPPED_ORPHAN_RESULT]
    result = _run(Runner.run(_agent(stub), "and now?", session=session))
    assert result.final_output.startswith("answer")
    records = session.store.records("s1")
    assert records[1].data["raw"] == ORPHAN_HISTORY[1]  # the orphan is still stored


def test_a_call_whose_output_was_never_written_is_left_out_and_reported(
        stub: Stub, tmp_path: Path) -> None:
    got: list[Change] = []
    session = SessionctxSession("s2", _store_url(tmp_path), on_changes=got.extend)
    lost: list[Any] = [
        {"role": "user", "content": "delete the branch"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_LOST", "name": "git",
         "arguments": '{"args": ["branch", "-D", "old"]}', "status": "completed"},
    ]
    _run(session.add_items(lost))
    _run(Runner.run(_agent(stub), "done?", session=session))
    sent = stub.bodies[-1]["input"]
    assert [i.get("type") for i in sent if i.get("type") in ("reasoning", "function_call")] == []
    kinds = [c.kind for c in got]
    assert ChangeKind.DROPPED_UNPAIRED_CALL in kinds and ChangeKind.DROPPED_LONE_REASONING in kinds
    pending = next(c for c in got if c.kind == ChangeKind.DROPPED_UNPAIRED_CALL)
    assert pending.detail["tool_call_id"] == "call_LOST"


def test_a_real_tool_loop_is_stored_and_read_back_unchanged(stub: Stub, tmp_path: Path) -> None:
    @function_tool
    def uptime(host: str) -> str:
        """How long the host has been up."""
        return f"{host}: 12 days"

    stub.scripted.append([{"type": "function_call", "id": "fc_9", "call_id": "call_9",
                           "name": "uptime", "arguments": '{"host": "web1"}',
                           "status": "completed"}])
    session = SessionctxSession("s3", _store_url(tmp_path))
    _run(Runner.run(_agent(stub, tools=[uptime]), "uptime of web1?", session=session))
    items = _run(session.get_items())
    kinds = [i.get("type", "message") for i in items]
    assert kinds == ["message", "function_call", "function_call_output", "message"]
    assert items[2]["output"] == "web1: 12 days"
    assert stub.bodies[1]["input"][1]["call_id"] == "call_9"  # the pair went out together
    # the stored records are the items, readable by the CLI's store commands too
    assert [r.data["raw"] for r in session.store.records("s3")] == items
    assert _run(session.get_items(limit=2)) == items[2:][1:]  # never an output without its call
    assert _run(session.get_items(limit=3)) == items[1:]


def test_pop_item_and_clear_session_lose_no_stored_record(stub: Stub, tmp_path: Path) -> None:
    session = SessionctxSession("s4", _store_url(tmp_path))
    items: list[Any] = [{"role": "user", "content": f"m{i}"} for i in range(4)]
    _run(session.add_items(items))
    before = [r.data for r in session.store.records("s4")]
    popped = _run(session.pop_item())
    assert popped == {"role": "user", "content": "m3"}
    assert [i["content"] for i in _run(session.get_items())] == ["m0", "m1", "m2"]
    _run(session.clear_session())
    assert _run(session.get_items()) == []
    assert _run(session.pop_item()) is None
    after = [r.data for r in session.store.records("s4")]
    assert after[:4] == before and len(after) == 6
    assert after[4]["type"] == after[5]["type"] == "compaction"
    again: list[Any] = [{"role": "user", "content": "again"}]
    _run(session.add_items(again))
    result = _run(Runner.run(_agent(stub), "hi", session=session))
    assert result.final_output.startswith("answer")
    assert [i.get("content") for i in stub.bodies[-1]["input"]][:2] == ["again", "hi"]


def test_the_input_filter_repairs_a_session_the_adapter_does_not_own(
        stub: Stub, tmp_path: Path) -> None:
    plain = SQLiteSession("s5", str(tmp_path / "agents.db"))
    _run(plain.add_items(ORPHAN_HISTORY))
    got: list[Change] = []
    config = RunConfig(call_model_input_filter=RepairModelInput(on_changes=got.extend))
    result = _run(Runner.run(_agent(stub), "is it up?", session=plain, run_config=config))
    assert result.final_output.startswith("answer")
    assert [c.kind for c in got if c.is_repair] == [ChangeKind.DROPPED_ORPHAN_RESULT]


@pytest.mark.skipif(not os.environ.get("SESSIONCTX_TEST_POSTGRES"),
                    reason="SESSIONCTX_TEST_POSTGRES is not set")
def test_a_postgres_store_serves_the_session(stub: Stub) -> None:
    import psycopg

    from sessionctx.store.postgres import split_url
    base = os.environ["SESSIONCTX_TEST_POSTGRES"]
    url = f"{base}{'&' if '?' in base else '?'}schema=sctx_agents_{uuid.uuid4().hex[:10]}"
    store = open_store(url)
    try:
        session = SessionctxSession("pg", store)
        _run(session.add_items(ORPHAN_HISTORY))
        result = _run(Runner.run(_agent(stub), "is it up?", session=session))
        assert result.final_output.startswith("answer")
        assert len(store.records("pg")) == len(ORPHAN_HISTORY) + 2
    finally:
        store.close()
        conninfo, schema = split_url(url)
        with psycopg.connect(conninfo, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_a_session_compacted_by_sessionctx_reads_from_its_checkpoint(
        stub: Stub, tmp_path: Path) -> None:
    from sessionctx.compaction.checkpoint import Settings, compact
    from sessionctx.compaction.store_target import StoreTarget
    from tests.test_compaction_checkpoint import summarizer, write_summarizer

    session = SessionctxSession("s6", _store_url(tmp_path))
    history: list[Any] = []
    for t in range(4):
        history += [
            {"role": "user", "content": f"turn {t}: edit /srv/app/mod{t}.py"},
            {"type": "function_call", "call_id": f"call_{t}", "name": "bash",
             "arguments": f'{{"cmd": "sed -i s/a/b/ mod{t}.py"}}'},
            {"type": "function_call_output", "call_id": f"call_{t}",
             "output": f"edited mod{t}.py"},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": f"turn {t} done", "annotations": []}]}]
    _run(session.add_items(history))
    written = compact(StoreTarget(session.store, "s6"), summarizer(write_summarizer(tmp_path)),
                      Settings(keep_turns=1, keep_tokens=0))
    assert "items" not in written.record  # messages only, as `sessionctx compact` writes them
    items = _run(session.get_items())
    assert "edit /srv/app/mod0.py" not in str(items)
    kinds = [i.get("type") for i in items]
    assert kinds[-4:] == ["message", "function_call", "function_call_output", "message"]
    assert items[-3]["call_id"] == items[-2]["call_id"]
    result = _run(Runner.run(_agent(stub), "next?", session=session))
    assert result.final_output.startswith("answer") and not stub.rejected
