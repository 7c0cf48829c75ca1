"""The tools of small specs, mapped by the real pipeline, each schema checked as JSON Schema 2020-12 (the dialect
and reference tests: test_dialects.py, test_refs_and_names.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema

from codegen.config import Config
from codegen.pipeline import analyze
from codegen.surface.plans import ToolSpec
from conftest import mini_spec


def tools_of(spec: Path | str, **settings: Any) -> dict[str, ToolSpec]:
    api, tools, problems = analyze(Config(spec=str(spec), **settings))
    assert api is not None and tools, [str(p) for p in problems]
    for tool in tools:  # every schema is valid JSON Schema 2020-12
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        if tool.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
    return {t.name: t for t in tools}


def post_x_spec(body: Any, parameters: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A 3.0 document with one operation, `POST /x` (tool `post_x`), taking `body` as its JSON request body."""
    operation: dict[str, Any] = {
        "operationId": "postX",
        "requestBody": {"content": {"application/json": {"schema": body}}},
        "responses": {"204": {"description": "ok"}},
    }
    if parameters is not None:
        operation["parameters"] = parameters
    return mini_spec({"/x": {"post": operation}}, **extra)
