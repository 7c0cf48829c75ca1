"""References and argument names: $ref to files, URLs and components (only the definitions used kept), names that
are safe, unique and deterministic. The real pipeline on fixture specs and small inline specs (support/mapped.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from codegen.config import Config
from codegen.pipeline import analyze, generate
from codegen.problems import Level
from codegen.surface.naming import arg_keys
from codegen.surface.plans import ToolSpec
from conftest import FIXTURES, mini_spec, write_spec
from support.recorder import Reply, Upstream, recording_upstream
from support.mapped import post_x_spec, tools_of


# -- $ref: files, URLs, components, only used definitions ---------------------------------------------------
def _check_refs_tools(tools: dict[str, ToolSpec]) -> None:
    assert sorted(tools) == ["create_customer", "get_order", "ping", "put_order"]
    get_order = tools["get_order"]
    assert {k: v for k, v in get_order.input_schema["properties"].items() if k != "fields"} == {
        "orderId": {"type": "integer", "format": "int64"},  # path-item parameter, via components/parameters
        "page": {"type": "integer", "minimum": 1},  # components/parameters -> another file
    }  # `fields`: the result projection every JSON-object tool takes
    assert get_order.plan.path == "/orders/{orderId}" and get_order.plan.method == "GET"
    put_order = tools["put_order"].input_schema  # components/requestBodies -> schemas/order.yaml
    assert put_order["required"] == ["orderId", "item"]
    assert put_order["properties"]["customer"] == {
        "$ref": "#/$defs/" + next(k for k in put_order["$defs"] if k.startswith("Customer"))
    }
    assert sorted(k.split("_")[0] for k in put_order["$defs"]) == ["Customer", "order"]
    customer = tools["create_customer"].input_schema  # a path item in another file, circular schemas across files
    name = next(k for k in customer["$defs"] if k.startswith("Customer"))
    assert customer["$defs"][name]["properties"]["referrer"] == {"$ref": f"#/$defs/{name}"}
    assert tools["ping"].input_schema == {"type": "object", "properties": {}}  # no $defs it does not use
    assert "Unused" not in json.dumps([t.to_json() for t in tools.values()])


def test_refs_to_files_components_and_path_items() -> None:
    _check_refs_tools(tools_of(FIXTURES / "refs" / "main.yaml"))


@pytest.fixture(scope="module")
def served_refs() -> Iterator[Upstream]:
    """fixtures/refs served over HTTP on 127.0.0.1."""
    root = FIXTURES / "refs"

    def serve(request: Any) -> Reply:
        path = (root / request.path.lstrip("/")).resolve()
        if root.resolve() not in path.parents or not path.is_file():
            return Reply(404, b"not found", (("Content-Type", "text/plain"),))
        return Reply(200, path.read_bytes(), (("Content-Type", "application/yaml"),))

    with recording_upstream() as upstream:
        upstream.respond_with(serve)
        yield upstream


def test_refs_over_http(served_refs: Upstream) -> None:
    _check_refs_tools(tools_of(served_refs.url + "/main.yaml"))
    fetched = {r.path for r in served_refs.requests}
    assert {"/main.yaml", "/paths.yaml", "/parameters.yaml", "/schemas/order.yaml", "/schemas/customer.yaml"} <= fetched


def test_ref_to_a_url_from_a_local_file(served_refs: Upstream, tmp_path: Path) -> None:
    body = {"content": {"application/json": {"schema": {"$ref": served_refs.url + "/schemas/customer.yaml#/Customer"}}}}
    spec = mini_spec(
        {"/c": {"post": {"operationId": "postC", "requestBody": body, "responses": {"204": {"description": "ok"}}}}}
    )
    schema = tools_of(write_spec(tmp_path, spec), allow_remote_refs=True)["post_c"].input_schema
    assert set(schema["properties"]) == {"name", "referrer", "orders"}
    assert sorted(k.split("_")[0] for k in schema["$defs"]) == ["Customer", "order"]


def test_broken_external_ref_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    body = {"content": {"application/json": {"schema": {"$ref": "missing.yaml#/X"}}}}
    spec = mini_spec(
        {"/c": {"post": {"operationId": "postC", "requestBody": body, "responses": {"204": {"description": "ok"}}}}}
    )
    result = generate(Config(spec=str(write_spec(tmp_path, spec)), validate=False))
    assert any("missing.yaml" in p.message for p in result.problems), [str(p) for p in result.problems]


# -- argument names ----------------------------------------------------------------------------------------
def test_argument_keys_are_safe_unique_and_deterministic() -> None:
    wires = [
        ("filter[status]", "query"),
        ("filter_status", "query"),
        ("$select", "query"),
        ("名前", "query"),
        ("naïve", "header"),
        ("x" * 80, "query"),
        ("id", "path"),
        ("id", "body"),
        ("page.size", "query"),
    ]
    keys = arg_keys(wires)
    assert keys == arg_keys(list(wires))
    assert len(set(keys)) == len(keys)
    assert all(
        len(k) <= 64 and k.replace("_", "").replace(".", "").replace("-", "").isalnum() and k.isascii() for k in keys
    )
    assert keys[:3] == ["filter_status_2", "filter_status", "select"]
    assert keys[3].startswith("arg_") and keys[4] == "naive"
    assert keys[5].startswith("x" * 40) and len(keys[5]) == 64
    assert keys[6:] == ["id__path", "id__body", "page.size"]


def test_generation_is_byte_deterministic(tmp_path: Path) -> None:
    first = generate(Config(spec=str(FIXTURES / "styles.yaml"), output=tmp_path / "a"))
    second = generate(Config(spec=str(FIXTURES / "styles.yaml"), output=tmp_path / "a"))
    assert first.files and dict(first.files) == dict(second.files)
    assert [str(p) for p in first.problems] == [str(p) for p in second.problems]
    warned = [p for p in first.problems if p.level == Level.WARNING and "client-safe" in p.message]
    assert {p.pointer for p in warned} == {
        "/paths/~1odd-names/get/parameters/0",
        "/paths/~1odd-names/get/parameters/1",
        "/paths/~1odd-names/get/parameters/3",
    }


def test_odd_operation_ids_give_readable_unique_tool_names(tmp_path: Path) -> None:
    ok = {"204": {"description": "ok"}}
    spec = mini_spec(
        {
            "/users/{id}": {"get": {"operationId": "ユーザー取得", "responses": ok}},
            "/cafés": {
                "get": {"operationId": "listCafés", "responses": ok},
                "post": {"operationId": "list-cafés", "responses": ok},
            },
        }
    )
    api, tools, problems = analyze(Config(spec=str(write_spec(tmp_path, spec)), validate=False))
    names = sorted(t.name for t in tools)
    assert names == ["get_users_id", "list_cafes", "list_cafes_2"]
    messages = [(p.pointer, p.message) for p in problems]
    assert any(pointer == "/paths/~1users~1{id}/get" and "nothing usable" in m for pointer, m in messages), messages
    assert any(pointer == "/paths/~1cafés/post" and "already used" in m for pointer, m in messages), messages


def test_a_type_that_is_not_a_type_name_is_reported_not_a_crash(tmp_path: Path) -> None:
    """codat.io/accounting.json has `type: {description, enum, type}` (a schema where a type name belongs)."""
    body = {"type": "object", "properties": {"kind": {"type": {"type": "string", "enum": ["a"]}}}}
    spec = post_x_spec(body)
    path = write_spec(tmp_path, spec)
    assert tools_of(path)["post_x"].input_schema["properties"]["kind"] == {}
    problems = analyze(Config(spec=str(path), validate=False))[2]
    assert any(p.message.startswith("unknown type") and p.pointer.endswith("/properties/kind/type") for p in problems)


def test_a_property_named_mapping_keeps_its_definitions(tmp_path: Path) -> None:
    """googleapis transcoder: `TextStream.mapping` (a property, not a discriminator's mapping) refers to `TextMapping`."""
    schemas = {
        "Stream": {
            "type": "object",
            "properties": {"mapping": {"type": "array", "items": {"$ref": "#/components/schemas/Mapping"}}},
        },
        "Mapping": {"type": "object", "properties": {"key": {"type": "string"}}},
    }
    spec = post_x_spec({"$ref": "#/components/schemas/Stream"}, components={"schemas": schemas})
    schema = tools_of(write_spec(tmp_path, spec))["post_x"].input_schema
    assert schema["properties"]["mapping"]["items"] == {"$ref": "#/$defs/Mapping"}
    assert "Mapping" in schema["$defs"]


def test_one_of_whose_members_are_the_same_schema_becomes_any_of(tmp_path: Path) -> None:
    """Two named schemas with the same content under a discriminated oneOf: no value could match exactly one,
    so the tool would refuse every call; it is kept as anyOf, with a warning, and a value validates."""
    pet = {"type": "object", "properties": {"kind": {"type": "string"}, "name": {"type": "string"}}}
    body = {
        "oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
        "discriminator": {"propertyName": "kind"},
    }
    differ = {"oneOf": [{"$ref": "#/components/schemas/Cat"}, {"type": "integer"}]}
    spec = mini_spec(
        {
            "/pets": {
                "post": {
                    "operationId": "addPet",
                    "requestBody": {"content": {"application/json": {"schema": body}}},
                    "responses": {"204": {"description": "ok"}},
                },
                "put": {
                    "operationId": "putPet",
                    "requestBody": {"content": {"application/json": {"schema": differ}}},
                    "responses": {"204": {"description": "ok"}},
                },
            }
        },
        components={"schemas": {"Cat": {**pet, "title": "Cat"}, "Dog": {**pet, "description": "A dog"}}},
    )
    _, tools, problems = analyze(Config(spec=str(write_spec(tmp_path, spec)), validate=False))
    by_name = {t.name: t for t in tools}
    schema = by_name["add_pet"].input_schema
    body_schema = schema["properties"]["body"]
    assert "oneOf" not in json.dumps(schema) and body_schema["anyOf"] and body_schema["discriminator"]
    jsonschema.validate({"body": {"kind": "cat", "name": "Tom"}}, schema)
    assert [p.pointer for p in problems if "same schema" in p.message] == [
        "/paths/~1pets/post/requestBody/content/application~1json/schema/oneOf"
    ]
    assert "oneOf" in json.dumps(by_name["put_pet"].input_schema)  # members that differ: oneOf stays
