"""One explicit, immutable configuration object, built once from CLI flags and a config file.

Precedence, highest first: command-line flags, then the config file (`[tool.mcp-codegen]` in a
pyproject.toml or a `mcp-codegen.toml`, see configfile.py), then the spec's own `x-mcp-*` operation
extensions (for per-operation overrides), then the built-in defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .spec.model import Security

Action = Literal["include", "exclude"]
ANNOTATION_KEYS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class Rule:
    """One include/exclude rule. It matches an operation when every criterion it names matches
    (a criterion with several values matches any of them). Rules are tried in order; the first
    that matches decides."""

    action: Action
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()  # fnmatch-style globs on the spec path: /pets/*, /admin/**
    methods: tuple[str, ...] = ()  # upper case
    operations: tuple[str, ...] = ()  # operationIds
    source: str = ""  # where the rule came from, for messages: a file#pointer or "--rule ..."

    def describe(self) -> str:
        parts: list[str] = [self.action]
        for key, values in (
            ("tag", self.tags),
            ("path", self.paths),
            ("method", self.methods),
            ("op", self.operations),
        ):
            if values:
                parts.append(f"{key}={','.join(values)}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Override:
    """Per-operation changes to the generated tool; `key` is an operationId or `METHOD /path`."""

    key: str
    name: str | None = None
    title: str | None = None
    description: str | None = None
    annotations: tuple[tuple[str, Any], ...] = ()  # sorted (key, value) pairs
    exclude: bool | None = None
    source: str = ""
    security: Security | None = None  # replaces the operation's security requirements
    result_tokens: int | None = None  # this tool's result budget in tokens (0: none); None: the server's

    def annotation_map(self) -> Mapping[str, Any]:
        return dict(self.annotations)


@dataclass(frozen=True, slots=True)
class Config:
    spec: str  # a file path or an http(s) URL
    output: Path | None = None  # default: a folder named after the API title
    name: str | None = None  # distribution / script name; default: the output folder's name
    force: bool = False  # overwrite a non-empty folder that mcp-codegen did not generate
    check: bool = False  # compare with the folder instead of writing
    templates: Path | None = None  # a folder whose templates override the built-in ones by file name
    base_url: str | None = None  # default upstream base URL baked into the server (else: the spec's)
    validate: bool | None = None  # run openapi-spec-validator; None: only up to VALIDATE_MAX_OPERATIONS
    output_depth: int = 0  # $ref hops kept in output schemas (deeper: loosened); -1: full schemas
    input_budget: int = 64_000  # characters of $defs an input schema keeps whole (deeper: loosened); 0: no limit
    compact: bool = False  # no output schemas, short tool descriptions, no link URLs: smallest tools/list
    timeout: float = DEFAULT_TIMEOUT  # the generated server's default request timeout (seconds)
    deprecated: bool = True  # serve deprecated operations as tools
    rules: tuple[Rule, ...] = ()  # include/exclude rules, first match wins
    unmatched: Action = "include"  # what happens to an operation no rule matches
    overrides: tuple[Override, ...] = ()  # per-operation name/title/description/annotations
    security_schemes: tuple[tuple[str, str], ...] = ()  # added/replaced schemes: (key, the scheme as JSON text)
    security: Security | None = None  # replaces the spec's root (default) security requirements
    config_file: Path | None = None  # the file the settings came from, if any
    ref_root: Path | None = None  # local $refs may read below this folder (default: the spec's folder); flag only
    allow_remote_refs: bool = False  # fetch http(s) $refs on any origin; flag only
    max_spec_mb: float = 50  # bytes one spec document may have, in MB
    overlays: tuple[str, ...] = ()  # OpenAPI Overlay files (or URLs), applied in order after loading
    strict: bool = False  # every warning is an error (exit code 2)
    clients: tuple[str, ...] = ("portable",)  # client profiles whose rules the tools must meet (surface/profiles)
    surface: Literal["tools", "discovery", "auto"] = "auto"  # auto: tools when the API fits, else discovery
    pin: tuple[str, ...] = ()  # globs (tool name, operationId, "METHOD /path"): listed next to discovery
