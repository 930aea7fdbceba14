"""Provider request bodies: a built context turned into what one API accepts, and a validator.

`build_request` runs the provider step (policies/) with the provider's capability row and maps
the result to the provider's wire format with the renderer the registry names; every change
goes into the same change log as the core build. `validate` checks a body against the
provider's rules and returns every violation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessionctx.changes import Change, Source
from sessionctx.context import Context
from sessionctx.gcpause import paused_gc
from sessionctx.messages import Message
from sessionctx.providers.capabilities import PROVIDERS
from sessionctx.providers.policies import prepare
from sessionctx.providers.registry import provider as registered
from sessionctx.providers.violations import Violation

__all__ = ["PROVIDERS", "BuildRequestOptions", "Request", "Violation", "build_from_messages",
           "build_request",
           "naive_request", "validate"]


@dataclass(frozen=True, slots=True)
class BuildRequestOptions:
    thinking_as_text: bool = False  # reasoning that cannot be replayed becomes plain text


@dataclass(slots=True)
class Request:
    body: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    provider: str = ""
    model: str = ""


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
    with paused_gc():  # a body is a large acyclic tree, like the context it comes from
        prep = prepare(messages, sources, cap, chosen, system, repair, opts.thinking_as_text)
        body = target.render(prep, cap)
        changes = prep.changes
        del prep  # the turns go before the collector runs again, so it never scans them
    return Request(body, changes, provider, chosen)


def naive_request(messages: list[Message], provider: str, model: str | None = None,
                  system: str | None = None) -> Request:
    """The stored messages mapped one to one, without any repair: what a naive client sends."""
    return build_from_messages(messages, None, provider, model, system, repair=False)


def validate(body: dict[str, Any], provider: str, model: str | None = None) -> list[Violation]:
    """Every rule of `provider` (and model) that `body` breaks, with its path in the body."""
    target = registered(provider)
    cap, _ = target.capability(model)
    return target.validate(body, cap)
