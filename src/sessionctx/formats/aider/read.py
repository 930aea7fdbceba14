"""An aider `.aider.chat.history.md` read as native records, split as aider's own
`--restore-chat-history` splits it (`utils.split_chat_history_markdown`).

aider appends to the file as it goes (`io.py`): `# aider chat started at …` opens each run,
each line the user typed is `#### line`, every tool message (announcements, `Applied edit to
…`, confirmations, `^C KeyboardInterrupt`) is a `> line` blockquote, and the model's reply is
the plain lines between. A run of `#### ` lines is a user message and a run of plain lines an
assistant message, as aider reads them back; a run of `> ` lines (which aider's restore leaves
out) is kept as user text, as it is what the user saw the tools say. `/model NAME`, and the
`Main model:` line aider prints when it starts, set the model of the replies after them and
are context rows; the `# ` lines are context rows. The file holds no tool calls.
"""

from __future__ import annotations

import re
from typing import Any

from sessionctx.changes import Source
from sessionctx.formats.aider.detect import HEADER
from sessionctx.formats.aider.detect import text as is_aider
from sessionctx.formats.common import (
    context_record,
    finish,
    message_record,
    not_a_file,
    text_block,
)
from sessionctx.records import Progress, ReadResult

FORMAT = "aider"
EXPECTED = ("an aider .aider.chat.history.md: '# aider chat started at' runs of '#### ' user "
            "lines, '> ' tool lines and the model's replies")
_MAIN_MODEL = re.compile(r"^(?:Main model|Models?): (\S+)")
_MODEL_COMMAND = re.compile(r"^/model\s+(\S+)\s*$")


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    if document is not None or not is_aider(raw):
        return not_a_file(path, FORMAT, EXPECTED)
    text = raw.decode("utf-8", "replace").removeprefix("\ufeff")
    reader = _Reader(path)
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        reader.line(n, line)
    reader.flush()
    return finish(reader.result, path, FORMAT)


class _Reader:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self.result = ReadResult()
        self.model = ""
        self.role: str | None = None  # user, assistant or tool: the run being read
        self.lines: list[str] = []
        self.start = 0

    def line(self, n: int, line: str) -> None:
        if line.startswith("# "):  # skipped where it stands, as aider's own split does
            self.result.records.append(context_record(
                {"line": line.rstrip("\n")}, Source(line=n, path=self.path), FORMAT,
                "aider's run header" if line.startswith(HEADER) else "a heading line"))
            return
        role = "tool" if line.startswith("> ") else "user" if line.startswith("#### ") else (
            "assistant")
        if role != self.role:
            self.flush()
            self.role, self.start = role, n
        self.lines.append(line[2:] if role == "tool" else line[5:] if role == "user" else line)

    def flush(self) -> None:
        role, lines, self.role, self.lines = self.role, self.lines, None, []
        body = "".join(lines)
        if role is None or not body.strip():
            return
        src = Source(line=self.start, path=self.path)
        raw = {"lines": [self.start, self.start + len(lines) - 1], "text": body}
        if role == "user" and all(_MODEL_COMMAND.match(x.strip()) or not x.strip()
                                  for x in lines):
            self.model = next(m.group(1) for x in lines if (m := _MODEL_COMMAND.match(
                x.strip())))
            self.result.records.append(context_record(raw, src, FORMAT, "a model switch"))
            return
        if role == "tool":
            for x in lines:
                found = _MAIN_MODEL.match(x.strip())
                if found:
                    self.model = found.group(1)
        if role == "assistant":
            message = {"role": "assistant", "content": [text_block(body.strip("\n"))],
                       "api": FORMAT, "provider": FORMAT, "model": self.model,
                       "stopReason": "stop"}
        else:
            text = _unbreak(body)
            message = {"role": "user", "content": [text_block(text)]}
        self.result.records.append(message_record(message, src, raw, FORMAT))


def _unbreak(body: str) -> str:
    """The lines without the markdown line breaks aider ends each with."""
    return "\n".join(x.rstrip("\n").removesuffix("  ") for x in body.splitlines(True)).strip(
        "\n")
