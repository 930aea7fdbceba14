"""The proxy's audit log: every repaired request is recorded with what became of it (the
upstream's status, an upstream that could not be reached or broke off, a client that left) and
counted in the summary `sessionctx run` prints; `sessionctx proxy log` shows one line a
request, and `--json` the entries."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.providers.wire import repair_request
from sessionctx.proxy.audit import line
from sessionctx.store.postgres import split_url
from tests.proxy_thread import post, running_proxy
from tests.strict_stub import serve
from tests.test_proxy_faults import BROKEN
from tests.test_proxy_run import SCRIPT, _env


def _dead_port() -> str:
    """A base URL nothing listens on (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def logged(store: str, count: int = 1) -> list[dict[str, Any]]:
    """`sessionctx proxy log --json` once `count` entries landed (they are written after the
    answer)."""
    deadline = time.monotonic() + 10
    while True:
        out = CliRunner().invoke(main, ["proxy", "log", "--store", store, "--json"])
        assert out.exit_code == 0, out.output
        found: list[dict[str, Any]] = json.loads(out.output)["entries"]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_a_repaired_request_the_upstream_never_got_is_recorded_and_counted(tmp_path):
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    with running_proxy(_dead_port(), store) as proxy:
        status, headers, data = post(proxy.url, "/v1/messages", json.dumps(BROKEN).encode(),
                                     headers={"x-claude-code-session-id": "cc-1"})
        assert status == 502 and headers["x-sessionctx-proxy-error"] == "1"
        assert "sessionctx proxy could not reach the upstream" in data.decode()
        found = logged(store)
        assert (proxy.totals.repaired, proxy.totals.unanswered) == (1, 1)
        assert "1 repaired (0 after a refusal, 1 not answered)" in proxy.totals.line()
    [entry] = found
    assert entry["status"] == 502 and entry["session_id"] == "cc-1"
    assert entry["outcome"].startswith("upstream unreachable: ClientConnectorError")
    assert [p["id"] for p in entry["pending_calls"]] == ["t1"]
    text = CliRunner().invoke(main, ["proxy", "log", "--store", store]).output
    assert "upstream unreachable" in text and "cc-1" in text


def test_run_counts_a_repair_the_upstream_never_got(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(SCRIPT)
    env = _env(tmp_path, ANTHROPIC_BASE_URL=_dead_port())
    done = subprocess.run([sys.executable, "-m", "sessionctx.cli", "run", "--",
                           sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and "sessionctx proxy could not reach" in done.stderr
    assert "sessionctx: 1 request, 1 repaired (0 after a refusal, 1 not answered)" in done.stderr
    [entry] = logged(env["SESSIONCTX_STORE"])
    assert entry["outcome"].startswith("upstream unreachable:")


def test_a_refusal_cut_off_mid_answer_is_a_502_and_recorded(tmp_path):
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    script = [{"status": 400, "message": "tool_use ids were found without tool_result " * 9,
               "cut": True}]
    with serve(script) as up, running_proxy(up.url, store) as proxy:
        status, headers, data = post(proxy.url, "/v1/messages", json.dumps(BROKEN).encode())
        assert status == 502 and headers["x-sessionctx-proxy-error"] == "1"
        assert "sessionctx proxy" in data.decode() and "broke off" in data.decode()
        [entry] = logged(store)
        assert proxy.totals.unanswered == 1 and len(up.requests) == 1
    assert entry["outcome"].startswith("upstream broke off its answer: ")


def test_a_client_gone_before_the_answer_is_recorded(tmp_path):
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    with serve([{"text": "late", "delay": 0.5}]) as up, running_proxy(up.url, store) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        body = json.dumps(BROKEN).encode()
        with socket.create_connection((host, int(port))) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n"
                      b"content-type: application/json\r\n"
                      + f"content-length: {len(body)}\r\n\r\n".encode() + body)
            time.sleep(0.1)
        [entry] = logged(store)
        assert proxy.totals.unanswered == 1
    assert entry["outcome"] == "client went away" and entry["status"] is None


def test_an_answered_repair_says_so(tmp_path):
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    with serve() as up, running_proxy(up.url, store) as proxy:
        for stream in (False, True):
            status, _, _ = post(proxy.url, "/v1/messages",
                                json.dumps({**BROKEN, "stream": stream}).encode())
            assert status == 200
        found = logged(store, 2)
        assert (proxy.totals.repaired, proxy.totals.unanswered) == (2, 0)
    assert [(e["status"], e["outcome"]) for e in found] == [(200, "upstream answered 200")] * 2


def test_proxy_log_with_nothing_recorded(tmp_path: Path):
    store = f"sqlite:///{tmp_path / 'none.db'}"
    out = CliRunner().invoke(main, ["proxy", "log", "--store", store])
    assert out.exit_code == 0 and out.output == "the proxy has repaired nothing yet\n"
    out = CliRunner().invoke(main, ["proxy", "log", "--store", store, "--json"])
    assert json.loads(out.output) == {"entries": []}


def test_a_record_holds_what_the_issue_lists_and_no_body_unless_asked(tmp_path):
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    written = {"type": "tool_result", "tool_use_id": "t2", "is_error": True,
               "content": "[Tool call interrupted: the session ended before this call's "
                          "result was recorded]"}
    body = {**BROKEN, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls",
                                           "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "ls",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "and?"}, written]}]}
    with serve() as up, running_proxy(up.url, store) as proxy:
        status, headers, _ = post(proxy.url, "/v1/messages?beta=true",
                                  json.dumps(body).encode(), headers={"session-id": "cx-7"})
        assert status == 200 and headers["x-sessionctx-pending-calls"] == "1"
        [entry] = logged(store)
        sent = up.requests[-1]["body"]
    assert '"t2"' not in json.dumps(sent) and "interrupted" not in json.dumps(sent)
    assert [p["id"] for p in entry["pending_calls"]] == ["t2"]  # the agent's own result
    assert "result_written_by_agent" in [c["kind"] for c in entry["changes"]]
    assert entry["session_id"] == "cx-7" and entry["api"] == "anthropic"
    assert entry["model"] == "claude-sonnet-4-5" and entry["path"] == "/v1/messages"
    assert datetime.fromisoformat(entry["time"]).tzinfo is not None
    assert entry["reactive"] is False and entry["overhead_ms"] >= 0
    assert "body" not in entry
    assert list(entry) == FIELDS  # `proxy log --json` keeps these keys, in this order


FIELDS = ["time", "session_id", "api", "path", "model", "reactive", "status", "outcome",
          "overhead_ms", "changed", "violations", "changes", "pending_calls", "remaining",
          "unread"]


def test_a_log_line_says_when_who_what_and_what_became_of_it():
    entry = {"time": "2026-12-05T00:22:44.901+00:00", "session_id": "cc-1",
             "api": "anthropic", "model": "claude-sonnet-4-5", "reactive": True,
             "status": 200, "outcome": "upstream answered 200",
             "changes": [{"kind": "dropped_unpaired_call"}, {"kind": "dropped_unpaired_call"},
                         {"kind": "same_role_turns_merged"}],
             "pending_calls": [{"id": "t1", "name": "ls"}, {"id": "t2", "name": "cat"}]}
    assert line(entry) == (
        "2026-12-05T00:22:44.901+00:00  session cc-1  anthropic claude-sonnet-4-5  "
        "after a refusal: dropped_unpaired_call x2, same_role_turns_merged  "
        "pending: ls (t1), cat (t2)  -> upstream answered 200")
    older = {"time": "t", "api": "gemini", "status": 400, "changes": []}  # before outcomes
    assert line(older) == ("t  session -  gemini -  before sending: no change  "
                           "pending: none  -> upstream answered 400")


def test_note_unpaired_tells_the_model_and_invents_no_result(tmp_path):
    with serve() as up, running_proxy(up.url, note_unpaired=True) as proxy:
        status, _, _ = post(proxy.url, "/v1/messages", json.dumps(BROKEN).encode())
        assert status == 200 and proxy.totals.pending == 1
        sent = up.requests[-1]["body"]
    text = json.dumps(sent["messages"])
    assert "interrupted" in text and '"t1"' not in text and "tool_result" not in text
    without = json.dumps(repair_request("anthropic", BROKEN).body["messages"])
    assert "interrupted" not in without


@pytest.mark.skipif(not os.environ.get("SESSIONCTX_TEST_POSTGRES"),
                    reason="SESSIONCTX_TEST_POSTGRES is not set")
def test_a_postgresql_store_keeps_the_records():
    base = os.environ["SESSIONCTX_TEST_POSTGRES"]
    schema = f"sctx_proxy_{uuid.uuid4().hex[:12]}"
    store = f"{base}{'&' if '?' in base else '?'}schema={schema}"
    try:
        with serve() as up, running_proxy(up.url, store) as proxy:
            post(proxy.url, "/v1/messages", json.dumps(BROKEN).encode(),
                 headers={"x-claude-code-session-id": "pg-1"})
            [entry] = logged(store)
        assert entry["session_id"] == "pg-1" and entry["pending_calls"][0]["id"] == "t1"
        text = CliRunner().invoke(main, ["proxy", "log", "--store", store]).output
        assert "pg-1" in text and "ls (t1)" in text
    finally:
        conninfo, name = split_url(store)
        with psycopg.connect(conninfo, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def test_a_repaired_answer_cut_off_midway_is_recorded_as_such(tmp_path):
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    with serve([{"text": "x", "cut": True}]) as up, running_proxy(up.url, store) as proxy:
        with pytest.raises((http.client.IncompleteRead, ConnectionError)):
            post(proxy.url, "/v1/messages", json.dumps({**BROKEN, "stream": True}).encode())
        [entry] = logged(store)
        assert (proxy.totals.repaired, proxy.totals.unanswered) == (1, 1)
    assert entry["status"] == 200
    assert entry["outcome"].startswith("upstream answered 200, cut off")
