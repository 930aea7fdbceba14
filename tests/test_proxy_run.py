"""`sessionctx run -- COMMAND`: the command's base URLs point at a proxy on a free port, its
earlier base URL becomes the upstream, a one-line summary is printed, its exit code kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sessionctx.proxy.child import plan
from tests.strict_stub import serve

SCRIPT = textwrap.dedent("""
    import os, sys, anthropic
    client = anthropic.Anthropic(max_retries=0)
    reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=8, messages=[
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls",
                                           "input": {}}]},
        {"role": "user", "content": "go on"}],
        tools=[{"name": "ls", "input_schema": {"type": "object"}}])
    print(reply.content[0].text, os.environ["ANTHROPIC_BASE_URL"])
    sys.exit(7)
""")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    src = Path(__file__).resolve().parents[1]
    return {**os.environ, "PYTHONPATH": f"{src / 'src'}{os.pathsep}{src}",
            "ANTHROPIC_API_KEY": "k", "SESSIONCTX_STORE": f"sqlite:///{tmp_path / 'a.db'}",
            **extra}


def test_run_points_an_sdk_program_at_the_proxy_and_keeps_its_exit_code(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(SCRIPT)
    with serve([{"text": "done é"}]) as up:
        env = _env(tmp_path, ANTHROPIC_BASE_URL=up.url)
        direct = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                                text=True, timeout=60)
        assert direct.returncode == 1 and "tool_result" in direct.stderr
        done = subprocess.run([sys.executable, "-m", "sessionctx.cli", "run", "--",
                               sys.executable, str(script)], env=env, capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 7, done.stderr
    text, base = done.stdout.rsplit(maxsplit=1)
    assert text == "done é" and base.startswith("http://127.0.0.1:") and base != up.url
    assert "1 repaired" in done.stderr and "1 pending call removed" in done.stderr
    assert [r["status"] for r in up.requests] == [400, 200]
    assert "t1" not in up.raw(-1).decode()


def test_codex_gets_its_provider_pointed_at_the_proxy(tmp_path):
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text(
        'model_provider = "stub"\n[model_providers.stub]\nname = "stub"\n'
        'base_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n')
    got = plan(["codex", "exec", "hi"], {"CODEX_HOME": str(home)}, 4000)
    assert got.argv == ["codex", "-c", 'model_providers.stub.base_url="http://127.0.0.1:4000/v1"',
                        "-c", "model_providers.stub.supports_websockets=false", "exec", "hi"]
    assert got.upstreams == ["openai=http://127.0.0.1:9"]
    plain = plan(["codex", "exec"], {"CODEX_HOME": str(tmp_path / "none")}, 4000)
    assert plain.argv[1:3] == ["-c", 'openai_base_url="http://127.0.0.1:4000/v1"']
    assert plain.env["OPENAI_BASE_URL"] == "http://127.0.0.1:4000/v1"


SDK_PROGRAM = textwrap.dedent("""
    import sys
    sdk, stream = sys.argv[1], sys.argv[2] == "stream"
    if sdk == "anthropic":
        import anthropic
        client = anthropic.Anthropic(max_retries=0)
        kw = dict(model="claude-sonnet-4-5", max_tokens=8, messages=[
            {"role": "user", "content": "list"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls",
                                               "input": {}}]},
            {"role": "user", "content": "go on"}],
            tools=[{"name": "ls", "input_schema": {"type": "object"}}])
        if stream:
            with client.messages.stream(**kw) as s:
                text = "".join(s.text_stream)
        else:
            text = client.messages.create(**kw).content[0].text
    elif sdk.startswith("openai"):
        import openai
        client = openai.OpenAI(max_retries=0)
        if sdk == "openai-chat":
            kw = dict(model="gpt-4o", messages=[
                {"role": "user", "content": "list"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "t1", "type": "function",
                     "function": {"name": "ls", "arguments": "{}"}}]},
                {"role": "user", "content": "go on"}])
            if stream:
                text = "".join(c.choices[0].delta.content or "" for c in
                               client.chat.completions.create(**kw, stream=True) if c.choices)
            else:
                text = client.chat.completions.create(**kw).choices[0].message.content
        else:
            kw = dict(model="gpt-5", input=[
                {"role": "user", "content": "list"},
                {"type": "function_call", "call_id": "t1", "name": "ls", "arguments": "{}"},
                {"role": "user", "content": "go on"}])
            if stream:
                text = list(client.responses.create(**kw, stream=True))[-1].response.output_text
            else:
                text = client.responses.create(**kw).output_text
    else:
        from google import genai
        from google.genai import types
        client = genai.Client(http_options=types.HttpOptions(
            retry_options=types.HttpRetryOptions(attempts=1)))
        contents = [
            types.Content(role="user", parts=[types.Part(text="list")]),
            types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
                name="ls", args={}))]),
            types.Content(role="user", parts=[types.Part(text="go on")])]
        if stream:
            text = "".join(c.text or "" for c in client.models.generate_content_stream(
                model="gemini-2.5-flash", contents=contents))
        else:
            text = client.models.generate_content(model="gemini-2.5-flash",
                                                  contents=contents).text
    print(text)
""")


@pytest.mark.parametrize("stream", ["plain", "stream"])
@pytest.mark.parametrize("sdk", ["anthropic", "openai-chat", "openai-responses", "google-genai"])
def test_each_sdk_resumes_a_refused_history_through_run(tmp_path, sdk, stream):
    """The official SDKs read their base URL from the environment `run` sets: the history the
    stub refuses direct goes on through the proxy, its unanswered call out, never answered."""
    script = tmp_path / "agent.py"
    script.write_text(SDK_PROGRAM)
    with serve([{"text": "done é"}]) as up:
        env = _env(tmp_path, ANTHROPIC_BASE_URL=up.url, OPENAI_BASE_URL=f"{up.url}/v1",
                   GOOGLE_GEMINI_BASE_URL=up.url, OPENAI_API_KEY="k", GEMINI_API_KEY="k")
        argv = [sys.executable, str(script), sdk, stream]
        direct = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert direct.returncode != 0 and len(up.refused()) == 1, direct.stderr
        done = subprocess.run([sys.executable, "-m", "sessionctx.cli", "run", "--", *argv],
                              env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done é\n"
    assert [r["status"] for r in up.requests] == [400, 200]
    sent = up.raw(-1).decode()  # the call is out, and nothing answers it
    assert not [w for w in ('"t1"', "tool_use", "tool_calls", "function_call", "functionCall",
                            "functionResponse") if w in sent]
    assert "1 repaired" in done.stderr and "1 pending call removed" in done.stderr


def test_goose_gets_its_provider_hosts_pointed_at_the_proxy(tmp_path):
    """Goose reads OPENAI_HOST and its siblings from the environment before its config.yaml;
    a host its config names becomes the upstream, so Goose still reaches it."""
    config = tmp_path / "home" / ".config" / "goose" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("GOOSE_PROVIDER: openai\nOPENAI_HOST: 'http://127.0.0.1:9/'\n"
                      "extensions:\n  developer:\n    enabled: true\n")
    got = plan(["/opt/bin/goose", "run"], {"HOME": str(tmp_path / "home"),
                                          "ANTHROPIC_HOST": "http://127.0.0.1:8"}, 4000)
    assert {k: got.env[k] for k in ("OPENAI_HOST", "ANTHROPIC_HOST", "GOOGLE_HOST")} == {
        k: "http://127.0.0.1:4000" for k in ("OPENAI_HOST", "ANTHROPIC_HOST", "GOOGLE_HOST")}
    assert got.upstreams == ["openai=http://127.0.0.1:9", "anthropic=http://127.0.0.1:8"]
    other = plan(["python", "x.py"], {"HOME": str(tmp_path / "home")}, 4000)
    assert "OPENAI_HOST" not in other.env  # set for Goose, or where it was set already


def test_the_proxy_runs_on_uvloop_where_it_is_installed(monkeypatch):
    uvloop = pytest.importorskip("uvloop")
    from sessionctx.proxy.server import new_loop
    loop = new_loop()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as where it is not installed
    loop = new_loop()
    try:
        assert not isinstance(loop, uvloop.Loop) and type(loop).__module__.startswith("asyncio")
    finally:
        loop.close()


def test_opencode_gets_its_providers_base_urls_pointed_at_the_proxy(tmp_path):
    """opencode's settings layers are merged as opencode merges them; each provider of an API
    the proxy reads gets the proxy's URL in OPENCODE_CONFIG_CONTENT (read last), its own URL
    the upstream; a provider whose API is tied elsewhere already is left alone."""
    project = tmp_path / "work"
    (project / ".git").mkdir(parents=True)
    (project / "opencode.jsonc").write_text(
        '{// a comment\n "provider": {"stub": {"npm": "@ai-sdk/openai-compatible",\n'
        '  "options": {"baseURL": "http://127.0.0.1:9/v1",}},\n'
        ' "other": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": '
        '"{env:X}"}},\n "bedrock": {"options": {"region": "x"}}}}')
    env = {"HOME": str(tmp_path / "home"), "OPENCODE_CONFIG_CONTENT": '{"model": "stub/m"}'}
    got = plan(["opencode", "run", "hi"], env, 4000, cwd=project)
    content = json.loads(got.env["OPENCODE_CONFIG_CONTENT"])
    assert content["model"] == "stub/m"
    assert content["provider"] == {
        "stub": {"options": {"baseURL": "http://127.0.0.1:4000/v1"}},
        "anthropic": {"options": {"baseURL": "http://127.0.0.1:4000/v1"}},
        "openai": {"options": {"baseURL": "https://api.openai.com/v1"}},  # tied to the stub's
        "google": {"options": {"baseURL": "http://127.0.0.1:4000/v1beta"}}}
    assert got.upstreams == ["openai=http://127.0.0.1:9", "anthropic=https://api.anthropic.com",
                             "gemini=https://generativelanguage.googleapis.com"]
    tied = plan(["opencode", "run"], {**env, "OPENAI_BASE_URL": "http://127.0.0.1:8/v1"},
                4000, cwd=project)
    providers = json.loads(tied.env["OPENCODE_CONFIG_CONTENT"])["provider"]
    assert providers["stub"] == {"options": {"baseURL": "http://127.0.0.1:9/v1"}}  # its own
    assert providers["openai"] == {"options": {"baseURL": "http://127.0.0.1:4000/v1"}}
    assert "other" not in providers and "bedrock" not in providers
    assert tied.upstreams[0] == "openai=http://127.0.0.1:8"
    assert plan(["python"], env, 4000, cwd=project).env["OPENCODE_CONFIG_CONTENT"] == \
        env["OPENCODE_CONFIG_CONTENT"]


def test_copilot_is_pointed_at_the_proxy_only_in_its_own_key_mode():
    """COPILOT_PROVIDER_BASE_URL switches Copilot CLI to a provider of the user's own: `run`
    rewrites it where it is set, never sets it."""
    byok = plan(["copilot"], {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1"}, 4000)
    assert byok.env["COPILOT_PROVIDER_BASE_URL"] == "http://127.0.0.1:4000/v1"
    assert byok.upstreams == ["openai=http://127.0.0.1:9"]
    claude = plan(["copilot"], {"COPILOT_PROVIDER_BASE_URL": "https://gw.example/anthropic",
                                "COPILOT_PROVIDER_TYPE": "anthropic"}, 4000)
    assert claude.env["COPILOT_PROVIDER_BASE_URL"] == "http://127.0.0.1:4000"
    assert claude.upstreams == ["anthropic=https://gw.example/anthropic"]
    assert "COPILOT_PROVIDER_BASE_URL" not in plan(["copilot"], {}, 4000).env
    tied = plan(["copilot"], {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1",
                              "OPENAI_BASE_URL": "http://127.0.0.1:8/v1"}, 4000)
    assert tied.env["COPILOT_PROVIDER_BASE_URL"] == "http://127.0.0.1:9/v1"  # left alone


def test_cline_reads_a_copy_of_its_provider_settings_pointed_at_the_proxy(tmp_path):
    """Cline's provider settings are a file it rewrites: `run` gives it a copy with the
    provider's baseUrl pointed at the proxy, and writes what it changed back, URL restored."""
    settings = tmp_path / "home" / ".cline" / "data" / "settings" / "providers.json"
    settings.parent.mkdir(parents=True)
    stored: dict[str, object] = {
        "version": 1, "lastUsedProvider": "openai-compatible", "providers": {
        "openai-compatible": {"settings": {"provider": "openai-compatible", "apiKey": "k",
                                           "baseUrl": "http://127.0.0.1:9/v1"}},
        "anthropic": {"settings": {"provider": "anthropic", "apiKey": "k"}}}}
    settings.write_text(json.dumps(stored))
    env = {"HOME": str(tmp_path / "home")}
    got = plan(["/usr/bin/cline", "hi"], env, 4000)
    [copy] = got.copies
    assert copy.var == "CLINE_PROVIDER_SETTINGS_PATH" and copy.source == settings
    pointed = json.loads(copy.text)["providers"]["openai-compatible"]["settings"]
    assert pointed["baseUrl"] == "http://127.0.0.1:4000/v1"
    assert got.upstreams[0] == "openai=http://127.0.0.1:9"
    changed = copy.text.replace('"apiKey": "k"', '"apiKey": "k2"', 1)
    back = json.loads(copy.written_back(changed))["providers"]["openai-compatible"]
    assert back["settings"] == {"provider": "openai-compatible", "apiKey": "k2",
                                "baseUrl": "http://127.0.0.1:9/v1"}
    assert plan(["cline", "-P", "anthropic", "hi"], env, 4000).copies == []  # no URL kept
    assert plan(["claude"], env, 4000).copies == []


def test_run_writes_back_what_cline_changed_in_its_copy(tmp_path):
    """The copy lives only for the run; Cline's own change reaches its file, the proxy's URL
    does not."""
    settings = tmp_path / "home" / ".cline" / "data" / "settings" / "providers.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"lastUsedProvider": "openai", "providers": {"openai": {
        "settings": {"baseUrl": "http://127.0.0.1:9/v1"}, "updatedAt": "1"}}}))
    program = tmp_path / "cline"
    program.write_text("#!/bin/sh\nsed -i 's/\"1\"/\"2\"/' \"$CLINE_PROVIDER_SETTINGS_PATH\"\n"
                       "grep -q 127.0.0.1:9 \"$CLINE_PROVIDER_SETTINGS_PATH\" && exit 3\n"
                       "exit 0\n")
    program.chmod(0o755)
    done = subprocess.run([sys.executable, "-m", "sessionctx.cli", "run", "--", str(program)],
                          env=_env(tmp_path, HOME=str(tmp_path / "home")),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    entry = json.loads(settings.read_text())["providers"]["openai"]
    assert entry == {"settings": {"baseUrl": "http://127.0.0.1:9/v1"}, "updatedAt": "2"}
