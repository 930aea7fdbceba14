"""Summarizers: anything that turns a prompt into a summary, behind one small protocol.

Built in: any command (prompt on stdin, summary on stdout, bounded by a timeout) and a provider
model through its official SDK (Anthropic, OpenAI), imported only when used, with the key from
the environment. Every failure is a SummarizerError that says what went wrong.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from dataclasses import dataclass
from typing import Any, Protocol

from sessionctx.compaction.prompt import SYSTEM
from sessionctx.errors import BadArgument, CompactionError

DEFAULT_TIMEOUT = 180.0
DEFAULT_MAX_TOKENS = 8000


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
            out, err = proc.communicate(prompt.encode(), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            raise SummarizerError(f"summarizer {argv[0]!r} did not finish within "
                                  f"{self.timeout:g}s and was stopped") from None
        if proc.returncode != 0:
            tail = err.decode(errors="replace").strip()[-500:]
            raise SummarizerError(f"summarizer {argv[0]!r} exited with status "
                                  f"{proc.returncode}" + (f": {tail}" if tail else ""))
        return _non_empty(out.decode(errors="replace"), f"summarizer {argv[0]!r}")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


@dataclass(frozen=True, slots=True)
class AnthropicSummarizer:
    model: str
    timeout: float = DEFAULT_TIMEOUT
    max_tokens: int = DEFAULT_MAX_TOKENS

    @property
    def ref(self) -> str:
        return f"anthropic:{self.model}"

    def summarize(self, prompt: str) -> str:
        try:
            import anthropic
        except ImportError as exc:
            raise SummarizerError("the anthropic summarizer needs the 'anthropic' extra") from exc
        key = _env("ANTHROPIC_API_KEY")
        if key is None:
            raise SummarizerError("ANTHROPIC_API_KEY is not set")
        client = anthropic.Anthropic(api_key=key, timeout=self.timeout, max_retries=1,
                                     base_url=_env("SESSIONCTX_ANTHROPIC_BASE_URL",
                                                   "ANTHROPIC_BASE_URL"))
        try:
            response = client.messages.create(
                model=self.model, max_tokens=self.max_tokens, system=SYSTEM,
                messages=[{"role": "user", "content": prompt}])
        except anthropic.APIError as exc:
            raise SummarizerError(f"{self.ref} failed: {exc}") from exc
        if response.stop_reason == "max_tokens":
            raise SummarizerError(f"{self.ref} stopped at the output limit; summary incomplete")
        text = "".join(getattr(b, "text", "") for b in response.content
                       if getattr(b, "type", None) == "text")
        return _non_empty(text, self.ref)


@dataclass(frozen=True, slots=True)
class OpenAISummarizer:
    model: str
    timeout: float = DEFAULT_TIMEOUT
    max_tokens: int = DEFAULT_MAX_TOKENS

    @property
    def ref(self) -> str:
        return f"openai:{self.model}"

    def summarize(self, prompt: str) -> str:
        try:
            import openai
        except ImportError as exc:
            raise SummarizerError("the openai summarizer needs the 'openai' extra") from exc
        key = _env("OPENAI_API_KEY")
        if key is None:
            raise SummarizerError("OPENAI_API_KEY is not set")
        client = openai.OpenAI(api_key=key, timeout=self.timeout, max_retries=1,
                               base_url=_env("SESSIONCTX_OPENAI_BASE_URL", "OPENAI_BASE_URL"))
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
        if choice.finish_reason == "length":
            raise SummarizerError(f"{self.ref} stopped at the output limit; summary incomplete")
        return _non_empty(choice.message.content, self.ref)


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
