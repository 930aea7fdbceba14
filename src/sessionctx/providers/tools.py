"""Tool definitions: read in any provider's or MCP's shape, sent in the target provider's own.

Anthropic and Bedrock refuse a request whose history holds tool blocks when it defines no
tools, so definitions belong to the request as much as the history does. They are read from
OpenAI Chat (`{"type": "function", "function": {...}}`), OpenAI Responses (`{"type":
"function", "name", "parameters"}`), Anthropic (`{"name", "input_schema"}`), MCP `tools/list`
(`{"name", "inputSchema"}`, alone or in its JSON-RPC response), Gemini (`functionDeclarations`)
and Bedrock (`toolSpec`) shapes, and sent under the same name the history's calls go out with.
Each provider module holds its own wire shape of them and its check; the parts every provider
shares are here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sessionctx import decoding
from sessionctx.changes import ChangeKind, Source
from sessionctx.errors import SessionctxError
from sessionctx.providers.policies.ids import TOOL_NAME, tool_name
from sessionctx.providers.policies.turns import Turn
from sessionctx.providers.provider import CHOICES, Body
from sessionctx.providers.violations import Violation

if TYPE_CHECKING:
    from sessionctx.providers.provider import Provider

PLACEHOLDER_DESCRIPTION = ("Placeholder: the history calls this tool, but no definition of it "
                           "was given.")
# Kinds of change this module's step writes to the change log.
PLACEHOLDER_ADDED = ChangeKind.PLACEHOLDER_ADDED
DEFINITION_RENAMED = ChangeKind.DEFINITION_RENAMED


class ToolsError(SessionctxError, ValueError):
    """Tool definitions or a tool choice that cannot be used, with what is wrong."""


@dataclass(frozen=True, slots=True)
class Tool:
    name: str  # as the history's calls go out: see policies.ids.tool_name
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


# ---------------------------------------------------------------- the parts providers share

def render(tools: list[Tool], provider: str, choice: str | None = None) -> Body:
    """The keys a request body adds for `tools` and the tool choice, in `provider`'s shape."""
    from sessionctx.providers.registry import provider as registered

    target = registered(provider)
    if choice is not None:
        check_choice(choice, tools, target)
    return target.tools(tools, choice)


def check_choice(choice: str, tools: list[Tool], target: Provider) -> None:
    """A choice is a mode the provider takes or the name of a defined tool."""
    if choice not in CHOICES and choice not in {t.name for t in tools}:
        raise ToolsError(f"tool choice {choice!r} is neither one of {', '.join(CHOICES)} nor "
                         "the name of a defined tool")
    if choice in CHOICES and choice not in target.choices:
        raise ToolsError(f"{target.name}'s tool choice takes {', '.join(target.choices)} or a "
                         f"tool name, not {choice!r}")


def definition(tool: Tool, key: str, schema: Any = None) -> dict[str, Any]:
    """A function definition: name, description when there is one, and the schema under
    `key` (the tool's own schema unless `schema` wraps it)."""
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out[key] = tool.schema if schema is None else schema
    return out


def openai_choice(choice: str, nested: bool) -> Any:
    """The tool choice in the two OpenAI APIs' spelling (Chat nests the function's name)."""
    if choice == "any":
        return "required"
    if choice in CHOICES:
        return choice
    if nested:
        return {"type": "function", "function": {"name": choice}}
    return {"type": "function", "name": choice}


def violations(body: Body, provider: str) -> list[Violation]:
    """What is wrong with the tool definitions and tool choice of `body`, or that it lacks
    the definitions its tool blocks require."""
    from sessionctx.providers.registry import provider as registered

    return registered(provider).tool_violations(body)


def missing_definitions(body: Body, provider: str) -> bool:
    """Whether the body holds tool blocks without the definitions its provider then requires
    (Anthropic and Bedrock; the OpenAI APIs and Gemini take tool history without them)."""
    from sessionctx.providers.registry import provider as registered

    return registered(provider).needs_definitions(body)


def undefined(missing: bool, provider: str, path: str, error: str) -> list[Violation]:
    """The violation of a body whose tool blocks lack the definitions `provider` requires,
    when they are `missing` (the provider's `needs_definitions`); none otherwise."""
    if not missing:
        return []
    return [Violation(path, f"this history holds tool blocks; {provider} requires tool "
                            f"definitions ({error})")]


def listed(body: Body, key: str = "tools") -> list[tuple[str, Any]] | Violation | None:
    """Each entry of the body's list of definitions under `key`, with its path; None when the
    body has none, a violation when it is not a list."""
    found = body.get(key)
    if found is None:
        return None
    if not isinstance(found, list):
        return Violation(key, f"{key} must be a list")
    return [(f"{key}[{i}]", t) for i, t in enumerate(found)]


def checked(body: Body, found_of: Callable[[list[tuple[str, Any]], list[Violation]],
                                           list[tuple[str, Any, Any]]],
            chosen: list[Any], out: list[Violation], key: str = "tools") -> list[Violation]:
    """`out` and the shared rules' violations of the body's list of definitions under `key`:
    `found_of` reads (path, name, schema) of each entry, saying in `out` what is no
    definition; `chosen` are the names the tool choice names."""
    entries = listed(body, key)
    if entries is None:
        return out
    if isinstance(entries, Violation):
        return [entries]
    found = found_of(entries, out)
    return out + check_definitions(found, chosen)


def named_choice(body: Body, nested: bool = False) -> list[Any]:
    """The tool name a `tool_choice` of type tool or function names (Chat nests it under
    `function`)."""
    choice = body.get("tool_choice")
    if not isinstance(choice, dict) or choice.get("type") not in ("tool", "function"):
        return []
    return [choice.get("function", {}).get("name") if nested else choice.get("name")]


def objects(entries: list[tuple[str, Any]], out: list[Violation]) -> list[tuple[str, Any]]:
    """The entries that are objects; a violation in `out` for each that is not."""
    kept = []
    for path, t in entries:
        if isinstance(t, dict):
            kept.append((path, t))
        else:
            out.append(Violation(path, "a tool definition is an object"))
    return kept


def check_definitions(found: list[tuple[str, Any, Any]], chosen: list[Any]) -> list[Violation]:
    """The rules every provider's definitions share, for (path, name, schema) of each:
    a tool name, unique, an object schema; and a tool choice naming a defined tool."""
    out: list[Violation] = []
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


def content_blocks(body: Body) -> list[dict[str, Any]]:
    """Every block of the body's messages' content lists."""
    messages = body.get("messages")
    return [b for m in messages if isinstance(m, dict) and isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict)] if isinstance(messages, list) else []
