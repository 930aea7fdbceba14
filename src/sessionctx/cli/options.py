"""The options commands share, each group handed to the command as one value: `source`
(a SessionSource), `options` (BuildOptions), `request` (a RequestSpec or None)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
import msgspec

from sessionctx.cli.app import PRETTY
from sessionctx.cli.loader import SessionSource
from sessionctx.context import BuildOptions
from sessionctx.inputs import FORMATS

if TYPE_CHECKING:
    from sessionctx.providers import BuildRequestOptions
    from sessionctx.providers.tools import Tool

Command = Callable[..., None]


class _Text(click.ParamType):  # type: ignore[type-arg]
    """Text that must be valid Unicode: an argument holding bytes that are not UTF-8 (which
    Python passes on as lone surrogates) is refused here, before it reaches a store, a request
    body or the output."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> object:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                self.fail(f"{value!r} is not valid UTF-8 text", param, ctx)
        return value


class _FiniteFloat(click.FloatRange):
    """A float range that refuses NaN and infinities, which compare as inside any range."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        number: float = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


TEXT = _Text()


def finite_float(low: float | None = None, high: float | None = None, *,
                 min_open: bool = False) -> click.FloatRange:
    return _FiniteFloat(low, high, min_open=min_open)
Decorator = Callable[[Command], Command]


def _gather(name: str, make: Callable[..., object], keys: tuple[str, ...],
            options: list[Decorator]) -> Decorator:
    """Declare `options` and hand the command the values of `keys` as one argument `name`."""

    def decorate(f: Command) -> Command:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> None:
            kwargs[name] = make(**{k: kwargs.pop(k) for k in keys if k in kwargs})
            f(*args, **kwargs)

        declared: Command = command
        for option in options:
            declared = option(declared)
        return declared

    return decorate


# Options more than one command takes, each declared once.
from_option = click.option(
    "--from", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
    help="The format of PATH: auto detects it; native is sessionctx's own records; the "
         "others are agents' histories.")
store_option = click.option(
    "--store", "store_url", metavar="URL", type=TEXT,
    help="Store URL (sqlite:///file.db, jsonl:///dir, postgresql://...); default "
         "$SESSIONCTX_STORE or the user's sessions.db.")
note_unpaired_option = click.option(
    "--note-unpaired", is_flag=True,
    help="After a message that lost an unanswered call, tell the model in a user message that "
         "the call was interrupted and its outcome is unknown.")


def _max_input(_ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    from sessionctx.errors import BadArgument
    from sessionctx.limits import parse_size, set_max_input

    try:
        set_max_input(None if value is None else parse_size(value))
    except BadArgument as exc:
        raise click.BadParameter(str(exc), param=param) from None


def source_options(*, appends: bool = False) -> Decorator:
    """PATH, or --store/--session; and unless the command appends to the session (which needs
    a native JSONL file), --from and --leaf."""
    options: list[Decorator] = []
    if not appends:
        options += [
            from_option,
            click.option("--leaf", metavar="ID", type=TEXT,
                         help="For tree-shaped sessions (pi): the entry whose branch to read "
                              "(default: the last entry).")]
    options += [
        click.option("--max-input", metavar="SIZE", expose_value=False, callback=_max_input,
                     help="Refuse an input larger than SIZE (e.g. 500M, 4G; default "
                          "$SESSIONCTX_MAX_INPUT or 1G)."),
        click.option("--session", "session", metavar="ID", type=TEXT,
                     help="Read session ID from the store instead of PATH."),
        store_option,
        click.argument("path", required=False)]
    return _gather("source", SessionSource, ("path", "store_url", "session", "fmt", "leaf"),
                   options)


def _build_options(browser_tool: tuple[str, ...], keep_screenshots: int,
                   note_unpaired: bool, drop_agent_results: bool) -> BuildOptions:
    tools = frozenset(browser_tool) if browser_tool else BuildOptions().browser_tools
    return BuildOptions(tools, keep_screenshots, note_unpaired, drop_agent_results)


build_options = _gather(
    "options", _build_options, ("browser_tool", "keep_screenshots", "note_unpaired",
                                "drop_agent_results"), [
        click.option("--drop-agent-results", is_flag=True,
                     help="Leave out tool results an agent wrote for itself (an interrupted "
                          "call's placeholder); their calls are pending either way."),
        note_unpaired_option,
        click.option("--keep-screenshots", type=click.IntRange(min=0), default=1,
                     show_default=True, metavar="N",
                     help="How many of the latest browser results with images keep them."),
        click.option("--browser-tool", multiple=True, metavar="NAME", type=TEXT,
                     help="A tool whose results are browser screenshots (repeatable; "
                          "default browser_use).")])
"""The options every command that builds a context shares."""


class RequestSpec(msgspec.Struct, frozen=True):
    """The provider request a command builds from the context: where it goes, and the
    library's own request options as they are."""

    provider: str
    model: str | None
    system: str | None
    build: BuildRequestOptions

    def options(self) -> BuildRequestOptions:
        return self.build

    @property
    def tools(self) -> tuple[Tool, ...] | None:  # from --tools FILE
        return self.build.tools

    @property
    def thinking(self) -> bool | None:  # --thinking on|off
        return self.build.thinking

    @property
    def prefill(self) -> str | None:
        return self.build.prefill


def _request_spec(provider: str | None, model: str | None, system_prompt: str | None,
                  thinking_as_text: bool, tools_file: str | None, tool_choice: str | None,
                  tools_as_text: bool, placeholder_tools: bool, thinking: str | None,
                  prefill: str | None) -> RequestSpec | None:
    if provider is None:
        if tools_file or tool_choice or tools_as_text or placeholder_tools or thinking or \
                prefill is not None:
            raise click.UsageError("--tools, --tool-choice, --tools-as-text, "
                                   "--placeholder-tools, --thinking and --prefill go with "
                                   "--provider")
        return None
    if tools_as_text and (tools_file or placeholder_tools or tool_choice):
        raise click.UsageError("--tools-as-text sends no tool blocks, so it takes no --tools, "
                               "--tool-choice or --placeholder-tools")
    from sessionctx.providers import BuildRequestOptions

    return RequestSpec(provider, model, system_prompt, BuildRequestOptions(
        thinking_as_text, _load_tools(tools_file) if tools_file else None, tool_choice,
        tools_as_text, placeholder_tools, None if thinking is None else thinking == "on",
        prefill))


def _load_tools(path: str) -> tuple[Tool, ...]:
    """The definitions in FILE; entries that are not function tools are warned about."""
    from sessionctx.providers.tools import ToolsError, load_tools

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolsError(f"cannot read tool definitions from {path}: {exc}") from None
    read, problems = load_tools(text, path)
    for problem in problems:
        click.echo(f"sessionctx: warning: {problem}", err=True)
    return tuple(read)


def _provider_names() -> tuple[str, ...]:
    from sessionctx.providers.registry import PROVIDERS

    return PROVIDERS


provider_options = _gather(
    "request", _request_spec, ("provider", "model", "system_prompt", "thinking_as_text",
                               "tools_file", "tool_choice", "tools_as_text",
                               "placeholder_tools", "thinking", "prefill"), [
        click.option("--prefill", metavar="TEXT",
                     help="With --provider anthropic or bedrock: end the request with this "
                          "assistant text for the answer to continue (models that take one)."),
        click.option("--thinking", type=click.Choice(["on", "off"]),
                     help="With --provider anthropic or bedrock: whether the request enables "
                          "thinking; the body follows the rules of that setting."),
        click.option("--placeholder-tools", is_flag=True,
                     help="With --provider: define each tool the history calls and no "
                          "definition names, with an empty argument schema (logged)."),
        click.option("--tools-as-text", is_flag=True,
                     help="With --provider: send every tool call and result as plain text, "
                          "for a request that defines no tools."),
        click.option("--tool-choice", metavar="CHOICE",
                     help="With --tools: auto, any (or required), none, or a tool's name."),
        click.option("--tools", "tools_file", metavar="FILE",
                     help="With --provider: tool definitions (OpenAI, Anthropic or MCP "
                          "tools/list JSON) sent in the provider's shape."),
        click.option("--thinking-as-text", is_flag=True,
                     help="With --provider: reasoning that cannot be replayed to the target "
                          "model is sent as plain text instead of being removed."),
        click.option("--system", "system_prompt", metavar="TEXT", type=TEXT,
                     help="With --provider: the system prompt of the request."),
        click.option("--model", metavar="M", type=TEXT,
                     help="With --provider: the target model, which picks the capability row "
                          "(default: the provider's current default model)."),
        click.option("--provider", type=click.Choice(_provider_names()),
                     help="Build the request body for this provider API.")])
"""--provider and what goes with it: the request body for one provider's API."""

def _pretty(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.find_root().meta[PRETTY] = True


_BODY_AS_JSON = frozenset({"build"})  # commands whose --provider output is a JSON body


def json_option(f: Command) -> Command:
    """--json, and --pretty to indent the JSON (compact, one line, by default); --pretty
    where no JSON is printed is a usage error, not silently nothing."""

    @functools.wraps(f)
    def command(*args: Any, **kwargs: Any) -> None:
        ctx = click.get_current_context()
        body = ctx.command.name in _BODY_AS_JSON and (
            kwargs.get("provider") is not None or kwargs.get("request") is not None)
        if not (kwargs["as_json"] or body) and ctx.find_root().meta.get(PRETTY):
            raise click.UsageError("--pretty indents JSON output; add --json")
        f(*args, **kwargs)

    declared: Command = click.option("--pretty", is_flag=True, expose_value=False,
                                     callback=_pretty,
                                     help="Indent the JSON output (it is compact by "
                                          "default).")(command)
    return click.option("--json", "as_json", is_flag=True,
                        help="Print JSON instead of text.")(declared)

tokenizer_option = click.option(
    "--tokenizer", type=TEXT, default="estimate", show_default=True, metavar="NAME",
    help="'estimate' (characters/4, images 1024) or an OpenAI model or encoding name for an "
         "exact count, available only when its tiktoken encoding is already cached.")
