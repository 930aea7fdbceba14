"""Bounded input: a size limit for files and stdin, devices and FIFOs refused up front, NUL
bytes near the start of a native or pi file read line by line and each NUL line named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessionctx import limits
from sessionctx.cli import main
from sessionctx.errors import BadArgument
from sessionctx.inputs import read_input
from sessionctx.records import NUL_LINE, read_path

LINE = b'{"role":"user","content":"hi"}\n'


def test_sizes_parse_in_powers_of_1024() -> None:
    assert limits.parse_size("1048576") == 1 << 20
    assert limits.parse_size("500M") == 500 << 20
    assert limits.parse_size("2g") == 2 << 30
    assert limits.parse_size("64KiB") == 64 << 10
    with pytest.raises(BadArgument):
        limits.parse_size("lots")


def test_the_limit_comes_from_the_option_then_the_environment_then_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(LINE * 100)
    assert limits.max_input() == limits.DEFAULT_MAX_INPUT
    monkeypatch.setenv(limits.MAX_INPUT_ENV, "1K")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert "is 3,100 bytes, over the 1,024 bytes input limit" in result.output
    result = CliRunner().invoke(main, ["check", str(path), "--max-input", "1M"])
    assert result.exit_code == 0, result.output
    limits.set_max_input(None)
    result = CliRunner().invoke(main, ["check", "-", "--max-input", "100"], input=LINE * 10)
    assert result.exit_code == 2 and "holds more than the 100 bytes input limit" in \
        result.output
    limits.set_max_input(None)


def test_a_file_growing_past_the_limit_while_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(LINE * 10)
    assert limits.read_file(str(path), limit=len(LINE) * 10)[0] == LINE * 10
    with pytest.raises(limits.Unreadable, match="over the"):
        limits.read_file(str(path), limit=len(LINE) * 10 - 1)


def test_devices_fifos_and_folders_are_named(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "a character device"), (str(fifo), "a FIFO"),
                       (str(tmp_path), "a directory")):
        result = read_input(path)
        assert result.fatal and kind in str(result.problems[0]), result.problems
        assert kind in str(read_path(path).problems[0])


@pytest.mark.parametrize("head", [
    b'{"type":"session","version":3,"id":"s","cwd":"/"}\n',  # pi
    b"",  # native
])
def test_nul_bytes_near_the_start_are_reported_by_line(tmp_path: Path, head: bytes) -> None:
    entry = (b'{"type":"message","id":"a","parentId":null,"message":{"role":"user",'
             b'"content":"hi"}}\n') if head else LINE
    path = tmp_path / "s.jsonl"
    path.write_bytes(head + entry + b"\x00" * 64 + b"\n" + entry.replace(b'"a"', b'"b"')
                     .replace(b"null", b'"a"') + b"\x00" * 100)
    result = read_input(str(path))
    assert not result.fatal, result.problems
    assert len([r for r in result.records if r.kind == "message"]) == 2
    lines = [p.line for p in result.problems if p.message == NUL_LINE]
    first = 2 if head else 1
    assert lines == [first + 1, first + 3]
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\x7fELF\x00\x00" * 100)
    assert "is a binary file" in str(read_input(str(binary)).problems)


def test_running_out_of_memory_is_a_clear_error(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import sessionctx.cli.loader as loader

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    path = tmp_path / "s.jsonl"
    path.write_bytes(LINE)
    monkeypatch.setattr(loader, "read_session", exhausted)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2 and "out of memory" in result.output, result.output
    assert not isinstance(result.exception, MemoryError)
