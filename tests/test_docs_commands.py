"""Every `sessionctx` command in the README and the docs/ pages parses as written: its command
and options exist and take what is given (the README's quick start and the pages' examples also
run for real: test_readme_quickstart.py, test_readme.py, test_repair_readme.py, test_report.py);
every page the README links to exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from sessionctx.cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _commands() -> list[tuple[str, str]]:
    out = []
    for page in PAGES:
        for block in re.findall(r"```sh\n(.*?)```", page.read_text(), re.S):
            for line in block.splitlines():
                line = line.strip()
                if line.startswith("sessionctx "):
                    out.append((page.name, line))
    return out


def _argv(line: str) -> list[str]:
    line = re.split(r"\s#\s", line, maxsplit=1)[0].replace("|| true", "")
    return shlex.split(line)[1:]


def test_the_pages_hold_commands() -> None:
    pages = {name for name, _ in _commands()}
    assert {"README.md", "resume.md", "commands.md", "compaction.md"} <= pages


@pytest.mark.parametrize(("page", "line"), _commands())
def test_each_command_parses_as_written(page: str, line: str) -> None:
    argv = _argv(line)
    with main.make_context("sessionctx", list(argv)) as ctx:
        name = argv[0]
        command = main.get_command(ctx, name)
        assert command is not None, f"{page}: no command {name!r}"
        try:
            command.make_context(name, argv[1:], parent=ctx)
        except click.UsageError as exc:
            raise AssertionError(f"{page}: {line}: {exc.format_message()}") from None


def test_every_linked_page_exists() -> None:
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+\.(?:md|png))(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).is_file(), f"{page.name} links to {target}"


def test_the_readme_is_a_front_door() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
