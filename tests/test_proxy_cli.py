"""`sessionctx proxy` as a program: it listens on 127.0.0.1 only, keeps a repaired body only
with `--log-bodies` and never a credential (not in its store, not in what it prints), takes
upstreams only as NAME=URL of a known provider, forwards a subscription token to
api.anthropic.com only; and the other commands never load its dependencies."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.proxy.routes import PUBLIC, oauth_refused, upstreams
from tests.proxy_thread import post
from tests.strict_stub import serve
from tests.test_proxy_audit import logged
from tests.test_proxy_faults import BROKEN

SRC = Path(__file__).resolve().parents[1]
SECRETS = ("sk-ant-api03-SECRETKEY", "sk-proj-SECRETBEARER", "SECRETCOOKIE")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{SRC / 'src'}{os.pathsep}{SRC}"}


def test_the_proxy_listens_on_loopback_and_keeps_no_credential(tmp_path):
    db = tmp_path / "audit.db"
    with serve() as up:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sessionctx.cli", "proxy", "--port", "0", "--log-bodies",
             "--upstream", f"anthropic={up.url}", "--store", f"sqlite:///{db}"],
            env=_env(), stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            first = proc.stderr.readline()
            assert first.startswith("sessionctx proxy on http://127.0.0.1:"), first
            url = first.split()[3]
            port = int(url.rsplit(":", 1)[1])
            with pytest.raises(ConnectionRefusedError):  # another loopback address: not bound
                socket.create_connection(("127.0.0.2", port), timeout=5).close()
            status, _, _ = post(url, "/v1/messages", json.dumps(BROKEN).encode(), headers={
                "x-api-key": SECRETS[0], "authorization": f"Bearer {SECRETS[1]}",
                "cookie": f"s={SECRETS[2]}"})
            assert status == 200 and up.requests[-1]["headers"]["x-api-key"] == SECRETS[0]
            [entry] = logged(f"sqlite:///{db}")
        finally:
            proc.send_signal(signal.SIGINT)
            _, printed = proc.communicate(timeout=30)
    assert "repaired" in printed and "1 repaired" in printed
    assert entry["body"] == up.requests[-1]["body"]  # --log-bodies: the body sent
    kept = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("audit"))
    for secret in SECRETS:
        assert secret.encode() not in kept and secret not in first + printed


def test_upstreams_are_known_providers_at_http_urls():
    assert upstreams([]) == PUBLIC
    assert upstreams(["codex=http://127.0.0.1:9/"])["openai"] == "http://127.0.0.1:9"
    for bad in ("evil=http://x", "anthropic", "anthropic=ftp://x", "gemini=http://",
                "openai=https://me:SECRET@gw.example", "gemini=https://gw.example/?key=SECRET",
                "evil=https://me:SECRET@gw.example"):
        out = CliRunner().invoke(main, ["proxy", "--port", "0", "--upstream", bad])
        assert out.exit_code != 0 and "--upstream" in out.output
        assert "Traceback" not in out.output and "SECRET" not in out.output


def test_a_subscription_token_is_forwarded_to_api_anthropic_com_only():
    oauth = {"authorization": "Bearer sk-ant-oat01-x"}
    assert not oauth_refused(oauth, "https://api.anthropic.com")
    assert oauth_refused(oauth, "https://gateway.example")
    assert oauth_refused(oauth, "https://api.anthropic.com.evil.example")
    assert not oauth_refused({"authorization": "Bearer sk-proj-x"}, "https://gateway.example")


def test_the_other_commands_never_load_the_proxy_dependencies(tmp_path):
    program = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from sessionctx.cli import main\n"
        f"store = 'sqlite:///{tmp_path / 'a.db'}'\n"
        "for args in (['--help'], ['proxy', '--help'], ['run', '--help'],\n"
        "             ['proxy', 'log', '--store', store], ['sessions', '--store', store]):\n"
        "    out = CliRunner().invoke(main, args)\n"
        "    assert out.exit_code == 0, (args, out.output)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "             ('aiohttp', 'yarl', 'multidict') or m == 'sessionctx.proxy.server'))\n")
    done = subprocess.run([sys.executable, "-c", program], env=_env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"
