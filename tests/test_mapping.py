"""Operations -> tools: names, annotations, descriptions, input and output schemas, skipped operations."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from codegen.config import Config
from codegen.pipeline import analyze
from codegen.problems import Level
from codegen.surface.plans import ToolSpec
from conftest import PETSTORE, mini_spec, write_spec

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def tools_of(tmp_path: Path, spec: dict[str, Any]) -> tuple[dict[str, ToolSpec], list[Any]]:
    api, tools, problems = analyze(Config(spec=str(write_spec(tmp_path, spec))))
    return {t.name: t for t in tools}, problems


def op(**fields: Any) -> dict[str, Any]:
    return {"responses": {"200": {"description": "ok"}}, **fields}


def test_petstore_tools_are_valid_and_annotated() -> None:
    api, tools, problems = analyze(Config(spec=str(PETSTORE)))
    assert [p for p in problems if p.level is Level.ERROR] == []
    assert len(tools) == 20
    by_name = {t.name: t for t in tools}
    assert len(by_name) == 20 and all(NAME.match(n) for n in by_name)
    for tool in tools:
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object"
        assert set(tool.input_schema.get("required", [])) <= set(tool.input_schema["properties"])
        if tool.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            assert tool.output_schema["type"] == "object" and "required" not in tool.output_schema
    get_pet = by_name["get_pet_by_id"]
    assert get_pet.annotations == {
        "title": "Find pet by ID",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert get_pet.input_schema["required"] == ["petId"]
    assert get_pet.description == "Returns a single pet\n\nErrors: 400 Invalid ID supplied; 404 Pet not found."
    assert by_name["delete_pet"].annotations["destructiveHint"] is True
    assert by_name["delete_pet"].annotations["idempotentHint"] is True
    assert by_name["update_pet"].annotations["idempotentHint"] is True  # PUT
    assert by_name["add_pet"].annotations["readOnlyHint"] is False  # POST
    assert by_name["add_pet"].annotations["idempotentHint"] is False


def test_json_object_body_is_flattened_and_readonly_dropped() -> None:
    api, tools, _ = analyze(Config(spec=str(PETSTORE)))
    add_pet = next(t for t in tools if t.name == "add_pet")
    props = add_pet.input_schema["properties"]
    assert set(props) == {"category", "name", "photoUrls", "tags", "status"}  # Pet.id is readOnly
    assert add_pet.input_schema["required"] == ["name", "photoUrls"]
    assert set(add_pet.input_schema["$defs"]) == {"Category", "Tag"}  # only what the tool uses
    assert [a.location for a in add_pet.plan.args] == ["body"] * 5


def test_array_response_is_wrapped_as_result() -> None:
    api, tools, _ = analyze(Config(spec=str(PETSTORE)))
    find = next(t for t in tools if t.name == "find_pets_by_status")
    assert find.output_schema is not None
    assert find.output_schema["properties"]["result"]["type"] == "array"
    assert find.plan.wrap_result is True


def test_names_from_operation_ids_and_fallbacks(tmp_path: Path) -> None:
    spec = mini_spec(
        {
            "/pets/{petId}": {
                "parameters": [{"name": "petId", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "get": op(operationId="getPetByID"),
                "delete": op(),
            },
            "/a": {"get": op(operationId="dup"), "post": op(operationId="dup")},
            "/long": {"get": op(operationId="x" * 40 + "_" + "y" * 40)},
        }
    )
    tools, problems = tools_of(tmp_path, spec)
    assert "get_pet_by_id" in tools and "delete_pets_pet_id" in tools
    assert {"dup", "dup_2"} <= set(tools)
    long_name = next(n for n in tools if n.startswith("xxx"))
    assert len(long_name) <= 64 and NAME.match(long_name)
    messages = [p.message for p in problems]
    assert any("shortened" in m for m in messages)
    assert any("'dup' is already used" in m for m in messages)
    assert any("no operationId" in m for m in messages)
    # deterministic: the same spec gives the same names
    assert tools_of(tmp_path, spec)[0].keys() == tools.keys()


def test_same_name_in_two_locations_gets_location_suffixes(tmp_path: Path) -> None:
    spec = mini_spec(
        {
            "/items/{id}": {
                "post": op(
                    operationId="update",
                    parameters=[
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                        {"name": "id", "in": "query", "schema": {"type": "integer"}},
                    ],
                    requestBody={
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["id"],
                                    "properties": {"id": {"type": "integer"}, "note": {"type": "string"}},
                                }
                            }
                        },
                    },
                )
            }
        }
    )
    tools, _ = tools_of(tmp_path, spec)
    tool = tools["update"]
    assert set(tool.input_schema["properties"]) == {"id__path", "id__query", "id__body", "note"}
    assert tool.input_schema["required"] == ["id__path", "id__body"]
    wire = {(a.arg, a.name, a.location) for a in tool.plan.args}
    assert wire == {
        ("id__path", "id", "path"),
        ("id__query", "id", "query"),
        ("id__body", "id", "body"),
        ("note", "note", "body"),
    }


def test_example_arguments_go_to_the_argument_of_their_location(tmp_path: Path) -> None:
    # a path parameter's example was shown under the body property of the same name (`id__body`), the argument
    # that took the wire name last
    body = {"type": "object", "properties": {"id": {"type": "integer"}, "note": {"type": "string"}}}
    parameters = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}, "example": "a1"}]
    content = {"application/json": {"schema": body, "example": {"id": 7, "note": "hi"}}}
    spec = mini_spec(
        {"/items/{id}": {"post": op(operationId="update", parameters=parameters, requestBody={"content": content})}}
    )
    tools, _ = tools_of(tmp_path, spec)
    assert tools["update"].description.endswith('Example arguments: {"id__body":7,"id__path":"a1","note":"hi"}')


def test_a_property_left_out_by_direction_is_not_required_through_all_of(tmp_path: Path) -> None:
    # `allOf: [{$ref: Pet}, {required: [id]}]`: Pet's readOnly id is no input, so it cannot be required there
    # (every call was refused for a missing `id`); nor can a writeOnly password be required in an output
    pet = {"type": "object", "properties": {"id": {"type": "integer", "readOnly": True}, "name": {"type": "string"}}}
    user = {
        "type": "object",
        "properties": {"login": {"type": "string"}, "password": {"type": "string", "writeOnly": True}},
    }
    sent = {"pet": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"required": ["id", "name"]}]}}
    got = {"user": {"allOf": [{"$ref": "#/components/schemas/User"}], "required": ["password", "login"]}}
    content = {"application/json": {"schema": {"type": "object", "properties": sent}}}
    ok = {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "properties": got}}}}
    paths = {
        "/pets": {"post": {"operationId": "addPet", "requestBody": {"content": content}, "responses": {"200": ok}}}
    }
    spec = mini_spec(paths, components={"schemas": {"Pet": pet, "User": user}})
    tools, _ = tools_of(tmp_path, spec)
    tool = tools["add_pet"]
    assert tool.input_schema["properties"]["pet"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    output = tool.output_schema
    assert output is not None
    assert output["properties"]["user"]["required"] == ["login"]


def test_long_definition_names_that_share_their_start_stay_apart(tmp_path: Path) -> None:
    """`$defs` names are cut to 60 characters: two component names that differ only after that (Kubernetes:
    `...MutatingWebhookConfiguration` and `...MutatingWebhookConfigurationList`) each keep their own definition."""
    long = "io.example.api.admissionregistration.v1.MutatingWebhookConfiguration"
    schemas = {
        long: {"type": "object", "properties": {"name": {"type": "string"}}},
        long + "List": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}},
        "Short": {"type": "object", "properties": {"id": {"type": "integer"}}},
    }

    def body(name: str) -> dict[str, Any]:
        ref = {"$ref": f"#/components/schemas/{name}"}
        content = {
            "application/json": {
                "schema": {"type": "object", "properties": {"x": ref, "s": {"$ref": "#/components/schemas/Short"}}}
            }
        }
        return {
            "requestBody": {"content": content},
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": ref}}}},
        }

    spec = mini_spec(
        {
            "/a": {"post": op(operationId="make_a", **body(long))},
            "/b": {"post": op(operationId="make_b", **body(long + "List"))},
        }
    )
    spec["components"] = {"schemas": schemas}
    tools, _ = tools_of(tmp_path, spec)
    a, b = tools["make_a"], tools["make_b"]
    for tool, properties in ((a, {"name"}), (b, {"items"})):
        defs = tool.input_schema["$defs"]
        target = tool.input_schema["properties"]["x"]["$ref"].removeprefix("#/$defs/")
        assert set(defs[target]["properties"]) == properties
        assert set(tool.output_schema["properties"]) == properties
        assert len(target) <= 67 and target.startswith(long[:60])
        assert tool.input_schema["properties"]["s"] == {"$ref": "#/$defs/Short"}  # a plain name stays as it is
    assert a.input_schema["properties"]["x"] != b.input_schema["properties"]["x"]


def test_non_object_body_is_one_argument(tmp_path: Path) -> None:
    body = {
        "required": True,
        "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}},
    }
    tools, _ = tools_of(tmp_path, mini_spec({"/tags": {"put": op(operationId="setTags", requestBody=body)}}))
    tool = tools["set_tags"]
    assert tool.input_schema["properties"] == {"body": {"type": "array", "items": {"type": "string"}}}
    assert tool.input_schema["required"] == ["body"]
    assert tool.plan.body is not None and tool.plan.body.arg == "body"


def test_broken_operation_is_skipped_and_the_rest_generated(tmp_path: Path) -> None:
    spec = mini_spec(
        {
            "/good": {"get": op(operationId="good")},
            "/bad": {"get": op(operationId="bad", parameters=[{"$ref": "#/components/parameters/Missing"}])},
        }
    )
    tools, problems = tools_of(tmp_path, spec)
    assert list(tools) == ["good"]
    errors = [p for p in problems if p.level is Level.ERROR]
    assert len(errors) == 1
    assert errors[0].pointer == "/paths/~1bad/get/parameters/0" and "Missing" in errors[0].message


def test_undeclared_path_parameter_becomes_a_required_string(tmp_path: Path) -> None:
    tools, problems = tools_of(tmp_path, mini_spec({"/users/{userId}": {"get": op(operationId="getUser")}}))
    assert tools["get_user"].input_schema == {
        "type": "object",
        "properties": {"userId": {"type": "string"}},
        "required": ["userId"],
    }
    assert any("'userId' is in the path but not declared" in p.message for p in problems)


def test_circular_schemas_stay_finite(tmp_path: Path) -> None:
    node = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
        },
    }
    spec = mini_spec(
        {
            "/tree": {
                "get": {
                    "operationId": "tree",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}},
                        }
                    },
                }
            }
        },
        components={"schemas": {"Node": node}},
    )
    _, listed, _ = analyze(Config(spec=str(write_spec(tmp_path, spec)), output_depth=-1))  # full schemas
    tools = {t.name: t for t in listed}
    out = tools["tree"].output_schema
    assert out is not None
    assert out["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert set(out["$defs"]) == {"Node"}
    jsonschema.Draft202012Validator.check_schema(out)
    jsonschema.validate({"name": "a", "children": [{"name": "b", "children": []}]}, out)


@pytest.mark.parametrize(
    "openapi,schema,expected",
    [
        ("3.0.3", {"type": "string", "nullable": True}, {"type": ["string", "null"]}),
        ("3.0.3", {"type": "integer", "format": "int64"}, {"type": "integer", "format": "int64"}),
        (
            "3.0.3",
            {"type": "number", "minimum": 1, "exclusiveMinimum": True},
            {"type": "number", "exclusiveMinimum": 1},
        ),
        ("3.0.3", {"type": "string", "example": "x", "x-internal": 1}, {"type": "string", "examples": ["x"]}),
        ("3.1.0", {"type": ["string", "null"], "const": "a"}, {"type": ["string", "null"], "const": "a"}),
        ("3.0.3", {"type": "strin", "required": True}, {}),
    ],
)
def test_schema_keywords(tmp_path: Path, openapi: str, schema: dict[str, Any], expected: dict[str, Any]) -> None:
    spec = mini_spec(
        {"/q": {"get": op(operationId="q", parameters=[{"name": "v", "in": "query", "schema": schema}])}},
        openapi=openapi,
    )
    tools, _ = tools_of(tmp_path, spec)
    assert tools["q"].input_schema["properties"]["v"] == expected
