"""A built context turned into the body of one request to a provider API, and the validator.

`build_request` runs the provider step (policies/) with the provider's capability row and maps
the result to the provider's wire format with the renderer the registry names; every change
goes into the same change log as the core build, in the one order of changes
(`changes.change_order`: by the record each concerns, changes about the request as a whole
first, and in the order the passes logged them among changes about the same record).
`validate` checks a body against the provider's rules and returns every violation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sessionctx.changes import Change, Source, in_order
from sessionctx.context import Context
from sessionctx.gcpause import paused_gc
from sessionctx.messages import Message
from sessionctx.providers import tools
from sessionctx.providers.as_text import tools_as_text
from sessionctx.providers.policies import Prepared, prepare, request_settings
from sessionctx.providers.registry import provider as registered
from sessionctx.providers.tools import CalledTool, Tool, ToolsError
from sessionctx.providers.violations import Violation

__all__ = ["BuildRequestOptions", "Request", "build_from_messages", "build_request",
           "naive_request", "validate"]


@dataclass(frozen=True, slots=True)
class BuildRequestOptions:
    thinking_as_text: bool = False  # reasoning that cannot be replayed becomes plain text
    # the request's tool definitions (tools.read_tools / load_tools), sent in the provider's
    # shape; None: the request defines none
    tools: tuple[Tool, ...] | None = None
    tool_choice: str | None = None  # auto, any, required, none or a defined tool's name
    tools_as_text: bool = False  # every call and result sent as plain text
    placeholder_tools: bool = False  # an empty-schema definition for each undefined tool called
    # Anthropic and Claude on Bedrock: whether the request enables thinking (None: unsaid), and
    # the text the answer is to continue from
    thinking: bool | None = None
    prefill: str | None = None


@dataclass(slots=True)
class Request:
    body: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    provider: str = ""
    model: str = ""
    # calls to tools the definitions do not name (only when definitions were given)
    undefined_calls: list[CalledTool] = field(default_factory=list)


def build_request(context: Context, provider: str, model: str | None = None,
                  system: str | None = None,
                  options: BuildRequestOptions | None = None) -> Request:
    """The body of one request to `provider`; `context.changes` is left as it is."""
    return build_from_messages(context.messages, context.sources, provider, model, system,
                               options)


def build_from_messages(messages: list[Message], sources: list[Source] | None, provider: str,
                        model: str | None = None, system: str | None = None,
                        options: BuildRequestOptions | None = None,
                        repair: bool = True) -> Request:
    target = registered(provider)
    cap, chosen = target.capability(model)
    opts = options or BuildRequestOptions()
    request_settings.check_settings(cap, chosen, opts.thinking, opts.prefill, opts.tool_choice)
    early: list[Change] = []
    if opts.tools_as_text and repair:
        messages, early = tools_as_text(messages, sources)
    with paused_gc():  # a body is a large acyclic tree, like the context it comes from
        prep = prepare(messages, sources, cap, chosen, system, repair, opts.thinking_as_text,
                       opts.tools_as_text)
        if repair:
            request_settings.apply(prep, cap, opts.thinking, opts.prefill)
        body = target.render(prep, cap)
        undefined = _tools(prep, body, provider, opts)
        if target.finish is not None and repair:
            target.finish(body, prep, cap)
        changes = in_order(early, prep.ordered_changes()) if early else prep.ordered_changes()
        del prep  # the turns go before the collector runs again, so it never scans them
    return Request(body, changes, provider, chosen, undefined)


def _tools(prep: Prepared, body: dict[str, Any], provider: str,
           opts: BuildRequestOptions) -> list[CalledTool]:
    """Adds the tool definitions to `body`; the calls to tools they do not name."""
    defined = list(opts.tools) if opts.tools is not None else []
    if opts.tools is None and not opts.placeholder_tools and opts.tool_choice is None:
        return []  # no definition to add, and no call to report
    calls = tools.called(prep.turns, prep.sources)
    if opts.placeholder_tools:
        added = tools.placeholders([c.name for c in calls], defined)
        for tool in added:
            prep.log(tools.PLACEHOLDER_ADDED, "the history calls a tool with no definition; "
                     "an empty-schema placeholder was defined, as asked", name=tool.name)
        defined += added
    for tool in defined:
        if tool.original is not None:
            prep.log(tools.DEFINITION_RENAMED, "tool names must match ^[a-zA-Z0-9_-]{1,64}$; "
                     "renamed as its calls are", old=tool.original, new=tool.name)
    if defined:
        body.update(tools.render(defined, provider, opts.tool_choice))
    elif opts.tool_choice is not None:
        raise ToolsError("a tool choice needs tool definitions")
    if opts.tools is None:
        return []
    names = {t.name for t in defined}
    return [c for c in calls if c.name not in names]


def naive_request(messages: list[Message], provider: str, model: str | None = None,
                  system: str | None = None,
                  options: BuildRequestOptions | None = None) -> Request:
    """The stored messages mapped one to one, without any repair: what a naive client sends
    (with the tool definitions of `options`, if any)."""
    return build_from_messages(messages, None, provider, model, system, options, repair=False)


def validate(body: dict[str, Any], provider: str, model: str | None = None, *,
             thinking: bool | None = None, prefill: bool = False,
             from_text: bool = False) -> list[Violation]:
    """Every rule of `provider` (and model) that `body` breaks, with its path in the body;
    `thinking` and `prefill` say how the request is sent (thinking on or off, and whether its
    last assistant message is a prefill), for the rules that depend on it. `from_text`: the
    body was decoded from JSON text, so it needs no check that it can be sent as JSON."""
    target = registered(provider)
    cap, _ = target.capability(model)
    out = [*([] if from_text else _not_json(body)), *target.validate(body, cap),
           *target.tool_violations(body)]
    if cap.thinking_rules and target.settings_violations is not None:
        out += target.settings_violations(body, cap, thinking, prefill)
    return out


def _not_json(body: dict[str, Any]) -> list[Violation]:
    """A body that cannot be sent as JSON text: NaN or Infinity, or text that is not Unicode."""
    try:
        json.dumps(body, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return [Violation("$", "the body holds text that is not valid Unicode (a lone "
                               "surrogate)")]
    except ValueError:
        return [Violation("$", "the body holds a number JSON cannot carry (NaN or Infinity)")]
    return []
