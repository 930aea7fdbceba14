"""pydantic-ai end to end: a real Agent whose FunctionModel records what it receives."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    BinaryImage,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from sessionctx.adapters.pydantic_ai import SessionctxHistory, history_capability
from sessionctx.changes import Change, ChangeKind
from sessionctx.screenshots import OMITTED_NOTE

PNG = BinaryImage(data=b"\x89PNG\r\n\x1a\n" + b"0" * 16, media_type="image/png")


class Recorder:
    def __init__(self, *responses: ModelResponse) -> None:
        self.requests: list[list[ModelMessage]] = []
        self.responses = list(responses)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        return self.responses.pop(0) if self.responses else ModelResponse(
            parts=[TextPart("done")])


def _parts(messages: list[ModelMessage]) -> list[Any]:
    return [part for m in messages for part in m.parts]


def _interrupted_history() -> list[ModelMessage]:
    thinking = ThinkingPart("plan", signature="sig-1", provider_name="anthropic",
                            provider_details={"redacted": False})
    return [
        ModelRequest(parts=[UserPromptPart("deploy it")]),
        ModelResponse(parts=[thinking, TextPart("deploying"),
                             ToolCallPart("deploy", {"env": "prod"}, tool_call_id="call_1")],
                      provider_name="anthropic"),
        # the process died here: no return for call_1 was ever recorded; the user came back
        ModelRequest(parts=[UserPromptPart("did it deploy?")]),
        ModelResponse(parts=[TextPart("I cannot tell yet.")]),
    ]


def test_the_model_gets_no_invented_result_and_the_call_is_reported_pending() -> None:
    recorder = Recorder()
    got: list[Change] = []
    agent = Agent(FunctionModel(recorder),
                  capabilities=[history_capability(on_changes=got.extend)])
    history = _interrupted_history()
    without = Agent(FunctionModel(Recorder()))
    plain = without.run_sync("status?", message_history=history).all_messages()
    invented = [p for p in _parts(plain) if isinstance(p, ToolReturnPart)]
    assert invented and invented[0].outcome == "interrupted"  # what pydantic-ai does alone

    agent.run_sync("status?", message_history=history)
    sent = recorder.requests[0]
    parts = _parts(sent)
    assert not [p for p in parts if isinstance(p, ToolReturnPart | ToolCallPart)]
    assert sent[0] is history[0]
    response = sent[1]
    assert isinstance(response, ModelResponse)
    thinking = response.parts[0]
    assert isinstance(thinking, ThinkingPart)
    assert thinking is history[1].parts[0]
    assert (thinking.signature, thinking.provider_details) == ("sig-1", {"redacted": False})
    kinds = [c.kind for c in got]
    assert ChangeKind.DROPPED_UNPAIRED_CALL in kinds and ChangeKind.DROPPED_INVENTED_RESULT in kinds
    pending = [c for c in got if c.kind == ChangeKind.DROPPED_UNPAIRED_CALL]
    assert pending[0].detail["tool_call_id"] == "call_1"


def test_an_intact_history_reaches_the_model_as_the_same_objects() -> None:
    recorder = Recorder()
    processor = SessionctxHistory()
    got: list[list[ModelMessage]] = []

    def spy(messages: list[ModelMessage]) -> list[ModelMessage]:
        out = processor.process(messages)
        got.append(out)
        return out

    agent = Agent(FunctionModel(recorder), capabilities=[ProcessHistory(spy)])
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("hi")]),
        ModelResponse(parts=[ToolCallPart("ls", {}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("ls", "a b", tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("two files")]),
    ]
    agent.run_sync("more", message_history=history)
    assert all(a is b for a, b in zip(got[0], history, strict=False))
    assert len(got[0]) == 5


def test_older_browser_screenshots_become_a_note_across_a_real_tool_loop() -> None:
    recorder = Recorder(
        ModelResponse(parts=[ToolCallPart("browser_use", {"step": 1}, tool_call_id="b1")]),
        ModelResponse(parts=[ToolCallPart("browser_use", {"step": 2}, tool_call_id="b2")]),
    )
    agent = Agent(FunctionModel(recorder), capabilities=[history_capability()])

    @agent.tool_plain
    def browser_use(step: int) -> list[Any]:
        return [f"page after step {step}", PNG]

    agent.run_sync("browse")
    assert len(recorder.requests) == 3
    last = [p for p in _parts(recorder.requests[2]) if isinstance(p, ToolReturnPart)]
    assert [p.tool_call_id for p in last] == ["b1", "b2"]
    assert last[0].content == ["page after step 1", OMITTED_NOTE]
    assert last[1].content == ["page after step 2", PNG]


def test_nothing_before_the_latest_compaction_is_sent_and_its_orphans_go() -> None:
    recorder = Recorder()
    got: list[Change] = []
    agent = Agent(FunctionModel(recorder),
                  capabilities=[history_capability(on_changes=got.extend)])
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("old task")]),
        ModelResponse(parts=[ToolCallPart("grep", {}, tool_call_id="old_call")]),
        ModelRequest(parts=[CompactionPart("we grepped the repo"),
                            UserPromptPart("continue")]),
        ModelResponse(parts=[TextPart("ok")]),
        ModelRequest(parts=[ToolReturnPart("grep", "late result", tool_call_id="old_call"),
                            UserPromptPart("and now?")]),
        ModelResponse(parts=[TextPart("fine")]),
    ]
    agent.run_sync("next", message_history=history)
    parts = _parts(recorder.requests[0])
    texts = [p.content for p in parts if isinstance(p, UserPromptPart)]
    assert "old task" not in texts and "continue" in texts and "and now?" in texts
    assert not [p for p in parts if isinstance(p, ToolReturnPart | ToolCallPart)]
    kinds = [c.kind for c in got]
    assert ChangeKind.CHECKPOINT_APPLIED in kinds and ChangeKind.DROPPED_ORPHAN_RESULT in kinds
