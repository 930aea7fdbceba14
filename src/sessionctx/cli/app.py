"""The `sessionctx` group, the one place a library error becomes a message and an exit code,
and the output helpers every command shares."""

from __future__ import annotations

import json
from typing import IO, Any, Literal, NoReturn

import click

from sessionctx.errors import SessionctxError
from sessionctx.records import Problem


class Failure(click.ClickException):
    """What a command says when it gives up: 'sessionctx: MESSAGE' on stderr, then exit 2.

    Exit codes everywhere: 0 success, 1 a verdict against the input (repairs needed, nothing
    written: `Refused`), 2 the input could not be read or the usage was wrong.
    """

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        for line in self.message.splitlines() or [""]:
            click.echo(f"sessionctx: {line}", err=True)


class Refused(Failure):
    """The input was read but the command did not do what was asked (nothing written)."""

    exit_code = 1


def fail(message: str, code: Literal[1, 2] = 2) -> NoReturn:
    raise (Refused if code == 1 else Failure)(message)


class App(click.Group):
    """The command group; any error of the library a command lets through exits 2 with its
    message, never with a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SessionctxError as exc:
            raise Failure(str(exc)) from None


@click.group(cls=App, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sessionctx")
def main() -> None:
    """Turn a stored agent session into the context a model accepts, and explain every change."""


def emit_json(obj: object) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2))


def warn_problems(problems: list[Problem]) -> None:
    for problem in problems:
        click.echo(f"sessionctx: warning: {problem}", err=True)
