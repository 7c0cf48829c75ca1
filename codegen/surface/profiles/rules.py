"""What each client accepts: one row per client, with the documentation it was read from and when.

docs/clients.md explains every row; keep the two in step. The transforms (names, refs, shape) and the
checker (check.py) both read this table, but the checker re-implements every rule on its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

READ_ON = "2026-11-24"  # when the sources below were last read

# The intersection of Claude's, OpenAI's and Gemini's tool-name rules: what every client accepts.
PORTABLE_NAME = r"[A-Za-z_][A-Za-z0-9_-]{0,63}"
CLAUDE_ARG = r"[A-Za-z0-9_.-]{1,64}"  # inputSchema property keys
GEMINI_ARG = r"[A-Za-z_][A-Za-z0-9_]{0,63}"  # function parameter names

# Schema dialects: "json-schema" (the full JSON Schema 2020-12 the MCP spec uses), "gemini" (the OpenAPI 3.0
# subset of Gemini's function declarations), "openai-strict" (OpenAI's strict function calling).
JSON_SCHEMA = "json-schema"
GEMINI = "gemini"
OPENAI_STRICT = "openai-strict"

# Gemini's Schema object (the OpenAPI 3.0 subset of function declarations): its fields, and the formats it
# accepts per type.
GEMINI_KEYS = frozenset(
    "type format title description nullable enum maxItems minItems properties required minProperties "
    "maxProperties minLength maxLength pattern example anyOf propertyOrdering default items minimum maximum".split()
)
GEMINI_FORMATS = {"string": {"enum", "date-time"}, "integer": {"int32", "int64"}, "number": {"float", "double"}}
# OpenAI strict mode: the keywords of its supported subset, its string formats and its size limits.
STRICT_KEYS = frozenset(
    "type properties required additionalProperties items enum anyOf description title pattern format multipleOf "
    "maximum exclusiveMaximum minimum exclusiveMinimum minItems maxItems $ref $defs".split()
)
STRICT_FORMATS = frozenset("date-time time date duration email hostname ipv4 ipv6 uuid".split())
STRICT_DEPTH = 10  # levels of object nesting
STRICT_PROPERTIES = 5_000  # object properties in one schema
STRICT_ENUM_VALUES = 1_000  # enum values in one schema
JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object")


@dataclass(frozen=True, slots=True)
class Profile:
    client: str
    label: str
    tool_name: str  # a regular expression the whole tool name must match
    name_budget: int | None  # the server name plus the tool name must fit in this many characters
    tool_cap: int | None  # the most tools the client takes from a server
    cap_refuses: bool  # True: the client refuses more; False: it degrades (still an error: the tools would not fit)
    arg_name: str  # a regular expression every top-level inputSchema property key must match
    dialect: str
    source: str  # where the rules were read


PROFILES: dict[str, Profile] = {
    p.client: p
    for p in (
        Profile(
            "portable",
            "every client",
            PORTABLE_NAME,
            None,
            None,
            False,
            CLAUDE_ARG,
            JSON_SCHEMA,
            "the intersection of the rows below that costs no information",
        ),
        Profile(
            "claude",
            "Claude (API, Desktop, Code)",
            r"[A-Za-z0-9_-]{1,64}",
            None,
            None,
            False,
            CLAUDE_ARG,
            JSON_SCHEMA,
            "https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use (tool definitions)",
        ),
        Profile(
            "openai",
            "OpenAI (function calling, strict mode)",
            r"[A-Za-z0-9_-]{1,64}",
            None,
            128,
            True,
            CLAUDE_ARG,
            OPENAI_STRICT,
            "https://platform.openai.com/docs/guides/function-calling (strict mode), "
            "https://platform.openai.com/docs/guides/structured-outputs (supported schemas), "
            "API reference: FunctionObject.name, tools (at most 128)",
        ),
        Profile(
            "gemini",
            "Gemini (function declarations)",
            r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}",
            None,
            None,
            False,
            GEMINI_ARG,
            GEMINI,
            "https://ai.google.dev/api/caching#FunctionDeclaration and #Schema; "
            "https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/FunctionDeclaration",
        ),
        Profile(
            "cursor",
            "Cursor",
            PORTABLE_NAME,
            60,
            40,
            False,
            CLAUDE_ARG,
            JSON_SCHEMA,
            "Cursor's MCP limits as documented by MCP server vendors (e.g. "
            "https://easymanage.com/res/docs/tutorials/ai-agent/chapter-3-mcp-advanced): 40 tools, "
            "server name + tool name <= 60 characters",
        ),
        Profile(
            "vscode",
            "VS Code (Copilot chat)",
            PORTABLE_NAME,
            None,
            128,
            True,
            CLAUDE_ARG,
            JSON_SCHEMA,
            "https://code.visualstudio.com/docs/copilot/agents/agent-tools (128 tools per chat request)",
        ),
    )
}
CLIENTS = tuple(PROFILES)
DEFAULT_CLIENTS = ("portable",)


@dataclass(frozen=True, slots=True)
class Rules:
    """All the named clients' rules at once (several clients: every one of their rules)."""

    clients: tuple[str, ...]
    tool_names: tuple[str, ...]  # every pattern must match
    name_budget: int | None
    tool_cap: int | None
    arg_names: tuple[str, ...]
    gemini: bool
    strict: bool

    @classmethod
    def of(cls, clients: Iterable[str]) -> Rules:
        named = tuple(dict.fromkeys(c for c in clients if c in PROFILES)) or DEFAULT_CLIENTS
        if "portable" not in named:  # what costs no information always applies
            named = ("portable", *named)
        profiles = [PROFILES[c] for c in named]
        budgets = [p.name_budget for p in profiles if p.name_budget is not None]
        caps = [p.tool_cap for p in profiles if p.tool_cap is not None]
        return cls(
            named,
            tuple(dict.fromkeys(p.tool_name for p in profiles)),
            min(budgets) if budgets else None,
            min(caps) if caps else None,
            tuple(dict.fromkeys(p.arg_name for p in profiles)),
            any(p.dialect == GEMINI for p in profiles),
            any(p.dialect == OPENAI_STRICT for p in profiles),
        )


def tool_cap(clients: Iterable[str]) -> int | None:
    """The most tools the named clients take from one server (None: no limit). The discovery surface
    (a few tools that search, describe and call the others) is how a larger API fits under it."""
    return Rules.of(clients).tool_cap


def unknown_clients(clients: Iterable[str]) -> list[str]:
    return [c for c in clients if c not in PROFILES]
