"""What an agent's own settings name as its providers' base URLs, read without the agent:
Codex's `config.toml`, Goose's `config.yaml`, opencode's `opencode.json` layers and Cline's
`providers.json`. `sessionctx.proxy.child` points what these name at the proxy."""

from __future__ import annotations

import contextlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any

# opencode: a provider's package (or, for a built-in, its id) -> the API it speaks
OPENCODE_APIS = {"@ai-sdk/anthropic": "anthropic", "@ai-sdk/openai": "openai",
                 "@ai-sdk/openai-compatible": "openai", "@ai-sdk/google": "gemini",
                 "anthropic": "anthropic", "openai": "openai", "google": "gemini"}
# Cline: the providers that keep a base URL of an API the proxy reads
CLINE_APIS = {"openai-compatible": "openai", "openai": "openai", "openai-native": "openai",
              "anthropic": "anthropic", "gemini": "gemini"}
_JSONC = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*[\s\S]*?\*/|,(?=\s*[}\]])')


def home(env: dict[str, str]) -> Path:
    return Path(env.get("HOME", "~")).expanduser()


def config_home(env: dict[str, str]) -> Path:
    """The folder of per-user settings (`XDG_CONFIG_HOME`), where Goose and opencode keep
    theirs."""
    return Path(env.get("XDG_CONFIG_HOME") or home(env) / ".config")


def codex_provider(env: dict[str, str]) -> tuple[str | None, str | None]:
    """Codex's configured model provider (None: the built-in OpenAI one) and its base URL."""
    folder = Path(env.get("CODEX_HOME") or home(env) / ".codex")
    try:
        config = tomllib.loads((folder / "config.toml").read_text(encoding="utf-8"))
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


def goose_config(env: dict[str, str]) -> dict[str, str]:
    """The top-level `KEY: value` settings of Goose's config.yaml (its hosts are plain
    scalars there), without a YAML parser."""
    try:
        text = (config_home(env) / "goose" / "config.yaml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found = re.findall(r"(?m)^([A-Z_]+):[ \t]*(.+?)[ \t]*$", text)
    return {key: value.strip("'\"") for key, value in found}


def jsonc(text: str) -> Any:
    """JSON with comments and trailing commas, as opencode reads its settings."""
    return json.loads(_JSONC.sub(lambda m: m.group(1) or "", text))


def opencode_providers(env: dict[str, str], cwd: Path) -> dict[str, tuple[str, str]]:
    """Each opencode provider whose API the proxy reads: id -> (API, base URL), from its
    settings layers as opencode merges them (global, `OPENCODE_CONFIG`, the project's files
    from its root down, `.opencode` folders, `OPENCODE_CONFIG_CONTENT`), then the built-in
    providers the settings do not name, with the URL each reads by default. A provider whose
    URL is not written out (`{env:...}`) is not among them."""
    merged: dict[str, dict[str, Any]] = {}
    for layer in _opencode_layers(env, cwd):
        providers = layer.get("provider") if isinstance(layer, dict) else None
        for pid, given in (providers or {}).items() if isinstance(providers, dict) else ():
            if isinstance(given, dict):
                known = merged.setdefault(pid, {})
                options = given.get("options")
                known.update({k: v for k, v in given.items() if k != "options"})
                if isinstance(options, dict):
                    known.setdefault("options", {}).update(options)
    defaults = _opencode_defaults(env)
    named: dict[str, tuple[str, str]] = {}
    for pid, given in merged.items():
        api = OPENCODE_APIS.get(str(given.get("npm") or pid))
        url = given.get("options", {}).get("baseURL", defaults.get(api or ""))
        if api and isinstance(url, str) and url.startswith(("http://", "https://")):
            named[pid] = (api, url)
    builtins = {pid: (api, defaults[api]) for pid, api in OPENCODE_APIS.items()
                if "/" not in pid and pid not in merged}
    named = dict(sorted(named.items(), key=lambda item: item[1][1] == defaults[item[1][0]]))
    return {**named, **builtins}  # the URLs the settings name first: they claim upstreams


def _opencode_defaults(env: dict[str, str]) -> dict[str, str]:
    """The base URL of each API when a provider names none: what its @ai-sdk package reads
    from the environment (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`), else the public host."""
    anthropic = env.get("ANTHROPIC_BASE_URL", "").rstrip("/") or "https://api.anthropic.com"
    if anthropic == "https://api.anthropic.com":
        anthropic += "/v1"
    return {"anthropic": anthropic,
            "openai": env.get("OPENAI_BASE_URL") or "https://api.openai.com/v1",
            "gemini": "https://generativelanguage.googleapis.com/v1beta"}


def _opencode_layers(env: dict[str, str], cwd: Path) -> list[Any]:
    config = config_home(env) / "opencode"
    files = [config / name for name in ("config.json", "opencode.json", "opencode.jsonc")]
    if env.get("OPENCODE_CONFIG"):
        files.append(Path(env["OPENCODE_CONFIG"]))
    ups = [cwd, *cwd.parents]
    top = next((i for i, d in enumerate(ups) if (d / ".git").exists()), len(ups) - 1)
    for folder in reversed(ups[:top + 1]):
        files += [folder / "opencode.jsonc", folder / "opencode.json"]
    for folder in [*reversed([d / ".opencode" for d in ups[:top + 1]]), home(env) / ".opencode",
                   *([Path(env["OPENCODE_CONFIG_DIR"])] if env.get("OPENCODE_CONFIG_DIR")
                     else [])]:
        files += [folder / "opencode.jsonc", folder / "opencode.json"]
    layers = []
    for path in files:
        try:
            layers.append(jsonc(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
    if env.get("OPENCODE_CONFIG_CONTENT"):
        with contextlib.suppress(ValueError):
            layers.append(jsonc(env["OPENCODE_CONFIG_CONTENT"]))
    return layers


def cline_settings_path(argv: list[str], env: dict[str, str]) -> Path:
    """Where Cline keeps its provider settings (`--config` names its folder)."""
    if env.get("CLINE_PROVIDER_SETTINGS_PATH", "").strip():
        return Path(env["CLINE_PROVIDER_SETTINGS_PATH"].strip())
    folder = _flag(argv, "--config") or env.get("CLINE_DIR", "").strip() or str(
        home(env) / ".cline")
    data = env.get("CLINE_DATA_DIR", "").strip() or str(Path(folder) / "data")
    return Path(data) / "settings" / "providers.json"


def cline_provider(argv: list[str], settings: Any) -> tuple[str, str, str] | None:
    """The provider this Cline run uses (`-P`, else the last one used): id, API, base URL;
    None when it keeps no base URL of an API the proxy reads."""
    if not isinstance(settings, dict) or not isinstance(settings.get("providers"), dict):
        return None
    pid = _flag(argv, "-P") or _flag(argv, "--provider") or settings.get("lastUsedProvider")
    entry = settings["providers"].get(pid) if isinstance(pid, str) else None
    values = entry.get("settings") if isinstance(entry, dict) else None
    url = values.get("baseUrl") if isinstance(values, dict) else None
    if not isinstance(pid, str) or pid not in CLINE_APIS or not isinstance(url, str) or \
            not url.startswith(("http://", "https://")):
        return None
    return pid, CLINE_APIS[pid], url


def _flag(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg[len(name) + 1:]
    return None
