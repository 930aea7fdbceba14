"""The strict stub refuses each broken history shape with the API's own error and accepts valid
ones; its streams parse with the official clients; it records every request."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.strict_stub import serve


def post(url: str, body: Any, raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"content-type": "application/json", "x-t": "1"})
    try:
        with urllib.request.urlopen(request) as answer:
            text = answer.read().decode()
            return answer.status, (json.loads(text) if text.startswith(("{", "[")) else text)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def use(cid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": "Bash", "input": {}}


def res(cid: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": cid, "content": "ok"}


def txt(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def msgs(*pairs: tuple[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"model": "claude-x", "max_tokens": 8,
            "messages": [{"role": r, "content": c} for r, c in pairs]}


ANTHROPIC_REFUSED = {
    "unanswered at end": (msgs(("user", [txt("a")]), ("assistant", [use("toolu_1")])),
                          "messages.1: `tool_use` ids were found without `tool_result` blocks "
                          "immediately after: toolu_1"),
    "unanswered mid": (msgs(("user", [txt("a")]), ("assistant", [use("toolu_1")]),
                            ("user", [txt("b")]), ("assistant", [txt("c")]),
                            ("user", [txt("d")])),
                       "messages.1: `tool_use` ids were found without"),
    "text before result": (msgs(("user", [txt("a")]), ("assistant", [use("toolu_1")]),
                                ("user", [txt("b"), res("toolu_1")])),
                           "messages.1: `tool_use` ids were found without"),
    "orphan result": (msgs(("user", [txt("a")]), ("assistant", [txt("b")]),
                           ("user", [res("toolu_9"), txt("c")])),
                      "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` "
                      "blocks: toolu_9"),
    "result twice": (msgs(("user", [txt("a")]), ("assistant", [use("toolu_1")]),
                          ("user", [res("toolu_1"), res("toolu_1")])),
                     "each tool_use must have a single result"),
    "id twice": (msgs(("user", [txt("a")]), ("assistant", [use("toolu_1")]),
                      ("user", [res("toolu_1")]), ("assistant", [use("toolu_1")]),
                      ("user", [res("toolu_1")])),
                 "`tool_use` ids must be unique"),
    "result split across turns": (msgs(("user", [txt("a")]),
                                       ("assistant", [use("toolu_1"), use("toolu_2")]),
                                       ("user", [res("toolu_1")]), ("assistant", [txt("x")]),
                                       ("user", [res("toolu_2")])),
                                  "toolu_2"),
    "empty user": (msgs(("user", [])), "user messages must have non-empty content"),
    "thinking unsigned": (msgs(("user", [txt("a")]),
                               ("assistant", [{"type": "thinking", "thinking": "t"}, txt("b")]),
                               ("user", [txt("c")])), "thinking.signature: Field required"),
}


@pytest.mark.parametrize("name", sorted(ANTHROPIC_REFUSED))
def test_anthropic_refuses(name: str) -> None:
    body, message = ANTHROPIC_REFUSED[name]
    with serve() as stub:
        status, answer = post(f"{stub.url}/v1/messages?beta=true", body)
    assert status == 400
    assert answer["type"] == "error"
    assert answer["error"]["type"] == "invalid_request_error"
    assert message in answer["error"]["message"]
    assert stub.refused() and stub.refused()[0]["problem"] == answer["error"]["message"]


ANTHROPIC_ACCEPTED = {
    "plain": msgs(("user", [txt("a")])),
    "pair": msgs(("user", [txt("a")]), ("assistant", [txt("t"), use("toolu_1")]),
                 ("user", [res("toolu_1"), txt("after")])),
    # Consecutive turns of one role are combined by the API, and a system message between
    # a call and its result is not a turn of its own.
    "results over two user messages": msgs(("user", [txt("a")]),
                                           ("assistant", [use("toolu_1"), use("toolu_2")]),
                                           ("user", [res("toolu_1")]),
                                           ("user", [res("toolu_2")])),
    "system between": msgs(("user", [txt("a")]), ("system", [txt("env")]),
                           ("assistant", [use("toolu_1")]), ("user", [res("toolu_1")])),
    "string content": {"model": "m", "max_tokens": 8,
                       "messages": [{"role": "user", "content": "hi"}]},
}


@pytest.mark.parametrize("name", sorted(ANTHROPIC_ACCEPTED))
def test_anthropic_accepts(name: str) -> None:
    with serve() as stub:
        status, answer = post(f"{stub.url}/v1/messages", ANTHROPIC_ACCEPTED[name])
        counted = post(f"{stub.url}/v1/messages/count_tokens", ANTHROPIC_ACCEPTED[name])
    assert status == 200, answer
    assert answer["content"][0]["text"] == "answer 1"
    assert counted[0] == 200 and counted[1]["input_tokens"] > 0
    assert not stub.refused()


def fc(cid: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": cid, "name": "shell", "arguments": "{}"}


def fco(cid: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": cid, "output": "ok"}


def user_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


RESPONSES = {
    "unanswered": ([user_item("a"), fc("call_x")],
                   "No tool output found for function call call_x."),
    "orphan output": ([user_item("a"), fco("call_y")],
                      "No tool call found for function call output with call_id call_y."),
    "lone reasoning": ([user_item("a"), {"type": "reasoning", "id": "rs_1", "summary": []},
                        user_item("b")],
                       "Item 'rs_1' of type 'reasoning' was provided without its required "
                       "following item."),
    "valid": ([user_item("a"), {"type": "reasoning", "id": "rs_1", "summary": []}, fc("call_x"),
               fco("call_x"), user_item("b")], None),
}


@pytest.mark.parametrize("name", sorted(RESPONSES))
def test_responses(name: str) -> None:
    items, message = RESPONSES[name]
    with serve() as stub:
        status, answer = post(f"{stub.url}/v1/responses", {"model": "m", "input": items})
    if message is None:
        assert status == 200 and answer["output"][0]["type"] == "message"
    else:
        assert status == 400 and answer["error"]["message"] == message


CHAT = {
    "unanswered": ([{"role": "user", "content": "a"},
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "f", "arguments": "{}"}}]},
                    {"role": "user", "content": "b"}],
                   "An assistant message with 'tool_calls' must be followed by tool messages"),
    "orphan": ([{"role": "user", "content": "a"},
                {"role": "tool", "tool_call_id": "call_2", "content": "x"}],
               "messages with role 'tool' must be a response to a preceeding message"),
    "valid": ([{"role": "user", "content": "a"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_1", "type": "function",
                    "function": {"name": "f", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "call_1", "content": "x"}], None),
}


@pytest.mark.parametrize("name", sorted(CHAT))
def test_chat(name: str) -> None:
    messages, message = CHAT[name]
    with serve() as stub:
        status, answer = post(f"{stub.url}/v1/chat/completions",
                              {"model": "m", "messages": messages})
    if message is None:
        assert status == 200 and answer["choices"][0]["message"]["content"] == "answer 1"
    else:
        assert status == 400 and message in answer["error"]["message"]


def part_call() -> dict[str, Any]:
    return {"functionCall": {"name": "f", "args": {}}}


def part_response() -> dict[str, Any]:
    return {"functionResponse": {"name": "f", "response": {"ok": 1}}}


GEMINI = {
    "call first": ([{"role": "model", "parts": [part_call()]}],
                   "function call turn comes immediately after a user turn"),
    "response without call": ([{"role": "user", "parts": [{"text": "a"}]},
                               {"role": "user", "parts": [part_response()]}],
                              "function response turn comes immediately after a function call"),
    "count": ([{"role": "user", "parts": [{"text": "a"}]},
               {"role": "model", "parts": [part_call(), part_call()]},
               {"role": "user", "parts": [part_response()]}],
              "the number of function response parts is equal"),
    "call not answered": ([{"role": "user", "parts": [{"text": "a"}]},
                           {"role": "model", "parts": [part_call()]},
                           {"role": "user", "parts": [{"text": "b"}]}],
                          "function response turn comes immediately after a function call"),
    "bad role": ([{"role": "assistant", "parts": [{"text": "a"}]}], "valid role: user, model"),
    "valid": ([{"role": "user", "parts": [{"text": "a"}]},
               {"role": "model", "parts": [part_call()]},
               {"role": "user", "parts": [part_response()]}], None),
}


@pytest.mark.parametrize("name", sorted(GEMINI))
def test_gemini(name: str) -> None:
    contents, message = GEMINI[name]
    with serve() as stub:
        status, answer = post(f"{stub.url}/v1beta/models/gemini-x:generateContent",
                              {"contents": contents})
    if message is None:
        assert status == 200 and answer["candidates"][0]["content"]["parts"][0]["text"]
    else:
        assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT"
        assert message in answer["error"]["message"]


def test_records_headers_raw_and_body_and_unknown_routes() -> None:
    with serve() as stub:
        post(f"{stub.url}/v1/messages", msgs(("user", [txt("a")])))
        assert post(f"{stub.url}/v1/nothing", {})[0] == 404
        assert post(f"{stub.url}/v1/messages", None, raw=b"not json")[0] == 400
    first = stub.requests[0]
    assert first["headers"]["x-t"] == "1"
    assert json.loads(first["raw"]) == first["body"]
    assert first["status"] == 200 and first["problem"] is None
    assert stub.requests[2]["problem"] == "the request body is not a JSON object"


def test_anthropic_stream_with_scripted_tool_call_parses_with_the_sdk() -> None:
    anthropic = pytest.importorskip("anthropic")
    script = [{"calls": [{"name": "Bash", "input": {"command": "ls"}}], "text": "let me look"}]
    with serve(script) as stub:
        client = anthropic.Anthropic(api_key="k", base_url=stub.url, max_retries=0)
        with client.messages.stream(model="m", max_tokens=8,
                                    messages=[{"role": "user", "content": "hi"}]) as stream:
            message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    assert message.content[0].type == "text" and message.content[0].text == "let me look"
    assert message.content[1].type == "tool_use" and message.content[1].input == {"command": "ls"}


def test_responses_and_chat_streams_parse_with_the_sdk() -> None:
    openai = pytest.importorskip("openai")
    call = {"name": "shell", "input": {"cmd": "ls"}, "id": "call_7"}
    script: list[dict[str, Any]] = [{"calls": [call]}, {"text": "streamed"}]
    with serve(script) as stub:
        client = openai.OpenAI(api_key="k", base_url=f"{stub.url}/v1", max_retries=0)
        with client.responses.stream(model="m", input="hi") as stream:
            final = stream.get_final_response()
        chunks = list(client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True))
    assert final.output[0].type == "function_call" and final.output[0].call_id == "call_7"
    assert chunks[0].choices[0].delta.content == "streamed"


def test_gemini_stream_parses_with_the_sdk() -> None:
    genai = pytest.importorskip("google.genai")
    with serve([{"text": "from gemini"}]) as stub:
        client = genai.Client(api_key="k", http_options={"base_url": stub.url})
        parts = list(client.models.generate_content_stream(model="gemini-x", contents="hi"))
    assert parts[0].text == "from gemini"
    assert stub.requests[0]["kind"] == "gemini_stream"


def test_scripted_error() -> None:
    error: dict[str, Any] = {"type": "error",
                             "error": {"type": "overloaded_error", "message": "busy"}}
    with serve([{"status": 529, "body": error}]) as s:
        status, answer = post(f"{s.url}/v1/messages", msgs(("user", [txt("a")])))
    assert status == 529 and answer["error"]["type"] == "overloaded_error"


def test_a_scripted_message_comes_in_the_apis_error_body() -> None:
    with serve([{"status": 400, "message": "max_tokens: too large"}]) as s:
        status, answer = post(f"{s.url}/v1/responses", {"model": "m", "input": "hi"})
    assert status == 400 and answer["error"] == {
        "message": "max_tokens: too large", "type": "invalid_request_error", "param": "input",
        "code": None}


def test_faults_a_delay_a_client_gone_and_a_cut_stream() -> None:
    import http.client
    import socket
    import time

    body = json.dumps({**msgs(("user", [txt("a")])), "stream": True}).encode()
    with serve([{"delay": 0.5}, {"delay": 0.5}, {"cut": True}, {}]) as s:
        host, port = s.url.removeprefix("http://").split(":")
        started = time.monotonic()
        assert post(f"{s.url}/v1/messages", None, raw=body)[0] == 200
        assert time.monotonic() - started >= 0.5 and s.gone == 0
        with socket.create_connection((host, int(port))) as gone:  # leaves while it waits
            gone.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n"
                         + f"content-length: {len(body)}\r\n\r\n".encode() + body)
            time.sleep(0.1)
        time.sleep(0.8)
        assert s.gone == 1
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("POST", "/v1/messages", body=body)
        answer = conn.getresponse()
        with pytest.raises((http.client.IncompleteRead, ConnectionError)):
            answer.read()
        conn.close()
        status, text = post(f"{s.url}/v1/messages", None, raw=body)
    assert status == 200 and text.encode() == s.answers[-1]
    assert s.raw() == body and len(s.requests) == 4


def test_a_matching_entry_waits_for_its_request_and_gemini_calls_may_have_no_id() -> None:
    """An agent's side request (a title, a summary) gets the plain answer and leaves the
    entry meant for its own turn, which names text its request holds."""
    gemini = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    script = [{"calls": [{"name": "read_file", "input": {"file_path": "a"}, "id": None}],
               "match": "streamGenerateContent"}]
    with serve(script) as stub:
        _, side = post(f"{stub.url}/v1beta/models/m:generateContent", gemini)
        _, turn = post(f"{stub.url}/v1beta/models/m:streamGenerateContent", gemini)
    assert side["candidates"][0]["content"]["parts"] == [{"text": "answer 1"}]
    assert turn[0]["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "read_file", "args": {"file_path": "a"}}}]
