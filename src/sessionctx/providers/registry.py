"""The providers sessionctx renders for: one line each, the name `--provider` takes and the
module that declares the provider (its `PROVIDER`). A module is imported when its provider is
first asked for, so a command can list the names without loading any of them."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from sessionctx.errors import BadArgument

if TYPE_CHECKING:
    from sessionctx.providers.provider import Provider

MODULES: dict[str, str] = {
    "anthropic": "sessionctx.providers.anthropic",
    "openai-chat": "sessionctx.providers.openai_chat",
    "openai-responses": "sessionctx.providers.openai_responses",
    "gemini": "sessionctx.providers.gemini",
    "bedrock": "sessionctx.providers.bedrock",
}
PROVIDERS = tuple(MODULES)


class UnknownProvider(BadArgument):
    """A provider name no registry line names."""


def provider(name: str) -> Provider:
    """The provider called `name`; UnknownProvider naming the known ones otherwise."""
    module = MODULES.get(name)
    if module is None:
        raise UnknownProvider(f"unknown provider {name!r}; known: {', '.join(MODULES)}")
    found: Provider = importlib.import_module(module).PROVIDER
    return found
