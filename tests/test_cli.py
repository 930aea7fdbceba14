"""The `sessionctx` command: the contract other tools rely on, on examples and real fixtures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from tests.conftest import FIXTURES, ROOT

EXAMPLE = str(ROOT / "examples" / "interrupted.jsonl")
PI_FILES = sorted((FIXTURES / "pi").iterdir())


def run(*args: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(main, list(args), input=stdin)


def unpaired_in_raw(path: Path) -> set[str]:
    """Call ids with no later result, computed straight from the raw file."""
    text = path.read_text()
    objs = [json.loads(line) for line in text.splitlines() if line.strip()] \
        if path.suffix == ".jsonl" else [json.loads(text)]
    messages = [o.get("message", o) for o in objs]
    open_ids: list[str] = []
    for m in messages:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            open_ids += [b["id"] for b in m["content"] if b.get("type") == "toolCall"]
        if m.get("role") == "toolResult" and m.get("toolCallId") in open_ids:
            open_ids.remove(m["toolCallId"])
    return set(open_ids)


def test_build_json_contract():
    res = run("build", EXAMPLE, "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) == {"messages", "changes", "pending_calls"}
    assert data["pending_calls"][0]["id"] == "patch-1"
    assert data["pending_calls"][0]["record"] == {"line": 4}
    assert all("record" in c and "reason" in c and "kind" in c for c in data["changes"])
    assert data["messages"][0]["role"] == "user"


def test_json_is_one_compact_line_and_pretty_indents_the_same_document(tmp_path: Path):
    # a real process runs the program as installed: no cyclic collector, bytes to stdout
    session = tmp_path / "s.jsonl"
    session.write_text(json.dumps({"role": "user", "content": "ünïcode ✓", "score": 1e308})
                       + "\n" + '{"role": "assistant", "content": "ok", "x": NaN}\n')
    compact = subprocess.run([sys.executable, "-m", "sessionctx", "build", str(session),
                              "--json"], capture_output=True, check=True).stdout
    pretty = subprocess.run([sys.executable, "-m", "sessionctx", "build", str(session),
                             "--json", "--pretty"], capture_output=True, check=True).stdout
    assert compact.endswith(b"\n") and compact.count(b"\n") == 1
    assert "ünïcode ✓".encode() in compact  # UTF-8, not \u escapes
    assert pretty.startswith(b'{\n  "messages": [\n')
    assert json.loads(pretty) == json.loads(compact)
    assert json.loads(compact)["messages"][0]["content"] == "ünïcode ✓"
    body = run("build", EXAMPLE, "--provider", "anthropic", "--placeholder-tools",
               "--pretty").stdout
    assert body.startswith('{\n  "messages"') and json.loads(body)["messages"]


def test_a_plain_build_imports_no_provider_importer_store_or_compaction_module():
    script = ("import sys\nfrom sessionctx.cli import main\n"
              f"main(['build', {EXAMPLE!r}], standalone_mode=False)\n"
              "print(' '.join(m for m in sys.modules if m.startswith('sessionctx')))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split("\n")[-2].split()
    assert "sessionctx.context" in out and "sessionctx.records" in out
    unused = [m for m in out if m.startswith(("sessionctx.store", "sessionctx.compaction",
                                              "sessionctx.providers.", "sessionctx.formats."))
              and m not in ("sessionctx.providers.names", "sessionctx.formats.common",
                            "sessionctx.formats.detect", "sessionctx.formats.registry",
                            "sessionctx.formats.native.read")
              and not (m.startswith("sessionctx.formats.") and (
                  m.endswith((".detect", ".lines")) or m.count(".") == 2))]
    assert unused == []


def test_build_text_and_display_view():
    res = run("build", EXAMPLE)
    assert res.exit_code == 0 and "pending call" in res.output and "patch-1" in res.output
    shown = json.loads(run("build", EXAMPLE, "--view", "display", "--json").output)
    roles = [m["role"] for m in shown["messages"]]
    assert "bashExecution" in roles and roles.count("assistant") == 2


def test_check_exit_codes(tmp_path: Path):
    assert run("check", EXAMPLE).exit_code == 1
    clean = tmp_path / "clean.jsonl"
    clean.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n")
    res = run("check", str(clean), "--json")
    assert res.exit_code == 0 and json.loads(res.output)["ok"] is True
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\x00\x01\x02")
    res = run("check", str(binary))
    assert res.exit_code == 2 and "binary" in res.output
    assert run("check", str(tmp_path / "missing.jsonl")).exit_code == 2
    assert run("check").exit_code == 2


def test_check_json_lists_problems_with_lines(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"role": "user", "content": "a"}\nnot json\n'
                    '{"role": "toolResult", "toolCallId": "x", "content": "r"}\n')
    res = run("check", str(path), "--json")
    data = json.loads(res.output)
    assert res.exit_code == 1 and data["ok"] is False
    assert [p["record"] for p in data["problems"]] == [{"line": 2}, {"line": 3}]
    assert data["problems"][1]["kind"] == "dropped_orphan_result"


def test_stdin_and_options():
    body = Path(EXAMPLE).read_text()
    res = run("build", "-", "--json", "--note-unpaired", stdin=body)
    data = json.loads(res.output)
    assert any("interrupted" in json.dumps(m) for m in data["messages"])
    res = run("build", "-", "--json", "--browser-tool", "web", "--keep-screenshots", "0",
              stdin=body)
    assert res.exit_code == 0
    assert run("build", EXAMPLE, "--keep-screenshots", "-1").exit_code == 2


def test_explain_shows_three_readings():
    res = run("explain", EXAMPLE)
    assert res.exit_code == 0
    assert "dropped_unpaired_call" in res.output and "hidden" in res.output
    assert "not sent" in res.output and "#0" in res.output


@pytest.mark.parametrize("path", PI_FILES, ids=lambda p: p.name)
def test_pi_fixtures_report_exactly_their_unpaired_calls(path: Path):
    expected = unpaired_in_raw(path)
    built = run("build", str(path), "--json")
    assert built.exit_code == 0, built.output
    assert {p["id"] for p in json.loads(built.output)["pending_calls"]} == expected
    checked = run("check", str(path), "--json")
    data = json.loads(checked.output)
    assert {p["id"] for p in data["pending_calls"]} == expected
    dropped = {c["detail"]["tool_call_id"] for c in data["changes"]
               if c["kind"] == "dropped_unpaired_call"}
    assert dropped == expected


def test_large_pi_fixture_has_its_18_interrupted_calls():
    assert len(unpaired_in_raw(FIXTURES / "pi" / "large-session.jsonl")) == 18


def test_no_traceback_for_bad_input_in_a_real_process(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"role": "user", "content": "ok"}\n\xff\xfe\n{"role": 3}\n{"tor')
    proc = subprocess.run([sys.executable, "-m", "sessionctx", "check", str(bad)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    assert f"{bad}:2" in proc.stdout and f"{bad}:4" in proc.stdout


def test_progress_bar_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import io

    from sessionctx.cli import loader as cli

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    big = tmp_path / "big.jsonl"
    big.write_text(json.dumps({"role": "user", "content": "x" * 1000}) + "\n" * 1)
    fake = Tty()
    monkeypatch.setattr("sys.stderr", fake)
    monkeypatch.setattr(cli, "PROGRESS_MIN_BYTES", 10)
    show = cli.progress_printer(str(big))
    assert show is not None
    show(50, 100)
    show(100, 100)
    assert "50%" in fake.getvalue() and "100%" in fake.getvalue()
    monkeypatch.setattr(cli, "PROGRESS_MIN_BYTES", 10**9)
    assert cli.progress_printer(str(big)) is None
