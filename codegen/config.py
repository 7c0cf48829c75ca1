"""One explicit, immutable configuration object, built once from CLI flags (and config files)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
    output_depth: int | None = 0  # $ref hops kept in output schemas (deeper: loosened); None: full schemas
    compact: bool = False  # no output schemas, short tool descriptions, no link URLs: smallest tools/list
