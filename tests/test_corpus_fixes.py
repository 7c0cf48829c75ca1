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


def test_pattern_python_cannot_compile_is_dropped_with_a_warning(tmp_path: Path) -> None:
    # AWS specs in the directory use ECMA/Java classes (\p{L}, \p{Print}); Python's re (jsonschema's "regex"
    # format, the SDK's input check) rejects them, which made the whole inputSchema invalid
    tag = {"type": "string", "pattern": r"^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$"}
    code = {"type": "string", "pattern": r"^[A-Z]{2}$"}
    params = [{"name": "tag", "in": "query", "schema": tag}, {"name": "code", "in": "query", "schema": code}]
    _, tools, problems = analyze(
        Config(spec=str(write_spec(tmp_path, mini_spec({"/t": {"get": op(operationId="t", parameters=params)}}))))
    )
    schema = tools[0].input_schema
    Draft202012Validator.check_schema(schema)
    assert "pattern" not in schema["properties"]["tag"]
    assert schema["properties"]["code"]["pattern"] == "^[A-Z]{2}$"  # patterns Python reads are kept
    assert [p.pointer for p in problems if "is not a regular expression Python can compile" in p.message] == [
        "/paths/~1t/get/parameters/0/schema/pattern"
    ]


def test_path_item_ref_gives_each_operation_its_own_tool_name(tmp_path: Path) -> None:
    # oas-examples server-path-level.json: one path item $ref'ing another; both operations share one location
    paths = {"/a": {"$ref": "#/paths/~1b"}, "/b": {"get": op(summary="B")}}
    _, tools, _ = analyze(Config(spec=str(write_spec(tmp_path, mini_spec(paths)))))
    names = [t.name for t in tools]
    assert len(names) == 2 and len(set(names)) == 2, names


def test_required_body_without_given_properties_is_sent_as_empty_object(tmp_path: Path) -> None:
    # Prism rejected such calls with 422 "Body parameter is required" (Azure, AWS specs in the corpus)
    from support.generated import GeneratedPackage
    from support.recorder import recording_upstream

    from conftest import generate_into

    body = {
        "required": True,
        "content": {"application/json": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}},
    }
    paths = {
        "/things": {"post": op(operationId="make", requestBody=body)},
        "/other": {"post": op(operationId="opt", requestBody={**body, "required": False})},
    }
    out = tmp_path / "reqbody"
    generate_into(write_spec(tmp_path, {**mini_spec(paths), "servers": [{"url": "http://127.0.0.1:9"}]}), out)
    package = GeneratedPackage(out)
    with recording_upstream() as upstream:
        package.call(upstream.url, "make", {})
        sent = upstream.last()
        assert (sent.method, sent.path, sent.body, sent.content_type) == ("POST", "/things", b"{}", "application/json")
        package.call(upstream.url, "opt", {})
        assert upstream.last().body == b""  # an optional body stays absent
