"""`sessionctx run`: a command started with its providers' base URLs pointed at a proxy.

Each base URL the command would use is replaced by the proxy's, and the URL it replaced
becomes the proxy's upstream for that provider (its API version segment, `/v1`, kept on the
proxy's side so the proxy sees the paths it reads), so the command still reaches what it
reached. A provider the environment already tied to another upstream is left as it was: the
proxy has one upstream per provider.

Where each agent's base URL is set (ENV_URLS, then AGENTS by the command's name):
  - the environment: Claude Code and the Anthropic SDK read `ANTHROPIC_BASE_URL`, OpenAI SDK
    programs `OPENAI_BASE_URL`, Gemini CLI `GOOGLE_GEMINI_BASE_URL` (all three always set);
    Goose's hosts (`OPENAI_HOST`, `ANTHROPIC_HOST`, `GOOGLE_HOST`) and Copilot CLI's
    `COPILOT_PROVIDER_BASE_URL` only where already set (setting Copilot's puts it in
    bring-your-own-key mode; Goose's are also set when the command is `goose`, with its
    `config.yaml` hosts as upstreams);
  - Codex: its model provider's `base_url`, with `-c` (and its WebSocket mode off: the proxy
    carries none);
  - opencode: `provider.<id>.options.baseURL` of each provider in `OPENCODE_CONFIG_CONTENT`,
    the settings layer it reads last (its @ai-sdk/anthropic would read `ANTHROPIC_BASE_URL`
    without the `/v1` Claude Code leaves out);
  - Cline: the `baseUrl` of the provider it uses, in a copy of its `providers.json` named by
    `CLINE_PROVIDER_SETTINGS_PATH`; what Cline changes in the copy is written back after.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sessionctx.proxy import agent_settings as settings

_VERSION = re.compile(r"/v1(?:beta|alpha)?$")
# variable, provider, the API version segment the proxy's URL gets when the variable is unset
# (None: set only where already set)
ENV_URLS: tuple[tuple[str, str, str | None], ...] = (
    ("ANTHROPIC_BASE_URL", "anthropic", ""), ("OPENAI_BASE_URL", "openai", "/v1"),
    ("GOOGLE_GEMINI_BASE_URL", "gemini", ""), ("OPENAI_HOST", "openai", None),
    ("ANTHROPIC_HOST", "anthropic", None), ("GOOGLE_HOST", "gemini", None))
GOOSE_HOSTS = ("OPENAI_HOST", "ANTHROPIC_HOST", "GOOGLE_HOST")


@dataclass(slots=True)
class Copy:
    """A settings file the command reads from a copy (its path in `var`): `text` with the
    proxy's URL; `restore` maps the proxy's URLs back to what they replaced."""

    var: str
    source: Path
    text: str
    restore: dict[str, str]

    def written_back(self, text: str) -> str:
        """`text` (the copy after the run) with the replaced URLs back in their place."""
        return re.sub("|".join(re.escape(json.dumps(k)) for k in self.restore),
                      lambda m: json.dumps(self.restore[json.loads(m.group(0))]), text)


@dataclass(slots=True)
class Plan:
    """The command to start, its environment, the upstreams its settings named, and the
    settings files it reads from a copy."""

    argv: list[str]
    env: dict[str, str]
    upstreams: list[str] = field(default_factory=list)
    copies: list[Copy] = field(default_factory=list)


class _Pointer:
    """The proxy's URLs, and the upstream each provider is tied to."""

    def __init__(self, port: int) -> None:
        self.here = f"http://127.0.0.1:{port}"
        self.claimed: dict[str, str] = {}

    def point(self, provider: str, url: str) -> str | None:
        """The proxy's URL to use instead of `url` (a base URL of `provider`), which becomes
        its upstream; None when the provider is tied to another upstream already."""
        url = url.rstrip("/")
        version = _VERSION.search(url)
        base = url[:version.start()] if version else url
        if self.claimed.setdefault(provider, base) != base:
            return None
        return self.here + (version.group(0) if version else "")


def plan(argv: list[str], env: dict[str, str], port: int, cwd: Path | None = None) -> Plan:
    out = Plan(list(argv), dict(env))
    to = _Pointer(port)
    name = Path(argv[0]).name if argv else ""
    goose = _goose_hosts(env) if name == "goose" else {}
    for var, provider, unset in ENV_URLS:
        given = env.get(var) or goose.get(var)
        if given:
            pointed = to.point(provider, given)
            if pointed is not None:
                out.env[var] = pointed
        elif unset is not None or var in goose:
            out.env[var] = to.here + (unset or "")
    copilot = env.get("COPILOT_PROVIDER_BASE_URL")
    if copilot:
        kind = "anthropic" if env.get("COPILOT_PROVIDER_TYPE") == "anthropic" else "openai"
        out.env["COPILOT_PROVIDER_BASE_URL"] = to.point(kind, copilot) or copilot
    if name in AGENTS:
        AGENTS[name](out, to, env, cwd or Path.cwd())
    out.upstreams = [f"{k}={v}" for k, v in to.claimed.items()]
    return out


def _goose_hosts(env: dict[str, str]) -> dict[str, str]:
    """Goose's hosts, from its config.yaml where the environment sets none ("" if neither)."""
    configured = settings.goose_config(env)
    return {var: configured.get(var, "") for var in GOOSE_HOSTS}


def _codex(out: Plan, to: _Pointer, env: dict[str, str], _cwd: Path) -> None:
    provider, base = settings.codex_provider(env)
    pointed = to.point("openai", base) if base else to.here + "/v1"
    if pointed is None:
        return
    if provider is None:
        out.argv[1:1] = ["-c", f'openai_base_url="{pointed}"']
    else:
        key = f"model_providers.{provider}"
        out.argv[1:1] = ["-c", f'{key}.base_url="{pointed}"',
                         "-c", f"{key}.supports_websockets=false"]


def _opencode(out: Plan, to: _Pointer, env: dict[str, str], cwd: Path) -> None:
    given = env.get("OPENCODE_CONFIG_CONTENT")
    try:
        content: Any = settings.jsonc(given) if given else {}
    except ValueError:
        return
    if not isinstance(content, dict):
        return
    ours: dict[str, Any] = {}
    for pid, (api, url) in settings.opencode_providers(env, cwd).items():
        # one whose API is tied elsewhere keeps its URL, named here: @ai-sdk/openai and
        # @ai-sdk/anthropic would otherwise read the proxy's from the environment
        ours[pid] = {"options": {"baseURL": to.point(api, url) or url}}
    if ours:
        providers = content.setdefault("provider", {})
        for pid, entry in ours.items():
            providers.setdefault(pid, {}).setdefault("options", {}).update(entry["options"])
        out.env["OPENCODE_CONFIG_CONTENT"] = json.dumps(content)


def _cline(out: Plan, to: _Pointer, env: dict[str, str], _cwd: Path) -> None:
    path = settings.cline_settings_path(out.argv, env)
    try:
        text = path.read_text(encoding="utf-8")
        stored = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return
    found = settings.cline_provider(out.argv, stored)
    pointed = to.point(found[1], found[2]) if found else None
    if found is None or pointed is None:
        return
    stored["providers"][found[0]]["settings"]["baseUrl"] = pointed
    out.copies.append(Copy("CLINE_PROVIDER_SETTINGS_PATH", path,
                           json.dumps(stored, indent=2) + "\n", {pointed: found[2]}))


AGENTS: dict[str, Callable[[Plan, _Pointer, dict[str, str], Path], None]] = {
    "codex": _codex, "opencode": _opencode, "cline": _cline}
