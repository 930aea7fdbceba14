"""The `sessionctx` group, the one place a library error becomes a message and an exit code,
and the output helpers every command shares."""

from __future__ import annotations

import gc
import io
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, Generic, Literal, NoReturn, TypeVar, overload

import click
import msgspec

from sessionctx.errors import SessionctxError
from sessionctx.records import Problem


class Failure(click.ClickException):
    """What a command says when it gives up: 'sessionctx: MESSAGE' on stderr, then exit 2.

    Exit codes everywhere: 0 success, 1 a verdict against the input (repairs needed, nothing
    written: `Refused`), 2 the input could not be read or the usage was wrong, 141 the reader
    of the output went away (`| head`), as a shell reports a process SIGPIPE ended.
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

    def invoke(self, ctx: click.Context) -> object:
        _escape_unencodable()
        try:
            return super().invoke(ctx)
        except SessionctxError as exc:
            raise Failure(str(exc)) from None
        except MemoryError:
            raise Failure("out of memory: the input is too large for this machine; lower "
                          "--max-input to refuse it up front (docs/safety.md)") from None
        except BrokenPipeError:
            sys.exit(BROKEN_PIPE)


@click.group(cls=App, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sessionctx")
def main() -> None:
    """Turn a stored agent session into the context a model accepts, and explain every change."""


BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports when the reader of a pipe went away
PRETTY = "sessionctx.pretty"  # the click context's meta key `--pretty` sets


def emit_json(obj: object) -> None:
    """One JSON document on stdout: compact, one line (for jq and other programs), or indented
    with --pretty; UTF-8, and always valid JSON (a NaN or infinity is written as null, text
    that is not valid Unicode, such as a file name of non-UTF-8 bytes, with U+FFFD)."""
    ctx = click.get_current_context(silent=True)
    pretty = ctx is not None and ctx.find_root().meta.get(PRETTY)
    hold(obj)
    sys.stdout.flush()  # text echoed before goes first
    out = sys.stdout.buffer
    if pretty:
        out.write(msgspec.json.format(_encoded(obj), indent=2))
    else:
        for piece in json_pieces(obj):
            out.write(piece)
    out.write(b"\n")
    out.flush()


_BATCH = 256  # elements of a long list encoded at a time

T = TypeVar("T")


class JsonList(Sequence[Any], Generic[T]):
    """A list written as JSON one item at a time: `convert` makes an item's JSON value only
    when that item is written, so a log of a million changes is never a million dicts at
    once (`json_pieces` writes it a batch at a time, `_encoded` whole where it is nested)."""

    def __init__(self, items: Sequence[T], convert: Callable[[T], Any]) -> None:
        self.items = items
        self.convert = convert

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self.convert(item) for item in self.items[index]]
        return self.convert(self.items[index])


def json_pieces(obj: object, batch: int = _BATCH) -> Iterator[bytes]:
    """The compact JSON text of `obj`, in pieces that join to it. The lists of a top-level
    object (a context's messages, a request's turns) are encoded a batch of elements at a
    time, so the document is never held whole: a large session's output then costs no
    memory of its own."""
    if not isinstance(obj, dict) or not all(isinstance(k, str) for k in obj):
        yield _encoded(obj)
        return
    yield b"{"
    for n, (key, value) in enumerate(obj.items()):
        yield (b"," if n else b"") + _encoded(key) + b":"
        if not isinstance(value, list | JsonList) or len(value) <= batch:
            yield _encoded(value)
            continue
        yield b"["
        for start in range(0, len(value), batch):
            elements = _encoded(value[start:start + batch])[1:-1]  # the batch without [ ]
            yield (b"," if start else b"") + elements
        yield b"]"
    yield b"}"


def _encoded(value: object) -> bytes:
    try:
        return msgspec.json.encode(value, enc_hook=_as_list)
    except UnicodeEncodeError:
        return msgspec.json.encode(_valid_text(value), enc_hook=_as_list)


def _as_list(value: object) -> list[Any]:
    """A JsonList nested in what is written, made whole."""
    if isinstance(value, JsonList):
        return value[:]
    raise NotImplementedError(f"{type(value).__name__} is not JSON")


_held: list[object] | None = None  # what the program keeps to its end; None in a library


def hold(value: object) -> None:
    """Keep `value` (a session's records, its context) to the end of the program: `run` ends
    the process without freeing it object by object, which for a large session takes a tenth
    of the run. Called from a library or a test, it keeps nothing."""
    if _held is not None:
        _held.append(value)


def run() -> None:
    """The `sessionctx` program: one command, then exit. The heap it builds is dropped with the
    process, neither scanned by the cyclic collector, which would go over it again and again,
    nor freed piece by piece: once the output is flushed, the process ends."""
    global _held
    gc.disable()
    _held = []
    try:
        main()  # in click's standalone mode it always ends in SystemExit
    except SystemExit as exc:
        os._exit(_exit_status(exc.code))


def _exit_status(code: object) -> int:
    """What `sys.exit(code)` would exit with, once the output is out (a text is printed)."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    status = code or 0
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be written
            status = BROKEN_PIPE
    return status


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(value: object) -> object:
    """`value` with every lone surrogate in its text replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_valid_text(k): _valid_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple | JsonList):
        return [_valid_text(v) for v in value]
    return value


def _escape_unencodable() -> None:
    """Text that is not valid Unicode (a file name of non-UTF-8 bytes) is printed escaped,
    so the output stays valid UTF-8 and printing never fails."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def warn_problems(problems: list[Problem]) -> None:
    for problem in problems:
        click.echo(f"sessionctx: warning: {problem}", err=True)
