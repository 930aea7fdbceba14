"""The program's JSON output, written in pieces, and its exit once the output is out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.cli.app import _BATCH, json_pieces

_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)
_scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(
    allow_nan=False, allow_infinity=False) | _text
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    _text, inner, max_size=4), max_leaves=12)
# top-level objects whose lists are long enough to be written a few batches of 3 at a time
_documents = st.dictionaries(_text, _values | st.lists(_values, max_size=10), max_size=4)


def joined(obj: Any, batch: int = _BATCH) -> bytes:
    return b"".join(json_pieces(obj, batch))


@settings(max_examples=200, deadline=None)
@given(_documents)
def test_pieces_join_to_the_document_encoded_whole(document: dict[str, Any]) -> None:
    assert joined(document, batch=3) == msgspec.json.encode(document)


@given(_values)
def test_any_value_is_written_as_one_piece_when_it_is_not_an_object(value: Any) -> None:
    assert joined(value) == msgspec.json.encode(value)


def test_a_lone_surrogate_in_a_later_batch_keeps_the_output_valid_json() -> None:
    messages: list[Any] = [{"role": "user", "content": f"m{i}"} for i in range(_BATCH * 3)]
    messages[_BATCH * 2 + 5] = {"role": "user", "content": "bad \ud800 text"}
    out = json.loads(joined({"messages": messages, "changes": []}))
    assert len(out["messages"]) == _BATCH * 3
    assert out["messages"][_BATCH * 2 + 5]["content"] == "bad \ufffd text"
    assert out["messages"][_BATCH * 2 + 6] == messages[_BATCH * 2 + 6]


def test_keys_that_are_not_text_are_encoded_as_msgspec_encodes_them() -> None:
    assert joined({1: [0] * (_BATCH + 1)}) == msgspec.json.encode({1: [0] * (_BATCH + 1)})


def _session(path: Path, n: int) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"role": "user", "content": f"question {i}"}) + "\n")
            f.write(json.dumps({"role": "assistant", "content": [
                {"type": "text", "text": f"answer {i}"}]}) + "\n")
    return path


def test_the_program_writes_every_message_of_a_long_session_then_exits(tmp_path: Path) -> None:
    # a real process: run() ends it with os._exit once the output is flushed
    session = _session(tmp_path / "s.jsonl", _BATCH * 3)
    done = subprocess.run([sys.executable, "-m", "sessionctx", "build", str(session), "--json"],
                          capture_output=True, check=True)
    out = json.loads(done.stdout)
    assert len(out["messages"]) == _BATCH * 6
    assert out["messages"][-1]["content"][0]["text"] == f"answer {_BATCH * 3 - 1}"
    pretty = subprocess.run([sys.executable, "-m", "sessionctx", "build", str(session),
                             "--json", "--pretty"], capture_output=True, check=True).stdout
    assert json.loads(pretty) == out


def test_exit_codes_and_messages_survive_the_fast_exit(tmp_path: Path) -> None:
    missing = subprocess.run([sys.executable, "-m", "sessionctx", "build",
                              str(tmp_path / "none.jsonl")], capture_output=True, text=True)
    assert missing.returncode == 2
    assert "no such file" in missing.stderr
    session = _session(tmp_path / "s.jsonl", 3)
    check = subprocess.run([sys.executable, "-m", "sessionctx", "check", str(session)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip()  # buffered text is flushed before the process ends


def test_output_cut_short_by_a_closed_pipe_is_an_error_exit(tmp_path: Path) -> None:
    session = _session(tmp_path / "s.jsonl", _BATCH * 40)
    proc = subprocess.Popen([sys.executable, "-m", "sessionctx", "build", str(session),
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.read(10)
    proc.stdout.close()  # the reader goes away, as `| head -c 10` would
    proc.wait(timeout=60)
    assert proc.returncode != 0
