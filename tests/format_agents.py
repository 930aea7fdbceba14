"""Gemini CLI, opencode, GitHub Copilot CLI, Cline's CLI and Goose, run offline against the
strict stub.

`tests/clis_formats/package.json` and its lock pin the five CLIs exactly (opencode, Cline and
Goose as their linux-x64 binary packages); the first use
installs them by `npm ci` into a cache folder keyed by the lock's hash (tests/node_readers.py
`installed`, about 900 MB). They run as tests/agent_clis.py runs Claude Code and Codex: in a
network namespace holding only loopback, `HOME` in a temporary folder, the stub inside the
same namespace on 127.0.0.1.

How each is pointed at the stub, with no account and nothing fetched:
  - Gemini CLI: `GEMINI_API_KEY` with `security.auth.selectedType: gemini-api-key` in
    `~/.gemini/settings.json`, `GOOGLE_GEMINI_BASE_URL`, a trusted workspace
    (`GEMINI_CLI_TRUST_WORKSPACE`); `-m` names the model, which turns off its model router (a
    side request to a small model before each turn). Chats go to
    `~/.gemini/tmp/<project>/chats/session-*.jsonl`.
  - opencode: a provider `stub` (`@ai-sdk/openai-compatible`, bundled) with its `baseURL` in
    the workspace's `opencode.json`, `OPENCODE_DISABLE_MODELS_FETCH`. Its store is
    `~/.local/share/opencode/opencode.db`. It also asks the model for a session title, a
    request with no tools.
  - Copilot CLI: its own bring-your-own-key settings (`COPILOT_PROVIDER_BASE_URL`,
    `COPILOT_PROVIDER_TYPE=openai`, `COPILOT_PROVIDER_API_KEY`, `COPILOT_MODEL`) and
    `COPILOT_OFFLINE`. Events go to `~/.copilot/session-state/<id>/events.jsonl`.
  - Cline: `cline auth` with the `openai-compatible` provider and the stub's base URL (only
    that provider takes one), `CLINE_SESSION_BACKEND_MODE=local` (else each run leaves a hub
    daemon behind). Sessions go to `~/.cline/data/sessions/<id>/<id>.messages.json`.
  - Goose: its `openai` provider (`GOOSE_PROVIDER`, `GOOSE_MODEL`, `OPENAI_HOST` naming the
    stub, `OPENAI_API_KEY`; `ANTHROPIC_HOST` for a session moved to Anthropic),
    `GOOSE_DISABLE_KEYRING` (no secret store here) and `GOOSE_MODE=auto` (no confirmation
    asked). Its store is `~/.local/share/goose/sessions/sessions.db`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent_clis import PORT, Agents, Run, require
from tests.node_readers import cache_folder, installed

CLI_DIR = Path(__file__).resolve().parent / "clis_formats"
GEMINI_VERSION = "0.61.0"
OPENCODE_VERSION = "1.18.33"
COPILOT_VERSION = "1.0.102"
CLINE_VERSION = "3.0.65"
GOOSE_VERSION = "1.52.0"
STUB = f"http://127.0.0.1:{PORT}"

GEMINI_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}
OPENCODE_CONFIG = {
    "$schema": "https://opencode.ai/config.json",
    "provider": {"stub": {"npm": "@ai-sdk/openai-compatible", "name": "Stub",
                          "options": {"baseURL": f"{STUB}/v1", "apiKey": "sk-stub"},
                          "models": {"stub-model": {"name": "Stub model", "tool_call": True}}}},
    "model": "stub/stub-model", "autoupdate": False, "share": "disabled"}


def install() -> Path:
    """The installed node_modules folder (platform binaries are optional packages to npm;
    no install script runs: each CLI is started from its platform package)."""
    require()
    return installed(CLI_DIR, "format-clis", ("--ignore-scripts",), 1800)


def is_installed() -> bool:
    """Whether the pinned CLIs are already in the cache (nothing is installed to find out)."""
    return (cache_folder(CLI_DIR, "format-clis") / "node_modules" /
            ".sessionctx-installed").exists()


class FormatAgents(Agents):
    """An isolated home for the five CLIs under `root`, and their runs against the stub."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, install())
        settings = self.home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps(GEMINI_SETTINGS))
        (self.cwd / "opencode.json").write_text(json.dumps(OPENCODE_CONFIG))

    def env(self) -> dict[str, str]:
        return {**super().env(),
                "GEMINI_API_KEY": "stub-key", "GOOGLE_GEMINI_BASE_URL": STUB,
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
                "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
                "COPILOT_PROVIDER_BASE_URL": f"{STUB}/v1", "COPILOT_PROVIDER_TYPE": "openai",
                "COPILOT_PROVIDER_API_KEY": "sk-stub", "COPILOT_MODEL": "gpt-5",
                "CLINE_SESSION_BACKEND_MODE": "local", "CLINE_NO_AUTO_UPDATE": "1",
                "GOOSE_PROVIDER": "openai", "GOOSE_MODEL": "gpt-4o", "OPENAI_HOST": STUB,
                "ANTHROPIC_HOST": STUB, "OPENAI_API_KEY": "sk-stub",
                "GOOSE_DISABLE_KEYRING": "1", "GOOSE_MODE": "auto",
                "GOOSE_TELEMETRY_ENABLED": "false"}

    # -- Gemini CLI ----------------------------------------------------------------------------

    def gemini(self, *args: str, **kw: Any) -> Run:
        return self.run([str(self.modules / ".bin" / "gemini"), "-m", "gemini-2.5-flash",
                         "--yolo", "-o", "json", *args], **kw)

    def gemini_chats(self) -> list[Path]:
        return sorted((self.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))

    # -- opencode ------------------------------------------------------------------------------

    def opencode(self, *args: str, **kw: Any) -> Run:
        binary = self.modules / "opencode-linux-x64" / "bin" / "opencode"
        return self.run([str(binary), *args], **kw)

    def opencode_db(self) -> Path:
        return self.home / ".local" / "share" / "opencode" / "opencode.db"

    # -- Copilot CLI ---------------------------------------------------------------------------

    def copilot(self, *args: str, **kw: Any) -> Run:
        binary = self.modules / "@github" / "copilot-linux-x64" / "copilot"
        return self.run([str(binary), "--allow-all-tools", *args], **kw)

    def copilot_events(self) -> list[Path]:
        return sorted((self.home / ".copilot" / "session-state").glob("*/events.jsonl"))

    # -- Cline ---------------------------------------------------------------------------------

    def cline(self, *args: str, **kw: Any) -> Run:
        binary = self.modules / "@cline" / "cli-linux-x64" / "bin" / "cline"
        if not (self.home / ".cline").exists():
            auth = self.run([str(binary), "auth", "-p", "openai-compatible", "-k", "sk-stub",
                             "-m", "stub-model", "-b", f"{STUB}/v1"])
            assert auth.returncode == 0, auth.stderr
        return self.run([str(binary), *args], **kw)

    def cline_sessions(self) -> list[Path]:
        return sorted((self.home / ".cline" / "data" / "sessions").glob("*/*.messages.json"))

    # -- Goose ---------------------------------------------------------------------------------

    def goose(self, *args: str, **kw: Any) -> Run:
        binary = self.modules / "@aaif" / "goose-binary-linux-x64" / "bin" / "goose"
        return self.run([str(binary), *args], **kw)

    def goose_db(self) -> Path:
        return self.home / ".local" / "share" / "goose" / "sessions" / "sessions.db"


if __name__ == "__main__":
    print(install())
