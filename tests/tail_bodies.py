"""Generated OpenAI Chat, OpenAI Responses and Gemini bodies, mostly valid, and the same
conversations resent with turns more (maybe broken), for the tail check's property test
(tests/test_wire_tail.py). Each fault the generators can make comes with a small chance."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

FAULT = 0.03


def _bad(rng: random.Random) -> bool:
    return rng.random() < FAULT


def _copy(items: list[Any]) -> list[Any]:
    return [json.loads(json.dumps(m)) for m in items]


def _cut(rng: random.Random, items: list[Any]) -> list[Any]:
    """The items as agents resend them: the same or fewer."""
    cut = len(items) - rng.choice([0, 0, 0, 1, 2, rng.randint(0, len(items))])
    return _copy(items)[:max(cut, 1)]


def _cid(rng: random.Random, used: list[str], prefix: str) -> str:
    """A new call id, or at times one already used or one the API refuses."""
    cid = rng.choice([*used, "bad id!"]) if used and _bad(rng) else f"{prefix}{len(used)}"
    used.append(cid)
    return cid


# ---- OpenAI Chat

def _chat_text(rng: random.Random, role: str) -> Any:
    if _bad(rng):
        return rng.choice(["", " ", [], [{"type": "text", "text": " "}]])
    parts: list[Any] = [{"type": "text", "text": rng.choice(["hi", "é word"])}]
    if rng.random() < 0.2:
        parts.append({"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}})
    return rng.choice(["do it", "next é", parts]) if role == "user" or _bad(rng) else "done"


def _chat_turn(rng: random.Random, used: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": _chat_text(rng, "user")}]
    for _ in range(rng.choice([0, 1, 1, 2])):
        calls = [{"id": _cid(rng, used, "call_"), "type": "function", "function": {
            "name": "ls", "arguments": "x" if _bad(rng) else "{}"}}
            for _ in range(rng.choice([1, 1, 2]))]
        out.append({"role": "assistant", "content": rng.choice([None, "let me look"]),
                    "tool_calls": calls})
        results = [{"role": "tool", "tool_call_id": c["id"], "content": rng.choice(["out", ""])}
                   for c in calls]
        if _bad(rng):
            results = results[:-1]  # an unanswered call
        if _bad(rng):
            results.append({"role": "tool", "tool_call_id": rng.choice(used), "content": "x"})
        if _bad(rng):
            results.insert(0, {"role": "user", "content": "wait"})
        if rng.random() < 0.3:
            rng.shuffle(results)
        out += results
    if rng.random() < 0.05:
        out.append({"role": rng.choice(["system", "developer"]), "content": "an aside"})
    out.append({"role": "assistant", "content": None if _bad(rng) else _chat_text(
        rng, "assistant")})
    return out


def chat_body(rng: random.Random) -> dict[str, Any]:
    used: list[str] = []
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for _ in range(rng.randint(1, 5)):
        messages += _chat_turn(rng, used)
    if rng.random() < 0.7:
        messages.append({"role": "user", "content": "and now?"})
    body: dict[str, Any] = {"model": "gpt-5.1", "messages": messages}
    if rng.random() < 0.9:
        body["tools"] = [{"type": "function", "function": {
            "name": "ls", "parameters": {"type": "object"}}}]
    return body


def chat_grown(rng: random.Random, old: dict[str, Any]) -> dict[str, Any]:
    messages = _cut(rng, old["messages"])
    used = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    if messages[-1]["role"] == "user" and rng.random() < 0.8:
        messages.append({"role": "assistant", "content": "ok"})
    for _ in range(rng.randint(0, 2)):
        messages += _chat_turn(rng, used)
    if rng.random() < 0.7:
        messages.append({"role": "user", "content": "more"})
    return {**old, "messages": messages}


# ---- OpenAI Responses

def _responses_prompt(rng: random.Random) -> dict[str, Any]:
    text = " " if _bad(rng) else rng.choice(["do it", "next é"])
    if rng.random() < 0.5:
        return {"role": "user", "content": text}  # the shorter spelling
    parts: list[Any] = [{"type": "input_text", "text": text}]
    if rng.random() < 0.2:
        parts.append({"type": "input_image", "image_url": "data:image/png;base64,AA==",
                      "detail": "auto"})
    return {"type": "message", "role": "user", "content": parts}


def _responses_round(rng: random.Random, used: list[str]) -> list[dict[str, Any]]:
    """What one step of an agent's loop adds: reasoning, calls, their outputs."""
    out: list[dict[str, Any]] = []
    reasoned = rng.random() < 0.6
    if reasoned:
        out.append({"type": "reasoning", "id": f"rs_{len(used)}", "summary": [],
                    "encrypted_content": "" if _bad(rng) else "enc"})
        if _bad(rng):
            out.append({"role": "user", "content": "between"})  # reasoning with nothing after
    calls = []
    for _ in range(rng.choice([1, 1, 2])):
        cid = _cid(rng, used, "call_")
        call: dict[str, Any] = {"type": "function_call", "call_id": cid, "name": "ls",
                                "arguments": "x" if _bad(rng) else "{}"}
        if reasoned != _bad(rng):
            call["id"] = f"fc_{len(used)}"  # an item id needs its reasoning before it
        calls.append(call)
    if rng.random() < 0.1:
        out.append({"type": "web_search_call", "id": "" if _bad(rng) else f"ws_{len(used)}",
                    "status": "completed"})
    out += calls
    outputs = [{"type": "function_call_output", "call_id": c["call_id"],
                "output": rng.choice(["out", "", [{"type": "input_text", "text": "x"}]])}
               for c in calls]
    if _bad(rng):
        outputs = outputs[:-1]  # an unanswered call
    if _bad(rng):
        outputs.append({"type": "function_call_output", "call_id": rng.choice(used),
                        "output": "again"})  # maybe for a call answered long before
    if outputs and _bad(rng):
        outputs.append(dict(outputs[0]))  # a second output for one call
    return out + outputs


def _responses_turn(rng: random.Random, used: list[str]) -> list[dict[str, Any]]:
    out = [_responses_prompt(rng)]
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        out += _responses_round(rng, used)
    if rng.random() < 0.05:
        out.append({"role": "developer", "content": "an aside"})
    if rng.random() < 0.5:
        out.append({"type": "reasoning", "id": f"rs_a{len(used)}", "summary": [],
                    "encrypted_content": "enc"})
    out.append({"role": "assistant", "content": " " if _bad(rng) else "done"})
    return out


def responses_body(rng: random.Random) -> dict[str, Any]:
    used: list[str] = []
    items: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 4)):
        items += _responses_turn(rng, used)
    if rng.random() < 0.5:  # in the middle of an agent's loop
        items += _responses_prompt(rng), *_responses_round(rng, used)
    body: dict[str, Any] = {"model": "gpt-5.1", "input": items, "store": False}
    if rng.random() < 0.8:
        body["instructions"] = " " if _bad(rng) else "You are a coding agent."
    if rng.random() < 0.9:
        body["tools"] = [{"type": "function", "name": "ls", "parameters": {"type": "object"}}]
    return body


def responses_grown(rng: random.Random, old: dict[str, Any]) -> dict[str, Any]:
    items = _cut(rng, old["input"])
    used = [i["call_id"] for i in items if i.get("type") == "function_call"]
    for _ in range(rng.randint(0, 3)):  # the loop goes on
        items += _responses_round(rng, used)
    for _ in range(rng.randint(0, 2)):
        items += _responses_turn(rng, used)
    if rng.random() < 0.5:
        items.append(_responses_prompt(rng))
    return {**old, "input": items}


# ---- Gemini

def _gemini_turn(rng: random.Random, used: list[str]) -> list[dict[str, Any]]:
    text = " " if _bad(rng) else rng.choice(["do it", "next é"])
    out: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": text}]}]
    for _ in range(rng.choice([0, 1, 1, 2])):
        calls: list[dict[str, Any]] = [
            {"functionCall": {"name": "ls", "args": "x" if _bad(rng) else {},
                              "id": _cid(rng, used, "c")}} for _ in range(rng.choice([1, 1, 2]))]
        if not _bad(rng):
            calls[0]["thoughtSignature"] = "c2ln"
        out.append({"role": "model", "parts": calls})
        answers: list[dict[str, Any]] = [
            {"functionResponse": {"name": "cat" if _bad(rng) else "ls",
                                  "id": c["functionCall"]["id"], "response": {"output": "out"}}}
            for c in calls]
        if _bad(rng):
            answers = answers[:-1]
        out.append({"role": "user", "parts": answers or [{"text": "none"}]})
    out.append({"role": "assistant" if _bad(rng) else "model",
                "parts": [] if _bad(rng) else [{"text": "done"}]})
    return out


def gemini_body(rng: random.Random) -> dict[str, Any]:
    used: list[str] = []
    contents: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 4)):
        contents += _gemini_turn(rng, used)
    if rng.random() < 0.7:
        contents.append({"role": "user", "parts": [{"text": "and now?"}]})
    return {"contents": contents, "tools": [{"functionDeclarations": [
        {"name": "ls", "parametersJsonSchema": {"type": "object"}}]}]}


def gemini_grown(rng: random.Random, old: dict[str, Any]) -> dict[str, Any]:
    contents = _cut(rng, old["contents"])
    used = [p["functionCall"]["id"] for c in contents for p in c["parts"] if "functionCall" in p]
    if contents[-1]["role"] == "user" and rng.random() < 0.8:
        contents.append({"role": "model", "parts": [{"text": "ok"}]})
    for _ in range(rng.randint(0, 2)):
        contents += _gemini_turn(rng, used)
    if rng.random() < 0.7:
        contents.append({"role": "user", "parts": [{"text": "more"}]})
    return {**old, "contents": contents}


Maker = Callable[[random.Random], dict[str, Any]]
Grower = Callable[[random.Random, dict[str, Any]], dict[str, Any]]
# per API: the model checked with, a body, the same conversation resent
GENERATED: dict[str, tuple[str, Maker, Grower]] = {
    "openai-chat": ("gpt-5.1", chat_body, chat_grown),
    "openai-responses": ("gpt-5.1", responses_body, responses_grown),
    "gemini": ("gemini-3-pro", gemini_body, gemini_grown)}
