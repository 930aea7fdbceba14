"""Tool definitions: read in any provider's or MCP's shape, sent in the target provider's own.

Anthropic and Bedrock refuse a request whose history holds tool blocks when it defines no
tools, so definitions belong to the request as much as the history does. They are read from
OpenAI Chat (`{"type": "function", "function": {...}}`), OpenAI Responses (`{"type":
"function", "name", "parameters"}`), Anthropic (`{"name", "input_schema"}`), MCP `tools/list`
(`{"name", "inputSchema"}`, alone or in its JSON-RPC response), Gemini (`functionDeclarations`)
and Bedrock (`toolSpec`) shapes, and sent under the same name the history's calls go out with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionctx import decoding
from sessionctx.changes import ChangeKind, Source
from sessionctx.errors import SessionctxError
from sessionctx.providers.names import (
    ANTHROPIC,
    BEDROCK,
    GEMINI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
)
from sessionctx.providers.policies.reading import TOOL_NAME, tool_name
from sessionctx.providers.policies.turns import Turn
from sessionctx.providers.violations import Violation

PLACEHOLDER_DESCRIPTION = ("Placeholder: the history calls this tool, but no definition of it "
                           "was given.")
CHOICES = ("auto", "any", "required", "none")
# Kinds of change this module's step writes to the change log.
PLACEHOLDER_ADDED = ChangeKind.PLACEHOLDER_ADDED
DEFINITION_RENAMED = ChangeKind.DEFINITION_RENAMED


class ToolsError(SessionctxError, ValueError):
    """Tool definitions or a tool choice that cannot be used, with what is wrong."""


@dataclass(frozen=True, slots=True)
class Tool:
    name: str  # as the history's calls go out: see policies.reading.tool_name
    description: str | None
    schema: dict[str, Any]  # the JSON Schema of the arguments, an object schema
    placeholder: bool = False
    original: str | None = None  # the name as defined, when it had to be rewritten


def read_tools(value: Any) -> tuple[list[Tool], list[str]]:
    """The function tools in `value` and one problem per entry that is not one; the first of
    two definitions with one name wins."""
    tools: list[Tool] = []
    problems: list[str] = []
    names: set[str] = set()
    for where, entry in _entries(value, "tools"):
        tool = _tool(entry, where, problems)
        if tool is None:
            continue
        if tool.name in names:
            problems.append(f"{where}: a second definition of tool {tool.name!r} was left out")
            continue
        names.add(tool.name)
        tools.append(tool)
    return tools, problems


def load_tools(text: str, path: str) -> tuple[list[Tool], list[str]]:
    """Definitions from the text of a JSON file."""
    try:
        value = decoding.parse_text(text)
    except decoding.Malformed as exc:
        raise ToolsError(f"{path}: not JSON: {exc}") from None
    tools, problems = read_tools(value)
    if not tools and not problems:
        raise ToolsError(f"{path}: no tool definitions found")
    return tools, [f"{path}: {p}" for p in problems]


def _entries(value: Any, where: str) -> list[tuple[str, Any]]:
    """Each definition with where it is, through the envelopes the shapes put around them."""
    if isinstance(value, list):
        out: list[tuple[str, Any]] = []
        for i, entry in enumerate(value):
            if isinstance(entry, dict) and isinstance(entry.get("functionDeclarations"), list):
                out.extend(_entries(entry["functionDeclarations"],
                                    f"{where}[{i}].functionDeclarations"))
            else:
                out.append((f"{where}[{i}]", entry))
        return out
    if isinstance(value, dict):
        result = value.get("result")
        if isinstance(result, dict) and "tools" in result:  # an MCP JSON-RPC response
            return _entries(result["tools"], "result.tools")
        config = value.get("toolConfig")
        if isinstance(config, dict) and "tools" in config:  # a Bedrock request
            return _entries(config["tools"], "toolConfig.tools")
        for key in ("tools", "functions", "functionDeclarations"):
            if isinstance(value.get(key), list):
                return _entries(value[key], key)
        if "name" in value or "function" in value or "toolSpec" in value:
            return [(where, value)]
    raise ToolsError("expected tool definitions: a list, or an object with a 'tools' list "
                     "(Anthropic, OpenAI, MCP tools/list)")


def _tool(entry: Any, where: str, problems: list[str]) -> Tool | None:
    if not isinstance(entry, dict):
        problems.append(f"{where}: a tool definition is an object")
        return None
    kind = entry.get("type")
    body = entry
    if isinstance(entry.get("function"), dict):  # OpenAI Chat
        body = entry["function"]
    elif isinstance(entry.get("toolSpec"), dict):  # Bedrock
        body = entry["toolSpec"]
    elif kind not in (None, "function", "custom"):
        problems.append(f"{where}: {kind!r} is a provider's own tool, not a function tool; "
                        "left out")
        return None
    name = body.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"{where}: a tool definition needs a name")
        return None
    if kind == "custom" and "format" in entry:  # OpenAI's free-form custom tools
        problems.append(f"{where}: {name!r} is a free-form custom tool with no argument "
                        "schema; left out")
        return None
    schema = _schema(body)
    if schema is None:
        problems.append(f"{where}: the arguments schema of {name!r} must be a JSON object "
                        "schema (type 'object')")
        return None
    description = body.get("description")
    wire = tool_name(name)
    return Tool(wire, description if isinstance(description, str) and description else None,
                schema, original=name if wire != name else None)


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    found = False
    for key in ("input_schema", "inputSchema", "parameters", "parametersJsonSchema"):
        if key in body:
            schema = body[key]
            found = True
            break
    if not found or schema is None:
        return {"type": "object", "properties": {}}
    if isinstance(schema, dict) and isinstance(schema.get("json"), dict):  # Bedrock
        schema = schema["json"]
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, str) and kind.lower() == "object":
        return schema if kind == "object" else {**schema, "type": "object"}
    if kind is None and "properties" in schema:
        return {**schema, "type": "object"}
    return None


@dataclass(frozen=True, slots=True)
class CalledTool:
    """A call in the history, by the tool name it goes out with; the request reports those its
    definitions do not name."""

    name: str
    id: str | None
    message_index: int | None
    record: Source | None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "id": self.id, "message_index": self.message_index,
                "record": self.record.to_json() if self.record is not None else None}


def called(turns: list[Turn], sources: list[Source] | None) -> list[CalledTool]:
    """Every call the turns send, by the name it goes out with, in order."""
    out: list[CalledTool] = []
    for role, blocks, index in turns:
        if role != "assistant":
            continue
        for block in blocks:
            if block["type"] == "toolCall" and isinstance(block["name"], str):
                source = sources[index] if sources is not None and index is not None and \
                    index < len(sources) else None
                out.append(CalledTool(block["name"], block["id"], index, source))
    return out


def placeholders(names: list[str], tools: list[Tool]) -> list[Tool]:
    """A definition with an empty object schema for each called name the definitions lack."""
    defined = {t.name for t in tools}
    out: list[Tool] = []
    for name in names:
        if name not in defined:
            defined.add(name)
            out.append(Tool(name, PLACEHOLDER_DESCRIPTION, {"type": "object", "properties": {}},
                            placeholder=True))
    return out


# ---------------------------------------------------------------- the provider shapes

def render(tools: list[Tool], provider: str, choice: str | None = None) -> dict[str, Any]:
    """The keys a request body adds for `tools` and the tool choice, in `provider`'s shape."""
    if choice is not None:
        check_choice(choice, tools, provider)
    if provider == ANTHROPIC:
        out: dict[str, Any] = {"tools": [_anthropic(t) for t in tools]}
        if choice is not None:
            out["tool_choice"] = _anthropic_choice(choice)
        return out
    if provider == OPENAI_CHAT:
        out = {"tools": [{"type": "function", "function": _function(t, "parameters")}
                         for t in tools]}
        if choice is not None:
            out["tool_choice"] = _openai_choice(choice, nested=True)
        return out
    if provider == OPENAI_RESPONSES:
        out = {"tools": [{"type": "function", **_function(t, "parameters"), "strict": False}
                         for t in tools]}
        if choice is not None:
            out["tool_choice"] = _openai_choice(choice, nested=False)
        return out
    if provider == GEMINI:
        out = {"tools": [{"functionDeclarations": [_function(t, "parametersJsonSchema")
                                                   for t in tools]}]}
        if choice is not None:
            out["toolConfig"] = {"functionCallingConfig": _gemini_choice(choice)}
        return out
    if provider == BEDROCK:
        config: dict[str, Any] = {"tools": [{"toolSpec": _bedrock(t)} for t in tools]}
        if choice is not None:
            config["toolChoice"] = _bedrock_choice(choice)
        return {"toolConfig": config}
    raise ValueError(f"unknown provider {provider!r}")


def check_choice(choice: str, tools: list[Tool], provider: str) -> None:
    """A choice is a mode or the name of a defined tool; Bedrock has no 'none'."""
    if choice not in CHOICES and choice not in {t.name for t in tools}:
        raise ToolsError(f"tool choice {choice!r} is neither one of {', '.join(CHOICES)} nor "
                         "the name of a defined tool")
    if choice == "none" and provider == BEDROCK:
        raise ToolsError("bedrock's toolChoice takes auto, any or a tool name, not 'none'")


def _function(tool: Tool, key: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out[key] = tool.schema
    return out


def _anthropic(tool: Tool) -> dict[str, Any]:
    return _function(tool, "input_schema")


def _bedrock(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["inputSchema"] = {"json": tool.schema}
    return out


def _anthropic_choice(choice: str) -> dict[str, Any]:
    if choice in ("any", "required"):
        return {"type": "any"}
    if choice in ("auto", "none"):
        return {"type": choice}
    return {"type": "tool", "name": choice}


def _openai_choice(choice: str, nested: bool) -> Any:
    if choice == "any":
        return "required"
    if choice in CHOICES:
        return choice
    if nested:
        return {"type": "function", "function": {"name": choice}}
    return {"type": "function", "name": choice}


def _gemini_choice(choice: str) -> dict[str, Any]:
    if choice in ("any", "required"):
        return {"mode": "ANY"}
    if choice in ("auto", "none"):
        return {"mode": choice.upper()}
    return {"mode": "ANY", "allowedFunctionNames": [choice]}


def _bedrock_choice(choice: str) -> dict[str, Any]:
    if choice in ("any", "required"):
        return {"any": {}}
    if choice == "auto":
        return {"auto": {}}
    return {"tool": {"name": choice}}


# ---------------------------------------------------------------- checking a body's definitions

_KEYS = {ANTHROPIC: ("tools", "input_schema"), OPENAI_CHAT: ("tools", "parameters"),
         OPENAI_RESPONSES: ("tools", "parameters"), GEMINI: ("tools", "parametersJsonSchema")}


def violations(body: dict[str, Any], provider: str) -> list[Violation]:
    """What is wrong with the tool definitions and tool choice of `body`, or that it lacks
    the definitions its tool blocks require."""
    out: list[Violation] = []
    if missing_definitions(body, provider):
        error = ("Requests which include tool_use or tool_result blocks must define tools."
                 if provider == ANTHROPIC else "The toolConfig field must be defined when "
                 "using toolUse and toolResult content blocks.")
        out.append(Violation("tools" if provider == ANTHROPIC else "toolConfig",
                             f"this history holds tool blocks; {provider} requires tool "
                             f"definitions ({error})"))
    found: list[tuple[str, Any, Any]] = []  # (path, name, schema)
    if provider == BEDROCK:
        config = body.get("toolConfig")
        if config is None:
            return out
        listed = config.get("tools") if isinstance(config, dict) else None
        if not isinstance(listed, list) or not listed:
            return [Violation("toolConfig.tools", "toolConfig.tools must hold at least one tool")]
        for i, t in enumerate(listed):
            spec = t.get("toolSpec") if isinstance(t, dict) else None
            if not isinstance(spec, dict):
                out.append(Violation(f"toolConfig.tools[{i}]", "a tool needs a toolSpec"))
                continue
            schema = spec.get("inputSchema")
            found.append((f"toolConfig.tools[{i}].toolSpec", spec.get("name"),
                          schema.get("json") if isinstance(schema, dict) else None))
        choice = config.get("toolChoice")
        chosen = [choice["tool"].get("name")] if isinstance(choice, dict) and \
            isinstance(choice.get("tool"), dict) else []
    else:
        key, schema_key = _KEYS[provider]
        listed = body.get(key)
        if listed is None:
            return out
        if not isinstance(listed, list):
            return [Violation(key, f"{key} must be a list")]
        if provider == GEMINI:
            listed = [(f"tools[{i}].functionDeclarations[{j}]", d)
                      for i, t in enumerate(listed) if isinstance(t, dict)
                      for j, d in enumerate(t.get("functionDeclarations") or [])]
        else:
            listed = [(f"tools[{i}]", t) for i, t in enumerate(listed)]
        for path, t in listed:
            if not isinstance(t, dict):
                out.append(Violation(path, "a tool definition is an object"))
                continue
            if provider == OPENAI_CHAT:
                if t.get("type") != "function" or not isinstance(t.get("function"), dict):
                    out.append(Violation(path, "a Chat tool is {type: function, function}"))
                    continue
                path, t = f"{path}.function", t["function"]
            schema = t.get(schema_key)
            if provider == GEMINI:  # the API takes either spelling, or an OpenAPI schema
                schema = next((t[k] for k in ("parametersJsonSchema", "parameters_json_schema",
                                              "parameters") if k in t), None)
                if isinstance(schema, dict) and str(schema.get("type")).lower() == "object":
                    schema = {**schema, "type": "object"}
            found.append((path, t.get("name"), schema))
        chosen = _chosen(body, provider)
    names: set[str] = set()
    for path, name, schema in found:
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            out.append(Violation(f"{path}.name", "tool name must match ^[a-zA-Z0-9_-]{1,64}$"))
        elif name in names:
            out.append(Violation(f"{path}.name", f"Tool names must be unique: {name!r}"))
        else:
            names.add(name)
        if not isinstance(schema, dict) or schema.get("type") != "object":
            out.append(Violation(path, "the input schema must be a JSON Schema of type "
                                 "'object'"))
    for name in chosen:
        if name not in names:
            out.append(Violation("tool_choice", f"the tool choice names {name!r}, which is not "
                                 "a defined tool"))
    return out


def missing_definitions(body: dict[str, Any], provider: str) -> bool:
    """Whether the body holds tool blocks without the definitions its provider then requires
    (Anthropic and Bedrock; the OpenAI APIs and Gemini take tool history without them)."""
    if provider == ANTHROPIC:
        if body.get("tools"):
            return False
        kinds = ("tool_use", "tool_result")
        return any(b.get("type") in kinds for b in _blocks(body))
    if provider == BEDROCK:
        if "toolConfig" in body:
            return False
        return any("toolUse" in b or "toolResult" in b for b in _blocks(body))
    return False


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return [b for m in messages if isinstance(m, dict) and isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict)] if isinstance(messages, list) else []


def _chosen(body: dict[str, Any], provider: str) -> list[Any]:
    """The tool names a body's tool choice names."""
    if provider == GEMINI:
        config = body.get("toolConfig", {}).get("functionCallingConfig", {})
        return list(config.get("allowedFunctionNames") or [])
    choice = body.get("tool_choice")
    if not isinstance(choice, dict) or choice.get("type") not in ("tool", "function"):
        return []
    if provider == OPENAI_CHAT:
        return [choice.get("function", {}).get("name")]
    return [choice.get("name")]
