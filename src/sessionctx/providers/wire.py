"""One request on the wire, repaired: a provider body checked by the provider's validator and,
when it would be refused, rebuilt by the same provider step `build --provider` runs.

    from sessionctx.providers.wire import repair_request

    fixed = repair_request("anthropic", body)
    send(fixed.body)   # the very object given when nothing had to change

A valid body comes back as the object given, so a caller that holds its bytes sends those.
A body that breaks a rule is read into native messages by the importer of its own shape, folded
(pairing: a call no result answers is removed and listed in `pending_calls`, never answered with
an invented result), run through the provider step and rendered; only the keys that carry the
history are replaced, every other key of the body (model, tools, system, stream, metadata, keys
sessionctx does not know) is kept as it was. The same body always gives the same repaired body,
so the next turn's request keeps the prefix a prompt cache holds.

The importers and validators read the shapes sessionctx renders; a wire body may use the API's
shorter spellings (a string for a content list, a Responses message without its type). The
validator sees those spelt out (`_as_checked`), and a block or item no importer reads keeps the
body as it is: a repair never loses what it cannot read (`RepairedRequest.unread`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessionctx.changes import Change, ChangeKind
from sessionctx.context import BuildOptions, PendingCall, build_context
from sessionctx.gcpause import paused_gc
from sessionctx.messages import Message
from sessionctx.providers.registry import provider as registered
from sessionctx.providers.request import BuildRequestOptions, build_from_messages, validate
from sessionctx.providers.violations import Violation
from sessionctx.providers.wire_read import (
    ANTHROPIC,
    APIS,
    GEMINI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    READERS,
    forget_given_ids,
    rules_model,
)

__all__ = ["ANTHROPIC", "APIS", "GEMINI", "HISTORY_KEYS", "OPENAI_CHAT", "OPENAI_RESPONSES",
           "RepairedRequest", "repair_request"]

# the keys of a body that hold its history: the ones a repair replaces
HISTORY_KEYS: dict[str, tuple[str, ...]] = {
    ANTHROPIC: ("messages",),
    OPENAI_CHAT: ("messages",),
    OPENAI_RESPONSES: ("input", "instructions"),  # instructions are read as the system message
    GEMINI: ("contents",),
}
# a rule the validators state for shapes they render, not one the API itself enforces on what
# it is sent: a block or item of a type sessionctx does not render is the API's business
_NOT_OURS = ("unsupported block type", "unsupported item type", "unsupported part")


@dataclass(frozen=True, slots=True)
class RepairedRequest:
    """What `repair_request` made of a body.

    `body` is the object given when `changed` is False. `violations` are the rules the given
    body breaks; `remaining` the ones the repaired body still breaks (the caller may send it
    all the same: the provider has the last word). `unread` says why a body that breaks a rule
    was left as it is: parts of it no importer reads.
    """

    api: str
    body: dict[str, Any]
    changed: bool = False
    changes: tuple[Change, ...] = ()
    pending_calls: tuple[PendingCall, ...] = ()
    violations: tuple[Violation, ...] = ()
    remaining: tuple[Violation, ...] = ()
    unread: tuple[str, ...] = field(default_factory=tuple)

    def summary(self) -> dict[str, Any]:
        """The JSON an audit log keeps: what broke, what changed, which calls are pending."""
        return {"api": self.api, "changed": self.changed,
                "violations": [v.to_json() for v in self.violations],
                "changes": [c.to_json() for c in self.changes],
                "pending_calls": [p.to_json() for p in self.pending_calls],
                "remaining": [v.to_json() for v in self.remaining],
                "unread": list(self.unread)}


def repair_request(api: str, body: dict[str, Any], *, model: str | None = None,
                   note_unpaired: bool = False, force: bool = False,
                   drop_signatures: bool = False, from_text: bool = False) -> RepairedRequest:
    """`body` as `api` accepts it (one of `APIS`), with what changed and the pending calls.

    `model` overrides the body's own for the capability row. `note_unpaired` adds the factual
    note after a removed call. `force` rebuilds a body the validator finds valid (the provider
    refused it all the same); `drop_signatures` also leaves out reasoning whose signature the
    provider refused. `from_text`: the body was just decoded from the JSON text the caller
    holds (a proxy), so it needs no check that it can be sent as JSON. Never raises for what
    is in the body; an unknown `api` is a BadArgument.
    """
    if api not in HISTORY_KEYS:
        from sessionctx.errors import BadArgument
        raise BadArgument(f"unknown API {api!r}; known: {', '.join(APIS)}")
    with paused_gc():  # the checked copies, records and context are large acyclic trees
        chosen = model if model is not None else rules_model(api, body)
        thinking, prefill = _settings(api, body)
        found = violations(api, body, chosen, settings=(thinking, prefill), from_text=from_text)
        if not found and not force:
            return RepairedRequest(api, body)
        asides = _asides(body) if api == ANTHROPIC else []
        read = READERS[api](_without_asides(body) if asides else body)
        # a part no importer reads keeps the body as it is; a shape the build puts right (results
        # stored after another block) does not
        unread = tuple(p.message for p in read.problems if p.kind == "unreadable")
        if unread:
            return RepairedRequest(api, body, violations=found, unread=unread)
        # results an agent wrote for itself go (their calls are pending): a body being repaired
        # sends only what the tools did
        ctx = build_context(read.records, BuildOptions(note_unpaired=note_unpaired,
                                                       drop_agent_results=True))
        messages = _without_signatures(ctx.messages) if drop_signatures else ctx.messages
        # a body that defines no tools but holds tool blocks (a summary request, say): its
        # calls and results go as text, as the build sends them then; no schema is made up
        options = BuildRequestOptions(thinking=thinking if api == ANTHROPIC else None,
                                      tools_as_text=registered(api).needs_definitions(body))
        built = build_from_messages(messages, ctx.sources, api, chosen, None, options)
        history = {k: built.body[k] for k in HISTORY_KEYS[api] if k in built.body}
        if api == GEMINI:
            forget_given_ids(history["contents"])
        if asides and "messages" in history:
            history["messages"] = _with_asides(history["messages"], asides)
        repaired = _spliced(body, history, HISTORY_KEYS[api])
        changes = tuple(
            c for c in ctx.changes if c.kind != ChangeKind.SKIPPED_CONTEXT_ROW) + \
            tuple(built.changes)  # the body's other keys are sent as they are, not skipped
        if repaired == body:
            return RepairedRequest(api, body, violations=found, remaining=found)
        # the rebuilt history holds the given body's values: if those could be sent as JSON text,
        # so can it (the check of that is a walk of the whole body)
        as_text = from_text or not any(v.path == "$" for v in found)
        remaining = violations(api, repaired, chosen, settings=(thinking, prefill),
                               from_text=as_text)
        return RepairedRequest(api, repaired, True, changes, tuple(ctx.pending_calls), found,
                               remaining)


def violations(api: str, body: dict[str, Any], model: str | None, *,
               settings: tuple[bool | None, bool] | None = None,
               from_text: bool = False) -> tuple[Violation, ...]:
    """The rules `body` breaks that the API enforces on what it is sent (`model`: the one
    chosen for the capability row; `settings`: thinking and prefill, by default the body's
    own); none: the body goes as it is."""
    thinking, prefill = settings if settings is not None else _settings(api, body)
    return tuple(v for v in validate(_as_checked(api, body), api, model, thinking=thinking,
                                     prefill=prefill, from_text=from_text)
                 if not v.message.startswith(_NOT_OURS))


def _settings(api: str, body: dict[str, Any]) -> tuple[bool | None, bool]:
    """Whether the request enables thinking (None: unsaid), and whether it ends on a prefill."""
    if api != ANTHROPIC:
        return None, False
    setting = body.get("thinking")
    thinking = None if not isinstance(setting, dict) else setting.get("type") != "disabled"
    messages = body.get("messages")
    prefill = isinstance(messages, list) and bool(messages) and isinstance(
        messages[-1], dict) and messages[-1].get("role") == "assistant"
    return thinking, prefill


def _spliced(body: dict[str, Any], history: dict[str, Any],
             keys: tuple[str, ...]) -> dict[str, Any]:
    """`body` with its history keys replaced, in their place; a key the rebuild no longer
    needs (instructions folded away) goes, and one it adds comes last."""
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key not in keys:
            out[key] = value
        elif key in history:
            out[key] = history[key]
    for key in keys:
        if key in history and key not in out:
            out[key] = history[key]
    return out


def _without_signatures(messages: list[Message]) -> list[Message]:
    """The messages with their reasoning unsigned, so the provider step leaves it out."""
    out: list[Message] = []
    for m in messages:
        content = m.get("content")
        if m.get("role") == "assistant" and isinstance(content, list) and any(
                b.get("type") == "thinking" for b in content):
            m = {**m, "content": [{**b, "thinkingSignature": ""} if b.get("type") == "thinking"
                                  else b for b in content]}
        out.append(m)
    return out


# ---- what the validators read: the API's shorter spellings spelt out (a copy, never the body)

def _as_checked(api: str, body: dict[str, Any]) -> dict[str, Any]:
    if api == ANTHROPIC and isinstance(body.get("messages"), list):
        out = {**body, "messages": [_anthropic_message(m) for m in body["messages"]
                                    if not _is_aside(m)]}
        system = body.get("system")
        if isinstance(system, list):  # text blocks, each with its own cache_control
            out["system"] = "\n".join(str(b.get("text", "")) for b in system
                                       if isinstance(b, dict)) or " "
        return out
    if api == OPENAI_RESPONSES and isinstance(body.get("input"), (list, str)):
        items = body["input"]
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        return {**body, "input": [_responses_item(i) for i in items]}
    return body


def _anthropic_message(m: Any) -> Any:
    if not isinstance(m, dict):
        return m
    content = m.get("content")
    if isinstance(content, str):
        return {**m, "content": [{"type": "text", "text": content}] if content else []}
    if not isinstance(content, list):
        return m
    for b in content:  # a loop: no generator a message
        if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(
                b.get("content"), str):
            return {**m, "content": [_anthropic_result(x) for x in content]}
    return m


def _anthropic_result(b: Any) -> Any:
    if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(
            b.get("content"), str):
        text = b["content"]
        return {**b, "content": [{"type": "text", "text": text}] if text and
                not text.isspace() else []}  # blank: as strip() finds it, without a copy
    return b


def _responses_item(item: Any) -> Any:
    if not isinstance(item, dict) or "type" in item or "role" not in item:
        return item
    content = item.get("content")
    if isinstance(content, str):
        part = "output_text" if item.get("role") == "assistant" else "input_text"
        content = [{"type": part, "text": content}]
    return {**item, "type": "message", "content": content}


# ---- Claude Code's mid-conversation system messages ("asides"): kept as they are, each after
# the same count of user messages as before it in the body (a repair never drops a user's text)

def _is_aside(m: Any) -> bool:
    return isinstance(m, dict) and m.get("role") == "system"


def _asides(body: dict[str, Any]) -> list[tuple[int, Any]]:
    """Each system message of the body with the count of user messages before it."""
    messages = body.get("messages")
    out: list[tuple[int, Any]] = []
    users = 0
    for m in messages if isinstance(messages, list) else []:
        if _is_aside(m):
            out.append((users, m))
        elif isinstance(m, dict) and m.get("role") == "user":
            users += 1
    return out


def _without_asides(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "messages": [m for m in body["messages"] if not _is_aside(m)]}


def _with_asides(messages: list[Any], asides: list[tuple[int, Any]]) -> list[Any]:
    out: list[Any] = []
    pending = list(asides)
    users = 0
    for m in messages:
        while pending and pending[0][0] <= users:
            out.append(pending.pop(0)[1])
        out.append(m)
        if isinstance(m, dict) and m.get("role") == "user":
            users += 1
    out.extend(m for _, m in pending)
    return out
