"""Which API a request speaks, which upstream it goes to, and which of its headers pass.

The upstreams are an allow-list: a request only ever goes to the configured base URL of its
provider (the public hosts unless told otherwise), never to a host the request names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from sessionctx.errors import BadArgument
from sessionctx.providers.wire import ANTHROPIC, GEMINI, OPENAI_CHAT, OPENAI_RESPONSES

# the providers a request can go to, and their public base URLs
PUBLIC = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com",
          "gemini": "https://generativelanguage.googleapis.com"}
OAUTH_HOST = "api.anthropic.com"  # the one host a Claude subscription token is meant for
OAUTH_PREFIX = "sk-ant-oat"  # how a Claude subscription (OAuth) token starts
# hop-by-hop headers (RFC 9110 7.6.1), and the ones the proxy sets itself
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
                        "host", "content-length"})
# the headers an agent names its session with
SESSION_HEADERS = ("x-claude-code-session-id", "session-id", "x-session-id")
_GEMINI = re.compile(r"^/(?:v1beta|v1|v1alpha)/(?:models|tunedModels)/([^/:]+):"
                     r"(generateContent|streamGenerateContent)$")


@dataclass(frozen=True, slots=True)
class Route:
    """Where a request goes: its provider (a key of PUBLIC), and the API whose body the proxy
    reads (None: passed through as it is), with the model the path names (Gemini)."""

    provider: str
    api: str | None = None
    model: str | None = None


def route(method: str, path: str, headers: Mapping[str, str]) -> Route:
    """The route of a request by its path (and, for paths more than one provider serves, by
    the headers only one of them takes)."""
    if method == "POST":
        if path in ("/v1/messages", "/v1/messages/count_tokens"):
            return Route("anthropic", ANTHROPIC)
        if path == "/v1/chat/completions":
            return Route("openai", OPENAI_CHAT)
        if path == "/v1/responses":
            return Route("openai", OPENAI_RESPONSES)
        found = _GEMINI.match(path)
        if found:
            return Route("gemini", GEMINI, found.group(1))
    if path.startswith(("/v1beta/", "/v1alpha/")) or "x-goog-api-key" in headers:
        return Route("gemini")
    if path.startswith("/v1/messages") or "anthropic-version" in headers or \
            "x-api-key" in headers:
        return Route("anthropic")
    return Route("openai")


def upstreams(given: Iterable[str]) -> dict[str, str]:
    """The base URL of each provider: PUBLIC, with `--upstream NAME=URL` values over it."""
    out = dict(PUBLIC)
    for item in given:
        name, sep, url = item.partition("=")
        name = name.strip().lower()
        if name in ("openai-chat", "openai-responses", "codex"):
            name = "openai"
        if not sep or name not in PUBLIC:
            raise BadArgument(f"--upstream {f'{name}=...' if sep else repr(item)}: give "
                              "NAME=URL, NAME one of "
                              f"{', '.join(PUBLIC)}")
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadArgument(f"--upstream {name}=...: the URL must be http:// or https:// "
                              "with a host")
        if "@" in parts.netloc or parts.query or parts.fragment:
            # the proxy would print it and send it; credentials travel in the client's headers
            raise BadArgument(f"--upstream {name}=...: give the URL without a user, password, "
                              "query or fragment")
        out[name] = url.strip().rstrip("/")
    return out


def target(base_url: str, raw_target: str) -> str:
    """The upstream URL of a request: its provider's base URL and the path and query as the
    client sent them. An absolute-form target (`POST http://host/path`) gives only its path
    and query: a request never names the host it goes to."""
    if not raw_target.startswith("/"):
        parts = urlsplit(raw_target)
        raw_target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return base_url + raw_target


def forwarded(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The request or response headers that pass through: all but the hop-by-hop ones and
    the ones the Connection header names."""
    pairs = list(headers)
    named = {h.strip().lower() for k, v in pairs if k.lower() == "connection"
             for h in v.split(",")}
    return [(k, v) for k, v in pairs if k.lower() not in HOP_BY_HOP and k.lower() not in named]


def oauth_refused(headers: Mapping[str, str], base_url: str) -> bool:
    """Whether the request carries a Claude subscription token to a host it is not meant for."""
    auth = headers.get("authorization", "")
    token = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
    return token.startswith(OAUTH_PREFIX) and urlsplit(base_url).hostname != OAUTH_HOST


def session_id(headers: Mapping[str, str]) -> str | None:
    """The agent's own session id, where a header carries it."""
    for name in SESSION_HEADERS:
        value = headers.get(name)
        if value:
            return value[:200]
    return None
