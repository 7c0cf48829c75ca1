"""Generator fixes found by the corpus run (tools/corpus-run), each on a minimal spec of the same shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from codegen.config import Config
from codegen.pipeline import analyze
from conftest import mini_spec, write_spec


def op(**fields: Any) -> dict[str, Any]:
    return {"responses": {"200": {"description": "ok"}}, **fields}


def test_path_item_ref_gives_each_operation_its_own_tool_name(tmp_path: Path) -> None:
    # oas-examples server-path-level.json: one path item $ref'ing another; both operations share one location
    paths = {"/a": {"$ref": "#/paths/~1b"}, "/b": {"get": op(summary="B")}}
    _, tools, _ = analyze(Config(spec=str(write_spec(tmp_path, mini_spec(paths)))))
    names = [t.name for t in tools]
    assert len(names) == 2 and len(set(names)) == 2, names
