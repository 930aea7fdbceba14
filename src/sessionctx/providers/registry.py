"""The providers sessionctx renders for: each with its renderer, its validator and its rows of
the capability table, under the name the CLI and the library take."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sessionctx.errors import BadArgument
from sessionctx.providers import anthropic, bedrock, gemini, openai_chat, openai_responses
from sessionctx.providers.capabilities import Capability, capability
from sessionctx.providers.names import (
    ANTHROPIC,
    BEDROCK,
    GEMINI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
)
from sessionctx.providers.policies import Prepared
from sessionctx.providers.violations import Violation

Body = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    render: Callable[[Prepared, Capability], Body]
    validate: Callable[[Body, Capability], list[Violation]]

    def capability(self, model: str | None = None) -> tuple[Capability, str]:
        """The capability row for `model` (the default model when None), and the model used."""
        return capability(self.name, model)


REGISTRY: dict[str, Provider] = {p.name: p for p in (
    Provider(ANTHROPIC, anthropic.render, anthropic.validate),
    Provider(OPENAI_CHAT, openai_chat.render, openai_chat.validate),
    Provider(OPENAI_RESPONSES, openai_responses.render, openai_responses.validate),
    Provider(GEMINI, gemini.render, gemini.validate),
    Provider(BEDROCK, bedrock.render, bedrock.validate),
)}


def provider(name: str) -> Provider:
    """The provider called `name`; a ValueError naming the known ones otherwise."""
    found = REGISTRY.get(name)
    if found is None:
        raise BadArgument(f"unknown provider {name!r}; known: {', '.join(REGISTRY)}")
    return found
