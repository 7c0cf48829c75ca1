"""Input dialects: Swagger 2.0, OpenAPI 3.0 and 3.1 schemas.

These run the real pipeline (load, validate, upgrade, normalize, map) on the fixture specs and on small
inline specs, and check the tool schemas and the problems it reports. References and argument names:
test_refs_and_names.py."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from codegen.config import Config
from codegen.spec.load import load
from codegen.pipeline import analyze
from codegen.problems import Level
from codegen.surface.plans import ToolSpec
from codegen.spec.upgrade import upgrade
from conftest import FIXTURES, mini_spec, write_spec
from support.mapped import post_x_spec, tools_of


# -- Swagger 2.0 ----------------------------------------------------------------------------------------------
def test_swagger2_security_definitions_become_security_schemes() -> None:
    api, _, _ = analyze(Config(spec=str(FIXTURES / "swagger2.yaml")))
    assert api is not None
    schemes = {s.key: s for s in api.security_schemes}
    assert (schemes["apiKey"].type, schemes["apiKey"].location, schemes["apiKey"].name) == (
        "apiKey",
        "header",
        "X-API-Key",
    )
    assert (schemes["basic"].type, schemes["basic"].scheme) == ("http", "basic")
    assert schemes["oauth"].type == "oauth2"
    documents, _ = load(str(FIXTURES / "swagger2.yaml"))
    assert documents is not None
    upgraded, _, _ = upgrade(documents)
    assert upgraded.root["components"]["securitySchemes"]["oauth"] == {
        "type": "oauth2",
        "flows": {
            "authorizationCode": {
                "authorizationUrl": "https://auth.example.invalid/authorize",
                "tokenUrl": "https://auth.example.invalid/token",
                "scopes": {"pets:read": "read pets"},
            }
        },
    }
    assert api.servers[0] == "https://api.example.invalid/v2"
    by_name = {op.operation_id: op for op in api.operations}
    assert by_name["renamePet"].security == ((("basic", ()),),)
    assert by_name["listPets"].security == ((("apiKey", ()),),)


def test_swagger2_problems_point_into_the_2_0_document(tmp_path: Path) -> None:
    spec = {
        "swagger": "2.0",
        "info": {"title": "Two", "version": "1"},
        "paths": {
            "/x": {
                "get": {
                    "operationId": "getX",
                    "parameters": [{"name": "filter[a]", "in": "query", "type": "string"}],
                    "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Bad"}}},
                },
                "post": {
                    "operationId": "postX",
                    "parameters": [
                        {
                            "name": "body",
                            "in": "body",
                            "schema": {"type": "object", "properties": {"a b": {"type": "string"}}},
                        }
                    ],
                    "responses": {"204": {"description": "ok"}},
                },
            }
        },
        "definitions": {"Bad": {"type": "strin"}},
    }
    found = {
        (p.pointer, p.message.split(";")[0])
        for p in analyze(Config(spec=str(write_spec(tmp_path, spec)), validate=False))[2]
    }
    assert (
        "/paths/~1x/get/parameters/0",
        "query parameter 'filter[a]' is not a client-safe argument name (^[a-zA-Z0-9_.-]{1,64}$)",
    ) in found
    assert (
        "/paths/~1x/post/parameters/0/schema/properties/a b",
        "body property 'a b' is not a client-safe argument name (^[a-zA-Z0-9_.-]{1,64}$)",
    ) in found
    assert ("/definitions/Bad/type", "unknown type ['strin'] ignored") in found
    assert not any("components" in pointer or "requestBody" in pointer for pointer, _ in found), found


def test_swagger2_with_external_files(tmp_path: Path) -> None:
    (tmp_path / "params.yaml").write_text(
        "Q: {name: q, in: query, type: array, items: {type: string}, collectionFormat: pipes}\n", encoding="utf-8"
    )
    (tmp_path / "defs.yaml").write_text(
        "Thing:\n  type: object\n  properties:\n    f: {type: string, x-nullable: true}\n"
        "    other: {$ref: '#/Other'}\nOther: {type: integer, format: int64}\n",
        encoding="utf-8",
    )
    op = {
        "operationId": "postA",
        "parameters": [
            {"$ref": "params.yaml#/Q"},
            {"name": "body", "in": "body", "schema": {"$ref": "defs.yaml#/Thing"}},
        ],
        "responses": {"200": {"description": "ok", "schema": {"$ref": "defs.yaml#/Thing"}}},
    }
    spec = {"swagger": "2.0", "info": {"title": "Ext", "version": "1"}, "paths": {"/a": {"post": op}}}
    tool = tools_of(write_spec(tmp_path, spec))["post_a"]
    props = tool.input_schema["properties"]
    assert props["f"] == {"type": ["string", "null"]} and props["q"] == {"type": "array", "items": {"type": "string"}}
    other = props["other"]["$ref"].split("/")[-1]
    assert tool.input_schema["$defs"][other] == {"type": "integer", "format": "int64"}
    q = next(a for a in tool.plan.args if a.name == "q")
    assert (q.location, q.style, q.explode) == ("query", "pipeDelimited", False)


def test_swagger2_path_level_form_fields_join_the_operations_own(tmp_path: Path) -> None:
    # the path item's formData field stays an argument when the operation declares form fields of its own (it was
    # dropped, required or not); one the operation redeclares is the operation's, and a body excludes form fields
    shared = [
        {"name": "token", "in": "formData", "type": "string", "required": True},
        {"name": "note", "in": "formData", "type": "string", "required": True},
    ]
    post = {
        "operationId": "upload",
        "consumes": ["application/x-www-form-urlencoded"],
        "parameters": [{"name": "note", "in": "formData", "type": "integer"}],
        "responses": {"200": {"description": "ok"}},
    }
    put = {
        "operationId": "replace",
        "parameters": [
            {"name": "body", "in": "body", "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}
        ],
        "responses": {"200": {"description": "ok"}},
    }
    paths = {"/upload": {"parameters": shared, "post": post, "put": put}}
    spec = {"swagger": "2.0", "info": {"title": "Form", "version": "1"}, "paths": paths}
    tools = tools_of(write_spec(tmp_path, spec))
    upload = tools["upload"]
    assert upload.input_schema["properties"] == {"note": {"type": "integer"}, "token": {"type": "string"}}
    assert upload.input_schema["required"] == ["token"]
    assert [(a.name, a.location) for a in upload.plan.args] == [("note", "body"), ("token", "body")]
    assert list(tools["replace"].input_schema["properties"]) == ["a"]


def test_swagger2_an_operations_own_body_replaces_the_path_items(tmp_path: Path) -> None:
    # there is one body: the operation's, whatever the names; an operation without one takes the path item's
    shared = [
        {"name": "data", "in": "body", "schema": {"type": "object", "properties": {"shared": {"type": "string"}}}}
    ]
    own = {"name": "payload", "in": "body", "schema": {"type": "object", "properties": {"own": {"type": "integer"}}}}
    post = {"operationId": "create", "parameters": [own], "responses": {"200": {"description": "ok"}}}
    put = {"operationId": "replace", "responses": {"200": {"description": "ok"}}}
    paths = {"/things": {"parameters": shared, "post": post, "put": put}}
    spec = {"swagger": "2.0", "info": {"title": "Bodies", "version": "1"}, "paths": paths}
    tools = tools_of(write_spec(tmp_path, spec))
    assert list(tools["create"].input_schema["properties"]) == ["own"]
    assert list(tools["replace"].input_schema["properties"]) == ["shared"]


def test_swagger2_external_file_refers_back_to_the_roots_definitions() -> None:
    # models.yaml refers to root.yaml#/definitions/Money and #/parameters/Page, which the upgrade moved
    api, tools, problems = analyze(Config(spec=str(FIXTURES / "swagger2-refs" / "root.yaml")))
    assert not problems, [str(p) for p in problems]
    tool = {t.name: t for t in tools}["create_order"]
    schema = tool.input_schema
    assert schema["properties"]["total"] == {"$ref": "#/$defs/Money"}
    assert schema["properties"]["page"] == {"type": "integer", "minimum": 1}
    money = schema["$defs"]["Money"]
    assert money["properties"] == {
        "amount": {"type": "integer", "format": "int64"},
        "currency": {"type": ["string", "null"]},
    }
    line = schema["properties"]["lines"]["items"]["$ref"].split("/")[-1]
    assert schema["$defs"][line]["properties"]["price"] == {"$ref": "#/$defs/Money"}
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"total": {"amount": 5, "currency": None}, "lines": [{"price": {"amount": 1}}]})
    assert not validator.is_valid({"total": {"currency": "EUR"}})  # Money's required amount applies
    assert api is not None and api.servers == ("https://api.example.invalid/v2",)


# -- OpenAPI 3.1 -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def three_one() -> dict[str, ToolSpec]:
    return tools_of(FIXTURES / "openapi31.yaml")


def test_31_keywords_are_kept(three_one: dict[str, ToolSpec]) -> None:
    props = three_one["create_thing"].input_schema["properties"]
    assert props["note"]["type"] == ["string", "null"]
    assert props["kind"] == {"const": "thing"}
    assert props["name"]["examples"] == ["lamp", "chair"]
    assert props["size"] == {"type": "integer", "format": "int64", "default": 1}  # int64 stays an integer
    assert props["color"] == {"type": "string", "enum": ["red", "green"], "default": "red"}
    defs = three_one["create_thing"].input_schema["$defs"]
    assert props["dims"]["$ref"].startswith("#/$defs/Dims")  # a schema's own $defs, referenced by pointer
    assert defs[props["dims"]["$ref"].split("/")[-1]]["properties"]["w"] == {"type": "number"}


def test_read_only_and_write_only_by_direction(three_one: dict[str, ToolSpec]) -> None:
    tool = three_one["create_thing"]
    assert "id" not in tool.input_schema["properties"] and "secret" in tool.input_schema["properties"]
    assert tool.output_schema is not None
    assert "id" in tool.output_schema["properties"] and "secret" not in tool.output_schema["properties"]


def test_examples_the_schema_lists_are_not_repeated_in_the_description(three_one: dict[str, ToolSpec]) -> None:
    assert 'Example arguments: {"name":"lamp","size":9007199254740993}' in three_one["create_thing"].description
    assert "Example arguments" not in three_one["get_shape"].description
    assert three_one["get_shape"].input_schema["properties"]["id"]["examples"] == [1]


def test_one_of_and_discriminator_are_kept() -> None:
    _, tools, _ = analyze(Config(spec=str(FIXTURES / "openapi31.yaml"), output_depth=-1))  # full output schemas
    out = {t.name: t for t in tools}["get_shape"].output_schema
    assert out is not None
    shape = out["$defs"]["Shape"]
    assert shape["oneOf"] == [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}]
    assert shape["discriminator"] == {
        "propertyName": "kind",
        "mapping": {"circle": "#/$defs/Circle", "square": "#/$defs/Square"},
    }
    assert out["$defs"]["Circle"]["properties"]["radius"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}


def test_circular_schema_is_a_finite_def(three_one: dict[str, ToolSpec]) -> None:
    schema = three_one["put_tree"].input_schema
    assert list(schema["$defs"]) == ["Node"]
    assert schema["properties"]["parent"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"value": "a", "children": [{"value": "b", "parent": {"value": "c"}}]})
    assert not validator.is_valid({"children": [{"value": 1}]})


def test_31_binary_parts_and_bodies(three_one: dict[str, ToolSpec]) -> None:
    avatar = three_one["upload_avatar"]
    image = avatar.input_schema["properties"]["image"]
    assert image["required"] == ["content"] and image["properties"]["content"]["contentEncoding"] == "base64"
    assert [(a.arg, a.file) for a in avatar.plan.args] == [("image", True), ("note", False)]
    blob = three_one["put_blob"]
    assert blob.input_schema["properties"]["body"]["contentEncoding"] == "base64"  # no schema: bytes
    assert blob.input_schema["required"] == ["name", "body"]


# -- OpenAPI 3.0 schema details --------------------------------------------------------------------------
def test_30_nullable_all_of_and_int64(tmp_path: Path) -> None:
    schemas = {
        "Base": {"type": "object", "properties": {"id": {"type": "integer", "format": "int64"}}},
        "Level": {"type": "string", "enum": ["low", "high"], "nullable": True},
    }
    body = {
        "type": "object",
        "properties": {
            "merged": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"type": "object", "properties": {"b": {"type": "integer", "format": "int64"}}},
                ]
            },
            "untyped": {"allOf": [{"properties": {"a": {"type": "string"}}}, {"required": ["a"]}]},
            "conflict": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}},
                    {"type": "object", "properties": {"a": {"maxLength": 3}}},
                ]
            },
            "described": {"allOf": [{"$ref": "#/components/schemas/Base"}], "description": "the base"},
            "level": {"$ref": "#/components/schemas/Level"},
            "maybe": {"allOf": [{"$ref": "#/components/schemas/Base"}], "nullable": True},
            "count": {"type": "integer", "format": "int64", "nullable": True, "example": 3},
        },
    }
    spec = post_x_spec(body, components={"schemas": schemas})
    props = tools_of(write_spec(tmp_path, spec))["post_x"].input_schema["properties"]
    assert props["merged"] == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer", "format": "int64"}},
        "required": ["a"],
    }
    assert props["untyped"] == {"properties": {"a": {"type": "string"}}, "required": ["a"]}  # no type invented
    assert len(props["conflict"]["allOf"]) == 2  # the same property constrained twice: not merged
    assert props["described"] == {"$ref": "#/$defs/Base", "description": "the base"}
    assert props["count"] == {"type": ["integer", "null"], "format": "int64", "examples": [3]}
    assert props["maybe"] == {"anyOf": [{"$ref": "#/$defs/Base"}, {"type": "null"}]}


def test_all_of_with_references_is_merged_where_safe(tmp_path: Path) -> None:
    schemas = {
        "Base": {
            "type": "object",
            "description": "describes Base, not what extends it",
            "properties": {"id": {"type": "integer"}, "tag": {"$ref": "#/components/schemas/Tag"}},
            "required": ["id"],
        },
        "Tag": {"type": "string", "maxLength": 8},
        "Animal": {
            "type": "object",
            "properties": {"kind": {"type": "string"}},
            "discriminator": {"propertyName": "kind"},
        },
        "Loop": {"allOf": [{"$ref": "#/components/schemas/Loop"}, {"properties": {"n": {"type": "integer"}}}]},
    }
    base = {"$ref": "#/components/schemas/Base"}
    body = {
        "type": "object",
        "properties": {
            "extended": {"allOf": [base, {"properties": {"name": {"type": "string"}}, "required": ["name"]}]},
            "clash": {"allOf": [base, {"properties": {"id": {"type": "string"}}}]},
            "dog": {"allOf": [{"$ref": "#/components/schemas/Animal"}, {"properties": {"bark": {"type": "boolean"}}}]},
            "loop": {"$ref": "#/components/schemas/Loop"},
        },
    }
    spec = post_x_spec(body, components={"schemas": schemas})
    schema = tools_of(write_spec(tmp_path, spec))["post_x"].input_schema
    props = schema["properties"]
    assert props["extended"] == {  # Base taken by value; its own description is not copied
        "type": "object",
        "properties": {"id": {"type": "integer"}, "tag": {"$ref": "#/$defs/Tag"}, "name": {"type": "string"}},
        "required": ["id", "name"],
    }
    assert props["clash"]["allOf"][0] == {"$ref": "#/$defs/Base"}  # id declared twice differently: kept
    assert props["dog"]["allOf"][0] == {"$ref": "#/$defs/Animal"}  # a discriminator: kept
    assert schema["$defs"]["Loop"]["allOf"][0] == {"$ref": "#/$defs/Loop"}  # contains itself: kept
    assert sorted(schema["$defs"]) == ["Animal", "Base", "Loop", "Tag"]
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"extended": {"id": 1, "name": "a", "tag": "t"}})
    assert not validator.is_valid({"extended": {"name": "a"}})  # Base's required id still applies


def test_all_of_that_no_value_satisfies_is_reported_and_loosened(tmp_path: Path) -> None:
    """`allOf: [{type: string}, {type: integer}]` (in oas-examples' schema-types) would make the tool uncallable."""
    body = {
        "type": "object",
        "properties": {
            "impossible": {"description": "d", "allOf": [{"type": "string"}, {"type": "integer"}]},
            "number": {"allOf": [{"type": "number"}, {"type": "integer", "minimum": 1}]},  # integers satisfy both
        },
        "required": ["impossible"],
    }
    spec = post_x_spec(body)
    path = write_spec(tmp_path, spec)
    props = tools_of(path)["post_x"].input_schema["properties"]
    assert props["impossible"] == {"description": "d"}
    assert len(props["number"]["allOf"]) == 2
    warnings = [p for p in analyze(Config(spec=str(path)))[2] if "no value can satisfy" in p.message]
    assert [(w.level, w.pointer) for w in warnings] == [
        (
            Level.WARNING,
            "/paths/~1x/post/requestBody/content/application~1json/schema/properties/impossible/allOf",
        )
    ]
    assert "(string, integer)" in warnings[0].message


def test_only_examples_the_schema_does_not_list_are_summarized(tmp_path: Path) -> None:
    schemas = {"Size": {"type": "integer", "example": 3}}
    body = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "example": "lamp"},
            "size": {"$ref": "#/components/schemas/Size"},
            "notes": {"type": "string", "example": "x" * 400},  # too long for the summary: left out
        },
    }
    parameters = [
        {"name": "q", "in": "query", "example": "from-parameter", "schema": {"type": "string", "example": "s"}},
        {"name": "page", "in": "query", "schema": {"type": "integer", "example": 2}},
    ]
    spec = post_x_spec(body, parameters=parameters, components={"schemas": schemas})
    tool = tools_of(write_spec(tmp_path, spec))["post_x"]
    props = tool.input_schema["properties"]
    assert props["q"]["examples"] == ["s"] and props["page"]["examples"] == [2]  # each in its schema
    assert 'Example arguments: {"q":"from-parameter"}' in tool.description  # only what no schema says


def test_30_nullable_enum_allows_null(tmp_path: Path) -> None:
    spec = mini_spec(
        {
            "/x": {
                "get": {
                    "operationId": "getX",
                    "parameters": [
                        {
                            "name": "level",
                            "in": "query",
                            "schema": {"type": "string", "enum": ["low"], "nullable": True},
                        }
                    ],
                    "responses": {"204": {"description": "ok"}},
                }
            }
        }
    )
    level = tools_of(write_spec(tmp_path, spec))["get_x"].input_schema["properties"]["level"]
    assert level == {"type": ["string", "null"], "enum": ["low", None]}
