"""Documents stored in records (native, Anthropic, OpenAI file shapes) sent as each provider
takes them, within its limits; each test names the API error it prevents."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.providers import PROVIDERS, BuildRequestOptions, build_request, documents, validate
from tests.conftest import assistant, call, recs, text, user
from tests.sdk_types import sdk_check


def pdf(pages: int = 1) -> str:
    objects = "".join(f"{n + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj\n"
                      for n in range(pages))
    raw = f"%PDF-1.4\n2 0 obj << /Type /Pages /Count {pages} >> endobj\n{objects}%%EOF\n"
    return base64.b64encode(raw.encode()).decode()


def stored_pdf(pages: int = 1, title: str = "report.pdf") -> dict[str, Any]:
    """A document block as Claude Code stores it."""
    return {"type": "document", "title": title,
            "source": {"type": "base64", "media_type": "application/pdf", "data": pdf(pages)}}


NOTES = {"type": "document", "text": "meeting notes: ship friday", "mimeType": "text/plain",
         "name": "notes.txt"}
HISTORY = (user("summarize", content=[text("summarize this"), stored_pdf()]),
           assistant(call("c1", "read", path="notes.txt")),
           {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [text("read it"), NOTES], "isError": False},
           assistant(text("done")), user("thanks"))


def build(provider: str, *messages: dict[str, Any], model: str | None = None) -> Any:
    req = build_request(build_context(recs(*messages)), provider, model,
                        options=BuildRequestOptions(placeholder_tools=True))
    assert validate(req.body, provider, model) == [], req.body
    sdk_check(provider, req.body)
    return req


def test_every_stored_shape_reads_as_one_native_document() -> None:
    data = pdf()
    native = {"type": "document", "data": data, "mimeType": "application/pdf",
              "name": "report.pdf"}
    shapes = [stored_pdf(), native,
              {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{data}",
                                        "filename": "report.pdf"}},
              {"type": "input_file", "file_data": f"data:application/pdf;base64,{data}",
               "filename": "report.pdf"}]
    for shape in shapes:
        assert documents.read(shape) == native, shape
    text_doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                                "data": "hi"}}
    assert documents.read(text_doc) == {"type": "document", "text": "hi",
                                        "mimeType": "text/plain"}
    url_doc = {"type": "document", "source": {"type": "url", "url": "https://x/a.pdf"}}
    assert documents.read(url_doc) is None
    assert documents.pages(base64.b64decode(pdf(3))) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_documents_go_out_as_each_provider_takes_them(provider: str) -> None:
    body = json.dumps(build(provider, *HISTORY).body)
    assert "ship friday" in body
    expected = {"anthropic": '"type": "document"', "openai-chat": '"type": "file"',
                "openai-responses": '"type": "input_file"',
                "gemini": '"mimeType": "application/pdf"', "bedrock": '"format": "pdf"'}
    assert expected[provider] in body
    assert pdf() in body


def test_chat_moves_a_results_pdf_into_the_following_user_message() -> None:
    # prevents: a file part in a tool message (tool content is text only)
    history = (user("go"), assistant(call("c1", "read")),
               {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                "content": [stored_pdf()], "isError": False}, assistant(text("ok")),
               user("next"))
    messages = build("openai-chat", *history).body["messages"]
    assert messages[2]["role"] == "tool" and isinstance(messages[2]["content"], str)
    assert messages[3]["role"] == "user"
    assert messages[3]["content"][1]["type"] == "file"
    assert messages[3]["content"][1]["file"]["filename"] == "report.pdf"


def test_anthropic_keeps_pdf_pages_within_100() -> None:
    # prevents Anthropic's PDF limit: "100 pages" per request
    history = (user("a", content=[text("first"), stored_pdf(60, "a.pdf")]),
               assistant(text("ok")),
               user("b", content=[text("second"), stored_pdf(60, "b.pdf")]))
    req = build("anthropic", *history)
    body = json.dumps(req.body)
    assert "[document omitted: a.pdf would take the request over anthropic's limit of 100 " \
           "PDF pages" in body
    assert pdf(60) in body  # the later one stays
    assert documents.DOCUMENT_OMITTED in [c.kind for c in req.changes]


def test_bedrock_keeps_five_documents_of_at_most_4_5_mb() -> None:
    # prevents Bedrock's "Up to five documents ... no more than 4.5 MB"
    docs = [stored_pdf(1, f"d{i}.pdf") for i in range(6)]
    big = {"type": "document", "data": base64.b64encode(b"%PDF" + b"0" * 4_600_000).decode(),
           "mimeType": "application/pdf", "name": "big.pdf"}
    req = build("bedrock", user("x", content=[text("read these"), *docs, big]))
    body = json.dumps(req.body)
    assert "big.pdf is 4600004 bytes, over bedrock's limit" in body
    assert "d0.pdf is over bedrock's limit of 5 documents" in body
    assert body.count('"format": "pdf"') == 5
    too_many = {"messages": [{"role": "user", "content": [{"text": "x"}, *[
        {"document": {"format": "pdf", "name": f"d{i}", "source": {"bytes": pdf()}}}
        for i in range(6)]]}]}
    assert "up to 5 documents" in " ".join(v.message for v in validate(too_many, "bedrock"))


def test_bedrock_adds_a_text_block_beside_a_lone_document() -> None:
    # prevents: "If you include a ContentBlock with a document field in the array, you must
    # also include a ContentBlock with a text field."
    req = build("bedrock", user("x", content=[stored_pdf(1, "q3 report (final).pdf")]))
    content = req.body["messages"][0]["content"]
    assert content[0]["document"]["name"] == "q3 report (final)"
    assert content[1] == {"text": "[attached: q3 report (final)]"}
    lone = {"messages": [{"role": "user", "content": [content[0]]}]}
    assert "must also include a ContentBlock with a text field" in \
        validate(lone, "bedrock")[0].message
    bad_name = {"messages": [{"role": "user", "content": [
        {"text": "x"}, {"document": {"format": "pdf", "name": "a.pdf",
                                     "source": {"bytes": pdf()}}}]}]}
    assert "The document name can only contain" in validate(bad_name, "bedrock")[0].message


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unreadable_and_assistant_documents_become_notes(provider: str) -> None:
    broken = {"type": "document", "data": "%%% not base64", "mimeType": "application/pdf",
              "name": "broken.pdf"}
    history = (user("x", content=[text("see"), broken]),
               assistant(text("a doc"), stored_pdf(1, "mine.pdf")), user("y"))
    req = build(provider, *history)
    body = json.dumps(req.body)
    assert "broken.pdf has data that is not valid base64" in body
    assert "mine.pdf is in an assistant message" in body
    assert [c.kind for c in req.changes].count(documents.DOCUMENT_OMITTED) == 2


def test_claude_code_and_codex_documents_reach_the_body(tmp_path: Any) -> None:
    from sessionctx.inputs import read_input
    doc = stored_pdf(2, "spec.pdf")
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": [{"type": "text", "text": "read spec"}, doc]}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read",
                                  "input": {"file_path": "/tmp/spec.pdf"}}]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": "s",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": [doc]}]},
         "toolUseResult": {"type": "pdf", "file": {"filePath": "/tmp/spec.pdf"}}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "u2", "sessionId": "s",
         "message": {"id": "m2", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "text", "text": "read"}]}}]
    path = tmp_path / "claude.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    loaded = read_input(str(path), "claude-code")
    assert not loaded.problems
    req = build_request(build_context(loaded.records), "anthropic",
                        options=BuildRequestOptions(placeholder_tools=True))
    assert validate(req.body, "anthropic") == []
    assert json.dumps(req.body).count('"type": "document"') == 2
    data = pdf()
    rollout = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "s", "cwd": "/"}},
        {"timestamp": "t", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "see"},
                {"type": "input_file", "filename": "a.pdf",
                 "file_data": f"data:application/pdf;base64,{data}"}]}}]
    codex = tmp_path / "rollout.jsonl"
    codex.write_text("".join(json.dumps(line) + "\n" for line in rollout))
    loaded = read_input(str(codex), "codex")
    body = build_request(build_context(loaded.records), "gemini").body
    assert body["contents"][0]["parts"][1] == {"inlineData": {"mimeType": "application/pdf",
                                                              "data": data}}
