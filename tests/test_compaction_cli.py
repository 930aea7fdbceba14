"""The compact, restore and budget commands."""

from __future__ import annotations

import json
import shutil
import sys

from click.testing import CliRunner

from sessionctx.cli import main
from tests.conftest import FIXTURES
from tests.test_compaction_checkpoint import checkpoints, history, write_session, write_summarizer


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_compact_large_fixture_then_it_fits_64k_and_restore(tmp_path) -> None:
    path = tmp_path / "large-session.jsonl"
    shutil.copyfile(FIXTURES / "pi" / "large-session.jsonl", path)
    path.chmod(0o644)
    assert run("budget", str(path), "--window", "64000").exit_code == 1
    script = write_summarizer(tmp_path)
    out = run("compact", str(path), "--summarizer", f"command:{sys.executable} {script}",
              "--json")
    assert out.exit_code == 0, out.output
    info = json.loads(out.output)
    assert info["tokensAfter"] <= 64_000 < info["tokensBefore"]
    fits = run("budget", str(path), "--window", "64000", "--json")
    assert fits.exit_code == 0 and json.loads(fits.output)["verdict"] == "fits"
    assert info["wrote"] == "compaction"  # pi's own entry (tests/test_compaction_own.py)
    back = run("restore", str(path), "--before", str(info["line"]))
    assert back.exit_code == 1 and "Import it into a store" in back.output


def test_dry_run_prints_plan_and_prompt_and_writes_nothing(tmp_path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, history(0, 6))
    before = path.read_bytes()
    out = run("compact", str(path), "--dry-run", "--keep-turns", "2", "--keep-tokens", "1")
    assert out.exit_code == 0, out.output
    assert out.output.startswith("plan: summarize messages 0..15 (16 messages)")
    assert '<conversation_records chunk="1" total="1">' in out.output
    assert path.read_bytes() == before


def test_refusals_exit_1_and_write_nothing(tmp_path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, history(0, 3))
    before = path.read_bytes()
    script = write_summarizer(tmp_path)
    out = run("compact", str(path), "--summarizer", f"command:{sys.executable} {script}")
    assert out.exit_code == 1 and "keeps everything" in out.output
    out = run("compact", str(path), "--force", "--summarizer",
              f"command:{sys.executable} {script} crash")
    assert out.exit_code == 1 and "exited with status 3" in out.output
    assert path.read_bytes() == before and not checkpoints(path)
    out = run("compact", str(path), "--force", "--summarizer",
              f"command:{sys.executable} {script}")
    assert out.exit_code == 1 and "not fewer than the" in out.output  # longer than two turns
    assert path.read_bytes() == before and not checkpoints(path)


def test_usage_errors_exit_2(tmp_path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, history(0, 3))
    assert run("compact", str(path)).exit_code == 2  # no summarizer
    assert run("compact", str(path), "--summarizer", "gemini:x").exit_code == 2
    assert run("compact", str(tmp_path / "missing.jsonl"), "--dry-run").exit_code == 2
    assert run("restore", str(path), "--before", "nope").exit_code == 1
    assert run("budget", str(path), "--window", "100", "--reserve", "100").exit_code == 2


def test_compact_restore_and_budget_name_a_bad_line_and_go_on(tmp_path) -> None:
    # a line that cannot be read is reported with its file and line, never silently skipped
    path = tmp_path / "s.jsonl"
    write_session(path, history(0, 6))
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(3, "{not json\n")
    path.write_text("".join(lines))
    for args in (("compact", str(path), "--dry-run", "--keep-turns", "2"),
                 ("budget", str(path), "--window", "64000")):
        out = run(*args)
        assert out.exit_code in (0, 1), out.output
        assert f"{path}:4" in out.stderr and "warning" in out.stderr, args
    script = write_summarizer(tmp_path)
    written = run("compact", str(path), "--summarizer", f"command:{sys.executable} {script}",
                  "--keep-turns", "2", "--keep-tokens", "1", "--json")
    assert written.exit_code == 0, written.output
    assert f"{path}:4" in written.stderr
    back = run("restore", str(path), "--before", json.loads(written.stdout)["id"])
    assert back.exit_code == 0 and f"{path}:4" in back.stderr


def test_budget_with_an_exact_tokenizer_needs_no_download(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    path = tmp_path / "s.jsonl"
    write_session(path, history(0, 4))
    out = run("budget", str(path), "--window", "100000", "--tokenizer", "gpt-4o", "--json")
    assert out.exit_code == 0, out.output
    exact = json.loads(out.output)["tokens"]
    estimate = json.loads(run("budget", str(path), "--window", "100000", "--json").output)
    assert exact > 0 and exact != estimate["tokens"]
    bad = run("budget", str(path), "--window", "100000", "--tokenizer", "no-such-encoding")
    assert bad.exit_code == 2 and "unknown OpenAI encoding" in bad.output
