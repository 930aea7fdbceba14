"""`sessionctx run`: a command started with its providers' base URLs pointed at a proxy.

Claude Code and the Anthropic SDK read `ANTHROPIC_BASE_URL`, OpenAI SDK programs
`OPENAI_BASE_URL`, Gemini CLI `GOOGLE_GEMINI_BASE_URL`. Codex does not honour an environment
variable: its model provider's `base_url` is set with `-c` (and its WebSocket mode turned off,
as the proxy carries no WebSocket). Goose reads its providers' hosts (`OPENAI_HOST`,
`ANTHROPIC_HOST`, `GOOGLE_HOST`) from the environment before its `config.yaml`; they are set
when the command is `goose` or already names them. A base URL the environment or the agent's
config already set becomes the proxy's upstream for that provider, so the command still
reaches what it reached.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

GOOSE_HOSTS = (("OPENAI_HOST", "openai"), ("ANTHROPIC_HOST", "anthropic"),
               ("GOOGLE_HOST", "gemini"))


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
    goose = bool(argv) and Path(argv[0]).name == "goose"
    configured = _goose_config(env) if goose else {}
    for var, name in GOOSE_HOSTS:
        given = env.get(var) or configured.get(var)
        if goose or env.get(var):
            if given:
                out.upstreams.append(f"{name}={given.rstrip('/')}")
            out.env[var] = here
    return out


def _goose_config(env: dict[str, str]) -> dict[str, str]:
    """The top-level `KEY: value` settings of Goose's config.yaml (its hosts are plain
    scalars there), without a YAML parser."""
    root = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    try:
        text = (Path(root) / "goose" / "config.yaml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found = re.findall(r"(?m)^([A-Z_]+):[ \t]*(.+?)[ \t]*$", text)
    return {key: value.strip("'\"") for key, value in found}


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
