"""The store commands: import, sessions, export, and build/check from a store."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
from click.testing import CliRunner

from sessionctx.cli import main
from tests.conftest import FIXTURES


def test_import_list_export_build(tmp_path: Path) -> None:
    source = FIXTURES / "pi" / "large-session.jsonl"
    url = f"sqlite:///{tmp_path}/s.db"
    run = CliRunner().invoke
    got = run(main, ["import", str(source), "--session", "big", "--store", url])
    assert got.exit_code == 0 and "imported 1019 records" in got.output
    listed = json.loads(run(main, ["sessions", "--store", url, "--json"]).output)
    assert listed["sessions"][0]["id"] == "big"
    assert listed["sessions"][0]["records"] == 1019
    out = tmp_path / "o.jsonl"
    assert run(main, ["export", "big", "-o", str(out), "--store", url]).exit_code == 0
    assert [msgspec.json.decode(x) for x in out.read_bytes().splitlines()] == [
        msgspec.json.decode(x) for x in source.read_bytes().splitlines() if x.strip()]
    built = run(main, ["build", "--store", url, "--session", "big", "--json"])
    assert built.exit_code == 0
    changes = json.loads(built.output)["changes"]
    assert changes and all("seq" in c["record"] for c in changes if c["record"])
    assert run(main, ["check", "--store", url, "--session", "big"]).exit_code in (0, 1)


def test_errors_exit_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    run = CliRunner().invoke
    assert run(main, ["import", str(tmp_path / "none"), "--session", "x",
                      "--store", url]).exit_code == 2
    missing = run(main, ["build", "--store", url, "--session", "nope"])
    assert missing.exit_code == 2 and "no session" in missing.output
    (tmp_path / "junk.db").write_text("not a database " * 200)
    bad = run(main, ["sessions", "--store", f"sqlite:///{tmp_path}/junk.db"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert run(main, ["build"]).exit_code == 2
