"""Summarizers: anything that turns a prompt into a summary, behind one small protocol.

Built in: any command (prompt on stdin, summary on stdout, bounded by a timeout) and a provider
model through its official SDK (Anthropic, OpenAI), imported only when used, with the key from
the environment. Every failure is a SummarizerError that says what went wrong.
"""

from __future__ import annotations

import os
import selectors
import shlex
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from sessionctx.compaction.prompt import SYSTEM
from sessionctx.errors import BadArgument, CompactionError

DEFAULT_TIMEOUT = 180.0
DEFAULT_MAX_TOKENS = 8000
MAX_OUTPUT_BYTES = 64 * 1024 * 1024  # a summary past this could never be stored


class SummarizerError(CompactionError):
    """The summarizer failed, timed out or gave nothing."""


class Summarizer(Protocol):
    @property
    def ref(self) -> str:
        """What made the summary (recorded as the checkpoint's summaryModelRef)."""
        ...

    def summarize(self, prompt: str) -> str: ...


def _non_empty(text: str | None, who: str) -> str:
    if text is None or not text.strip():
        raise SummarizerError(f"{who} returned an empty summary")
    return text.strip()


@dataclass(frozen=True, slots=True)
class CommandSummarizer:
    command: str
    timeout: float = DEFAULT_TIMEOUT

    @property
    def ref(self) -> str:
        return f"command:{self.command}"

    def summarize(self, prompt: str) -> str:
        argv = shlex.split(self.command)
        if not argv:
            raise SummarizerError("the summarizer command is empty")
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise SummarizerError(f"cannot run summarizer {argv[0]!r}: "
                                  f"{exc.strerror or exc}") from exc
        try:
            out, err = _exchange(proc, prompt.encode(), self.timeout)
        except subprocess.TimeoutExpired:
            raise SummarizerError(f"summarizer {argv[0]!r} did not finish within "
                                  f"{self.timeout:g}s and was stopped") from None
        except _TooLong:
            raise SummarizerError(f"summarizer {argv[0]!r} wrote more than "
                                  f"{MAX_OUTPUT_BYTES // 1048576} MiB and was stopped") from None
        if proc.returncode != 0:
            tail = err.decode(errors="replace").strip()[-500:]
            raise SummarizerError(f"summarizer {argv[0]!r} exited with status "
                                  f"{proc.returncode}" + (f": {tail}" if tail else ""))
        return _non_empty(out.decode(errors="replace"), f"summarizer {argv[0]!r}")


class _TooLong(Exception):
    pass


def _exchange(proc: subprocess.Popen[bytes], data: bytes, timeout: float
              ) -> tuple[bytes, bytes]:
    """Feed `data`, collect stdout and stderr until both close and the process exits, all
    within `timeout`; past it (or past MAX_OUTPUT_BYTES) its process group and every process
    still holding its output are killed, and nothing waits for them."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + timeout
    out, err = proc.stdout.fileno(), proc.stderr.fileno()
    pipes = {out: bytearray(), err: bytearray()}
    held = [os.fstat(fd).st_ino for fd in pipes]
    stdin = proc.stdin.fileno()
    os.set_blocking(stdin, False)
    todo = memoryview(data)
    with selectors.DefaultSelector() as selector:
        if todo:
            selector.register(stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        try:
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(proc.args, timeout)
                for key, _ in selector.select(left):
                    if key.fd == stdin:
                        try:
                            todo = todo[os.write(stdin, todo[:65536]):]
                        except BrokenPipeError:
                            todo = todo[:0]
                        if not todo:
                            selector.unregister(stdin)
                            proc.stdin.close()
                        continue
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        selector.unregister(key.fd)
                        continue
                    pipes[key.fd] += chunk
                    if len(pipes[key.fd]) > MAX_OUTPUT_BYTES:
                        raise _TooLong
            proc.wait(max(0.0, deadline - time.monotonic()))
        except (subprocess.TimeoutExpired, _TooLong):
            _kill_group(proc)
            _kill_holders(held)
            proc.wait()
            raise
        finally:
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                stream.close()
    return bytes(pipes[out]), bytes(pipes[err])


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _kill_holders(pipes: list[int]) -> None:
    """Kill the processes (a child that left the group with setsid, say) that still hold one
    of the summarizer's output pipes, named by inode; only its descendants can hold them."""
    names = {f"pipe:[{inode}]" for inode in pipes}
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
    except OSError:
        return
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") in names for fd in fds):
                os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


@dataclass(frozen=True, slots=True)
class _SdkSummarizer(ABC):
    """A provider model through its official SDK. What every SDK summarizer shares is here: the
    key from the environment, a base URL override, the output limit and the verdict on the
    reply; each subclass makes only its own request (`_reply`)."""

    model: str
    timeout: float = DEFAULT_TIMEOUT
    max_tokens: int = DEFAULT_MAX_TOKENS

    provider: ClassVar[str]  # also its SDK's package and the name of the extra
    key_env: ClassVar[str]
    url_envs: ClassVar[tuple[str, ...]]  # a base URL, the first set of these

    @property
    def ref(self) -> str:
        return f"{self.provider}:{self.model}"

    def summarize(self, prompt: str) -> str:
        key = _env(self.key_env)
        if key is None:
            raise SummarizerError(f"{self.key_env} is not set")
        text, cut = self._reply(prompt, key, _env(*self.url_envs))
        if cut:
            raise SummarizerError(f"{self.ref} stopped at the output limit; summary incomplete")
        return _non_empty(text, self.ref)

    @abstractmethod
    def _reply(self, prompt: str, key: str, base_url: str | None) -> tuple[str | None, bool]:
        """The reply's text, and whether it stopped at the output limit."""

    def _missing_sdk(self) -> SummarizerError:
        return SummarizerError(f"the {self.provider} summarizer needs the '{self.provider}' "
                               "extra")


@dataclass(frozen=True, slots=True)
class AnthropicSummarizer(_SdkSummarizer):
    provider: ClassVar[str] = "anthropic"
    key_env: ClassVar[str] = "ANTHROPIC_API_KEY"
    url_envs: ClassVar[tuple[str, ...]] = ("SESSIONCTX_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL")

    def _reply(self, prompt: str, key: str, base_url: str | None) -> tuple[str | None, bool]:
        try:
            import anthropic
        except ImportError as exc:
            raise self._missing_sdk() from exc
        client = anthropic.Anthropic(api_key=key, timeout=self.timeout, max_retries=1,
                                     base_url=base_url)
        try:
            response = client.messages.create(
                model=self.model, max_tokens=self.max_tokens, system=SYSTEM,
                messages=[{"role": "user", "content": prompt}])
        except anthropic.APIError as exc:
            raise SummarizerError(f"{self.ref} failed: {exc}") from exc
        text = "".join(getattr(b, "text", "") for b in response.content
                       if getattr(b, "type", None) == "text")
        return text, response.stop_reason == "max_tokens"


@dataclass(frozen=True, slots=True)
class OpenAISummarizer(_SdkSummarizer):
    provider: ClassVar[str] = "openai"
    key_env: ClassVar[str] = "OPENAI_API_KEY"
    url_envs: ClassVar[tuple[str, ...]] = ("SESSIONCTX_OPENAI_BASE_URL", "OPENAI_BASE_URL")

    def _reply(self, prompt: str, key: str, base_url: str | None) -> tuple[str | None, bool]:
        try:
            import openai
        except ImportError as exc:
            raise self._missing_sdk() from exc
        client = openai.OpenAI(api_key=key, timeout=self.timeout, max_retries=1,
                               base_url=base_url)
        messages: Any = [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": prompt}]
        try:
            response = client.chat.completions.create(
                model=self.model, messages=messages, max_completion_tokens=self.max_tokens)
        except openai.OpenAIError as exc:
            raise SummarizerError(f"{self.ref} failed: {exc}") from exc
        if not response.choices:
            raise SummarizerError(f"{self.ref} returned no choices")
        choice = response.choices[0]
        return choice.message.content, choice.finish_reason == "length"


def parse_summarizer(spec: str, *, timeout: float = DEFAULT_TIMEOUT) -> Summarizer:
    """'command:CMD', 'anthropic:MODEL' or 'openai:MODEL'."""
    kind, sep, rest = spec.partition(":")
    if not sep or not rest.strip():
        raise BadArgument(f"summarizer {spec!r} is not 'command:CMD', 'anthropic:MODEL' or "
                         "'openai:MODEL'")
    if kind == "command":
        return CommandSummarizer(rest, timeout)
    if kind == "anthropic":
        return AnthropicSummarizer(rest.strip(), timeout)
    if kind == "openai":
        return OpenAISummarizer(rest.strip(), timeout)
    raise BadArgument(f"unknown summarizer kind {kind!r}: use command, anthropic or openai")
