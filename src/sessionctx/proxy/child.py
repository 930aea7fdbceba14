"""`sessionctx run`: a command started with its providers' base URLs pointed at a proxy.

Claude Code and the Anthropic SDK read `ANTHROPIC_BASE_URL`, OpenAI SDK programs
`OPENAI_BASE_URL`, Gemini CLI `GOOGLE_GEMINI_BASE_URL`. Codex does not honour an environment
variable: its model provider's `base_url` is set with `-c` (and its WebSocket mode turned off,
as the proxy carries no WebSocket). A base URL the environment or Codex's config already set
becomes the proxy's upstream for that provider, so the command still reaches what it reached.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(slots=True)
class Plan:
    """The command to start, its environment, and the upstreams its settings named."""

    argv: list[str]
    env: dict[str, str]
    upstreams: list[str] = field(default_factory=list)


def plan(argv: list[str], env: dict[str, str], port: int) -> Plan:
    here = f"http://127.0.0.1:{port}"
    out = Plan(list(argv), dict(env))
    for var, name, suffix in (("ANTHROPIC_BASE_URL", "anthropic", ""),
                              ("OPENAI_BASE_URL", "openai", "/v1"),
                              ("GOOGLE_GEMINI_BASE_URL", "gemini", "")):
        given = env.get(var)
        if given:
            out.upstreams.append(f"{name}={_without(given.rstrip('/'), suffix)}")
        out.env[var] = here + suffix
    if argv and Path(argv[0]).name == "codex":
        provider, base = _codex_provider(env)
        if provider is None:
            out.argv[1:1] = ["-c", f'openai_base_url="{here}/v1"']
        else:
            key = f"model_providers.{provider}"
            out.argv[1:1] = ["-c", f'{key}.base_url="{here}/v1"',
                             "-c", f"{key}.supports_websockets=false"]
        if base:
            out.upstreams.append(f"openai={_without(base.rstrip('/'), '/v1')}")
    return out


def _without(url: str, suffix: str) -> str:
    return url[:-len(suffix)] if suffix and url.endswith(suffix) else url


def _codex_provider(env: dict[str, str]) -> tuple[str | None, str | None]:
    """Codex's configured model provider (None: the built-in OpenAI one) and its base URL."""
    home = Path(env.get("CODEX_HOME") or Path(env.get("HOME", "~")).expanduser() / ".codex")
    try:
        config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None, None
    name = config.get("model_provider")
    providers = config.get("model_providers")
    if isinstance(name, str) and isinstance(providers, dict) and isinstance(
            providers.get(name), dict):
        base = providers[name].get("base_url")
        return name, base if isinstance(base, str) else None
    base = config.get("openai_base_url")
    return None, base if isinstance(base, str) else None
