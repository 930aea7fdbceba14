"""What one provider API is to sessionctx, declared whole in that provider's own module.

A provider module (`providers/anthropic.py`, ...) ends with one `Provider(...)`: its capability
rows, its renderer and validator, the wire shape of its tool definitions and tool choice and
their check, and the hooks only some providers need (Anthropic's cache breakpoints, the
thinking and prefill rules of Claude models). `providers/registry.py` names the module once;
nothing else in sessionctx tests a provider's name. How to add one: docs/architecture.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sessionctx.errors import BadArgument
from sessionctx.providers.capabilities import Capability

if TYPE_CHECKING:
    from sessionctx.providers.policies.turns import Prepared
    from sessionctx.providers.tools import Tool
    from sessionctx.providers.violations import Violation

Body = dict[str, Any]
# The tool choice modes every provider is asked in (its own spelling is the provider's).
CHOICES = ("auto", "any", "required", "none")


# A model name's own prefix -> the maker whose models go by it. A provider serves by that name
# only its own maker's models (Bedrock names every model by its maker: anthropic.claude-...).
MAKERS = ((re.compile(r"^claude-"), "Anthropic"),
          (re.compile(r"^(?:gpt-|o[1-9]\b|o[1-9]-|chatgpt-)"), "OpenAI"),
          (re.compile(r"^gemini-"), "Google"))


def _never(body: Body) -> bool:
    return False


def _as_is(model: str) -> str:
    return model


@dataclass(frozen=True, slots=True)
class Provider:
    """One provider API: its name (as `--provider` takes it) and everything it owns."""

    name: str
    # the model used when none is given, so `--model` is optional
    default_model: str
    # its rows of the capability table: the first is the default, the others model families
    # where a limit differs (providers/capabilities.py documents each flag)
    rows: tuple[Capability, ...]
    # the wire shape of the prepared turns
    render: Callable[[Prepared, Capability], Body]
    # the provider's history rules, checked on a body independently of the renderer
    validate: Callable[[Body, Capability], list[Violation]]
    # the keys a body adds for tool definitions and a tool choice (already checked), its shape
    tools: Callable[[list[Tool], str | None], Body]
    # what is wrong with a body's tool definitions and tool choice
    tool_violations: Callable[[Body], list[Violation]]
    # the tool choice modes it takes (Bedrock has no "none")
    choices: tuple[str, ...] = CHOICES
    # a body whose history holds tool blocks but which defines no tools, which the provider
    # refuses (Anthropic, Bedrock)
    needs_definitions: Callable[[Body], bool] = _never
    # the last edit of a built body, after its tool definitions (Anthropic: cache breakpoints)
    finish: Callable[[Body, Prepared, Capability], None] | None = None
    # the rules of the request's thinking switch and prefill, on a body sent with them
    # (thinking, prefill); only rows with `thinking_rules` are checked
    settings_violations: Callable[[Body, Capability, bool | None, bool],
                                  list[Violation]] | None = None
    # the part of a model id the rows' families are matched on (Bedrock: without the region of
    # an inference profile)
    model_family: Callable[[str], str] = _as_is
    # the maker (of MAKERS) whose model names it serves as they are; a model of another maker
    # is refused, as its request would be built by the wrong rules
    maker: str | None = None

    def maker_of(self, model: str) -> str | None:
        """The maker whose model `model` names when that is not this API's maker, else None."""
        for pattern, maker in MAKERS:
            if pattern.match(model) and maker != self.maker:
                return maker
        return None

    def capability(self, model: str | None = None) -> tuple[Capability, str]:
        """The row for `model` (the default model when None): the longest family that is a
        prefix of it, else the default row; and the model used."""
        chosen = model or self.default_model
        if (maker := self.maker_of(chosen)) is not None:
            article = "an" if maker[0] in "AEIOU" else "a"
            raise BadArgument(f"{chosen!r} is {article} {maker} model, which {self.name} "
                              f"does not serve by that name (its default: "
                              f"{self.default_model})")
        family = self.model_family(chosen)
        best = self.rows[0]
        for row in self.rows[1:]:
            if family.startswith(row.family) and len(row.family) > len(best.family):
                best = row
        return best, chosen
