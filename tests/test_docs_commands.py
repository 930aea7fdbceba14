"""Every `sessionctx` command in the README and the docs/ pages runs as written and exits as they
say, each page's commands in order in a folder of its own set up with what they name: the
bundled example and fixtures placed where the agents keep their sessions (HOME is the folder's
own), a native session, a summarizer script, stand-ins for `claude`, `codex` and the browser,
and the strict stub (tests/strict_stub.py) as every provider the commands reach; the proxy
served on its documented port runs in a network namespace of its own, where the provider it
names cannot be reached. The README quick start's printed output is compared with what the
README shows by test_readme_quickstart.py. Every page the README links to exists."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import pytest

from sessionctx.cli import main
from tests.strict_stub import StrictStub, serve
from tests.test_compaction_checkpoint import SUMMARY_FUNCS, turn, write_session
from tests.test_proxy_readme import commands, section
from tests.test_repair_formats import claude_variants

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FIXTURES = ROOT / "tests" / "fixtures"


def _blocks(text: str) -> Iterator[str]:
    """The shell lines of a page: its ```sh blocks and its indented code lines."""
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        yield from block.splitlines()
    yield from re.findall(r"^    (sessionctx .*)$", re.sub(r"```.*?```", "", text, flags=re.S),
                          re.M)


def _is_synopsis(line: str) -> bool:
    """A usage line (`[--port N]` for an optional part) shows a command's shape, not a run."""
    return " [" in line


def _run_by_test_proxy_readme(page: str, line: str) -> bool:
    """The README's "Keep a session alive" commands run with the real agent CLIs, offline, in
    test_proxy_readme.py."""
    return page == "README.md" and line in commands(section())


def _commands() -> list[tuple[str, str]]:
    out = []
    for page in PAGES:
        for line in _blocks(page.read_text()):
            line = line.strip()
            if (line.startswith("sessionctx ") and not _is_synopsis(line)
                    and not _run_by_test_proxy_readme(page.name, line)):
                out.append((page.name, line))
    return out


def _argv(line: str) -> list[str]:
    line = re.split(r"\s#\s", line, maxsplit=1)[0].replace("|| true", "")
    return shlex.split(line)[1:]


# -- the folder the commands run in ------------------------------------------------------------

CLAUDE_FILE = ".claude/projects/-home-me-app/06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
CODEX_FILE = (".codex/sessions/2025/09/24/"
              "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl")
PI_FILE = (".pi/agent/sessions/--home-me-app--/"
           "2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617.jsonl")

# `claude` and `codex` as the proxy sees them: each sends one request whose history holds a call
# with no result to the base URL `sessionctx run` gave it, and fails unless it is answered
CLIENT = textwrap.dedent("""
    import json, os, sys, urllib.request
    def send(url, body):
        headers = {"content-type": "application/json", "x-api-key": "test",
                   "anthropic-version": "2023-06-01", "authorization": "Bearer test"}
        req = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
        with urllib.request.urlopen(req, timeout=60) as answer:
            print(answer.status, answer.read()[:200].decode())
    asking = {"role": "user", "content": "list the files"}
    """)
CLAUDE = CLIENT + textwrap.dedent("""
    send(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", {
        "model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [asking,
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls",
                                               "input": {}}]},
            {"role": "user", "content": "go on"}],
        "tools": [{"name": "ls", "input_schema": {"type": "object"}}]})
    """)
CODEX = CLIENT + textwrap.dedent("""
    base = next(a.split("=", 1)[1].strip('"') for a in sys.argv if a.startswith("openai_base_url="))
    assert sys.argv[-2:] == ["exec", "go on"], sys.argv
    send(base + "/responses", {"model": "gpt-5", "input": [
        {"type": "message", "role": "user", "content": "list the files"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "message", "role": "user", "content": "go on"}]})
    """)
AGENT = CLIENT + textwrap.dedent("""
    send(os.environ["OPENAI_BASE_URL"] + "/chat/completions", {"model": "gpt-5", "messages": [
        asking, {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "user", "content": "go on"}]})
    """)
SUMMARIZER = "#!" + sys.executable + "\n" + SUMMARY_FUNCS + textwrap.dedent("""
    import sys
    print(summary_for(sys.stdin.read()))
    """)


@dataclass
class World:
    """One page's folder: HOME, the working directory and the environment its commands get."""

    home: Path
    cwd: Path
    env: dict[str, str]
    stub: StrictStub
    outputs: list[subprocess.CompletedProcess[str]] = field(default_factory=list)


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _world(tmp: Path, stub: StrictStub) -> World:
    home, cwd, bin_ = tmp / "home", tmp / "home" / "work", tmp / "bin"
    cwd.mkdir(parents=True)
    shutil.copytree(ROOT / "examples", cwd / "examples")
    claude = home / CLAUDE_FILE
    claude.parent.mkdir(parents=True)
    claude.write_bytes(claude_variants(FIXTURES)["unanswered in the middle"])
    codex = home / CODEX_FILE
    codex.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "codex" / "recorded-0.171.0-killed-call.jsonl", codex)
    pi = home / PI_FILE
    pi.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "pi" / "large-session.jsonl", pi)
    # Codex reads its provider's base URL from its config: `run` keeps it as the upstream
    (home / ".codex" / "config.toml").write_text(f'openai_base_url = "{stub.url}/v1"\n')
    # a native session longer than what compaction keeps (3 turns, 20,000 tokens)
    write_session(cwd / "session.jsonl", [m for t in range(30) for m in turn(t, "word " * 600)])
    shutil.copyfile(FIXTURES / "anthropic" / "session.messages.json",  # as Cline keeps it
                    cwd / "api_conversation_history.json")
    _script(cwd / "summarize.sh", SUMMARIZER)
    _script(cwd / "my_agent.py", AGENT)
    python = sys.executable
    for name, text in (("claude", CLAUDE), ("codex", CODEX)):
        _script(bin_ / name, f"#!{python}\n{text}")
    _script(bin_ / "sessionctx", f'#!/bin/sh\nexec "{python}" -m sessionctx "$@"\n')
    _script(bin_ / "python", f'#!/bin/sh\nexec "{python}" "$@"\n')
    _script(bin_ / "browser", f'#!/bin/sh\necho "$1" >> "{tmp}/opened"\n')
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_BASE_URL") and not k.endswith("_API_KEY")}
    env.update({
        "HOME": str(home), "PATH": f"{bin_}{os.pathsep}{env['PATH']}",
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", "BROWSER": str(bin_ / "browser"),
        "SESSIONCTX_STORE": f"sqlite:///{tmp / 'store.db'}", "XDG_DATA_HOME": str(tmp / "data"),
        # every provider a command reaches is the strict stub
        "ANTHROPIC_API_KEY": "test", "OPENAI_API_KEY": "test",
        "ANTHROPIC_BASE_URL": stub.url, "OPENAI_BASE_URL": f"{stub.url}/v1",
        "SESSIONCTX_ANTHROPIC_BASE_URL": stub.url, "SESSIONCTX_OPENAI_BASE_URL": f"{stub.url}/v1",
    })
    return World(home, cwd, env, stub)


def _run(world: World, line: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["bash", "-c", line], cwd=world.cwd, env=world.env,
                          capture_output=True, text=True, timeout=timeout)
    world.outputs.append(done)
    return done


# -- what each command does, as its page says ---------------------------------------------------

Check = Callable[[World, subprocess.CompletedProcess[str]], None]


def _checkpoint_of_compact(world: World, line: str) -> str:
    """`--before CHECKPOINT`: the id the `compact` before it printed."""
    printed = world.outputs[-1].stdout
    found = re.search(r"appended checkpoint (\S+) at line", printed)
    assert found, printed
    return line.replace("CHECKPOINT", found.group(1))


def _summary_ready(world: World, line: str) -> str:
    """The stub answers the summarizer's prompt with a summary that passes the audit: the
    prompt `compact --dry-run` printed just before (the same one the summarizer gets)."""
    prompt = world.outputs[-1].stdout.split("--- prompt ---\n", 1)[1]
    namespace: dict[str, Any] = {}
    exec(SUMMARY_FUNCS, namespace)
    world.stub.script.append({"text": namespace["summary_for"](prompt)})
    return line


def _repaired(path: str) -> Check:
    def check(world: World, done: subprocess.CompletedProcess[str]) -> None:
        target = world.home / path
        assert list(target.parent.glob(target.name + ".bak-*")), done.stdout
        again = subprocess.run([sys.executable, "-m", "sessionctx", "check", str(target)],
                               env=world.env, capture_output=True, text=True)
        assert "dropped_unpaired_call" not in again.stdout, again.stdout
    return check


def _dry(path: str) -> Check:
    def check(world: World, done: subprocess.CompletedProcess[str]) -> None:
        assert "dry run: nothing written" in done.stdout
        assert not list((world.home / path).parent.glob("*.bak-*"))
    return check


def _through_proxy(note: bool = False) -> Check:
    def check(world: World, done: subprocess.CompletedProcess[str]) -> None:
        assert done.stdout.startswith("200 "), (done.stdout, done.stderr)
        assert re.search(r"^sessionctx: 1 request, 1 repaired \(0 after a refusal\), "
                         r"\d+ changes?, 1 pending call removed", done.stderr, re.M), done.stderr
        assert not world.stub.refused()  # the provider got a body it accepts
        sent = world.stub.requests[-1]["raw"]
        assert '"c1"' not in sent and '"t1"' not in sent  # the unanswered call is out
        assert ("outcome is unknown" in sent) is note, sent
    return check


def _report_written(name: str) -> Check:
    def check(world: World, done: subprocess.CompletedProcess[str]) -> None:
        assert "<html" in (world.cwd / name).read_text()
    return check


def _opened(world: World, done: subprocess.CompletedProcess[str]) -> None:
    opened = (world.home.parent / "opened").read_text().split()
    assert opened == [(world.cwd / "session.report.html").as_uri()]
    page = (world.cwd / "session.report.html").read_text()
    assert '"provider":{"name":"anthropic"' in page  # the body's turn beside each record


def _fits(world: World, done: subprocess.CompletedProcess[str]) -> None:
    assert done.stdout.startswith("fits: ")


def _plan(world: World, done: subprocess.CompletedProcess[str]) -> None:
    assert done.stdout.startswith("plan: summarize messages ")
    assert "--- prompt ---" in done.stdout


def _compacted(world: World, done: subprocess.CompletedProcess[str]) -> None:
    assert "appended checkpoint" in done.stdout
    [request] = [r for r in world.stub.requests if r["kind"] == "anthropic"]
    assert request["body"]["model"] == "claude-sonnet-4-5" and request["status"] == 200


def _restored(world: World, done: subprocess.CompletedProcess[str]) -> None:
    assert "appended restore checkpoint" in done.stdout, done.stdout


def _compacted_in_store(world: World, done: subprocess.CompletedProcess[str]) -> None:
    assert "appended checkpoint" in done.stdout, done.stdout
    listed = subprocess.run([sys.executable, "-m", "sessionctx", "sessions", "--store",
                             "sqlite:///sessions.db", "--json"], cwd=world.cwd, env=world.env,
                            capture_output=True, text=True)
    assert "cline-1" in listed.stdout, listed.stdout


def _imported(world: World, done: subprocess.CompletedProcess[str]) -> None:
    assert (world.cwd / "sessions.db").is_file()


def _logged(world: World, done: subprocess.CompletedProcess[str]) -> None:
    entries = json.loads(done.stdout)["entries"]
    # the requests `run` repaired on this page, each answered by the provider, and the one the
    # served proxy repaired for a provider out of its reach
    assert [(e["api"], e["status"]) for e in entries] == [
        ("anthropic", 200), ("openai-responses", 200), ("openai-chat", 200),
        ("anthropic", 502)], entries
    assert entries[-1]["outcome"].startswith("upstream unreachable: "), entries[-1]


@dataclass(frozen=True)
class Expect:
    code: int
    check: Check | None = None
    prepare: Callable[[World, str], str] | None = None


CLAUDE_PATH = "~/" + CLAUDE_FILE
QUICK = "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
EXPECTED: dict[tuple[str, str], Expect] = {
    # the quick start, in the folder Claude Code keeps the session in (its output:
    # test_readme_quickstart.py)
    ("README.md", f"sessionctx check {QUICK}"): Expect(1),
    ("README.md", f"sessionctx repair {QUICK} --dry-run"): Expect(0, _dry(CLAUDE_FILE)),
    ("README.md", f"sessionctx repair {QUICK}"): Expect(0, _repaired(CLAUDE_FILE)),
    ("commands.md", "sessionctx report examples/interrupted.jsonl -o report.html"):
        Expect(0, _report_written("report.html")),
    ("commands.md", "sessionctx report session.jsonl --provider anthropic --open   "
                    "# a fourth column: the body's turn"): Expect(0, _opened),
    ("compaction.md", "sessionctx budget  session.jsonl --window 64000            "
                      "# fits / compact / cannot-fit, with the numbers"): Expect(0, _fits),
    ("compaction.md", "sessionctx compact session.jsonl --summarizer 'command:./summarize.sh' "
                      "--dry-run   # the plan and the prompt"): Expect(0, _plan),
    ("compaction.md", "sessionctx compact session.jsonl --summarizer "
                      "'anthropic:claude-sonnet-4-5'"): Expect(0, _compacted, _summary_ready),
    ("compaction.md", "sessionctx restore session.jsonl --before CHECKPOINT        "
                      "# undo: re-establish the earlier context"):
        Expect(0, _restored, _checkpoint_of_compact),
    ("compaction.md", "sessionctx import api_conversation_history.json "
                      "--store sqlite:///sessions.db --session cline-1"): Expect(0, _imported),
    ("compaction.md", "sessionctx compact --store sqlite:///sessions.db --session cline-1 "
                      "--summarizer 'command:./summarize.sh' --keep-tokens 4000"):
        Expect(0, _compacted_in_store),
    ("proxy.md", "sessionctx run -- claude                 "
                 "# ANTHROPIC_BASE_URL points at the proxy"): Expect(0, _through_proxy()),
    ("proxy.md", "sessionctx run -- codex exec \"go on\"     "
                 "# Codex's model provider base_url, set with -c"): Expect(0, _through_proxy()),
    ("proxy.md", "sessionctx run --note-unpaired -- python my_agent.py   "
                 "# OPENAI_BASE_URL, ANTHROPIC_BASE_URL"): Expect(0, _through_proxy(note=True)),
    ("proxy.md", "sessionctx proxy --port 8787 --upstream anthropic=https://api.anthropic.com"):
        Expect(0),  # run by _serve, below
    ("proxy.md", "sessionctx proxy log --json"): Expect(0, _logged),
    ("resume.md", f"sessionctx repair {CLAUDE_PATH} --dry-run"): Expect(0, _dry(CLAUDE_FILE)),
    ("resume.md", f"sessionctx repair {CLAUDE_PATH}"): Expect(0, _repaired(CLAUDE_FILE)),
    ("resume.md", f"sessionctx repair ~/{CODEX_FILE}"): Expect(0, _repaired(CODEX_FILE)),
    ("resume.md", f"sessionctx repair ~/{PI_FILE} --note-unpaired"):
        Expect(0, _repaired(PI_FILE)),
}


# the served proxy: in a network namespace holding only loopback, so the provider it names is
# out of reach; a request it repairs goes there and gets the proxy's own 502
SERVE = textwrap.dedent("""
    import json, os, signal, socket, subprocess, sys, time, urllib.error, urllib.request
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    server = subprocess.Popen(["bash", "-c", sys.argv[1]], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", 8787), 0.1).close()
            break
        except OSError:
            time.sleep(0.1)
    body = {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls",
                                           "input": {}}]},
        {"role": "user", "content": "go on"}],
        "tools": [{"name": "ls", "input_schema": {"type": "object"}}]}
    req = urllib.request.Request("http://127.0.0.1:8787/v1/messages", json.dumps(body).encode(),
                                 headers={"content-type": "application/json",
                                          "anthropic-version": "2023-06-01"})
    try:
        status, answer = 200, urllib.request.urlopen(req, timeout=60).read()
    except urllib.error.HTTPError as exc:
        status, answer = exc.code, exc.read()
    os.killpg(server.pid, signal.SIGINT)
    out, err = server.communicate(timeout=60)
    print(json.dumps({"code": server.returncode, "stderr": err, "status": status,
                      "answer": answer.decode()}))
    """)


def _serve(world: World, line: str) -> subprocess.CompletedProcess[str]:
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True)
    assert probe.returncode == 0, f"no network namespace (unshare -rn): {probe.stderr!r}"
    driver = world.cwd.parent / "serve.py"
    driver.write_text(SERVE)
    done = subprocess.run(["unshare", "-rn", sys.executable, str(driver), line],
                          cwd=world.cwd, env=world.env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["status"] == 502, got
    assert json.loads(got["answer"])["error"]["message"].startswith("sessionctx proxy"), got
    assert "sessionctx proxy on http://127.0.0.1:8787 -> anthropic https://api.anthropic.com" \
        in got["stderr"], got["stderr"]
    return subprocess.CompletedProcess(line, got["code"], "", got["stderr"])


# -- the tests ----------------------------------------------------------------------------------

def test_the_pages_hold_commands() -> None:
    pages = {name for name, _ in _commands()}
    assert {"README.md", "resume.md", "commands.md", "compaction.md", "proxy.md"} <= pages


def test_every_command_has_its_documented_outcome() -> None:
    assert set(_commands()) == set(EXPECTED)


@pytest.mark.parametrize(("page", "line"), _commands())
def test_each_command_parses_as_written(page: str, line: str) -> None:
    argv = _argv(line)
    with main.make_context("sessionctx", list(argv)) as ctx:
        name = argv[0]
        command = main.get_command(ctx, name)
        assert command is not None, f"{page}: no command {name!r}"
        try:
            command.make_context(name, argv[1:], parent=ctx)
        except click.UsageError as exc:
            raise AssertionError(f"{page}: {line}: {exc.format_message()}") from None


@pytest.fixture(scope="module")
def stub() -> Iterator[StrictStub]:
    with serve() as running:
        yield running


@pytest.mark.parametrize("page", sorted({page for page, _ in _commands()}))
def test_each_pages_commands_run_as_written(page: str, stub: StrictStub,
                                            tmp_path: Path) -> None:
    stub.requests.clear()
    stub.script.clear()
    world = _world(tmp_path, stub)
    before = {p: p.read_bytes() for p in (ROOT / "examples").iterdir()}
    for name, line in _commands():
        if name != page:
            continue
        expect = EXPECTED[(name, line)]
        run_line = expect.prepare(world, line) if expect.prepare else line
        if page == "README.md":
            world.cwd = (world.home / CLAUDE_FILE).parent  # the quick start's `cd`
        done = _serve(world, run_line) if " --port 8787 " in line else _run(world, run_line)
        assert done.returncode == expect.code, (line, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr, done.stderr
        if expect.check is not None:
            expect.check(world, done)
    assert {p: p.read_bytes() for p in (ROOT / "examples").iterdir()} == before


def test_every_linked_page_exists() -> None:
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+\.(?:md|png))(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).is_file(), f"{page.name} links to {target}"


def test_the_readme_is_a_front_door() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
