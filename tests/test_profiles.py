"""Client profiles (codegen/surface/profiles): the transforms, the separate checker (one hand-made violation
per rule, so a checker bug shows), and --client / the `client` config key / --check --client through the CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from codegen.cli import app
from codegen.config import Config
from codegen.pipeline import analyze
from codegen.surface.profiles import apply_profiles, check_tools, tool_cap
from codegen.surface.profiles.names import name_limit
from codegen.surface.profiles.refs import CUT_NOTE, INLINE_DEPTH, inline_refs
from codegen.surface.profiles.rules import Rules
from codegen.surface.profiles.shape import Shaper

from conftest import mini_spec, write_spec

CLIENTS = ("portable", "claude", "openai", "gemini", "cursor", "vscode")
OK_TOOL: dict[str, Any] = {
    "name": "get_thing",
    "title": "Get thing",
    "description": "d",
    "inputSchema": {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
    },
    "annotations": {},
}


def tool_with(**changes: Any) -> list[dict[str, Any]]:
    tool = copy.deepcopy(OK_TOOL)
    tool.update(changes)
    return [tool]


def schema_with(**properties: Any) -> list[dict[str, Any]]:
    return tool_with(
        inputSchema={
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }
    )


def rules_broken(tools: Any, client: str, server: str = "srv") -> list[tuple[str, str]]:
    return [(v.pointer, v.rule) for v in check_tools(tools, [client], server) if v.client == client]


def test_a_clean_tool_breaks_no_rule() -> None:
    for client in CLIENTS:
        tools = [copy.deepcopy(OK_TOOL)]
        if client == "openai":
            tools[0]["inputSchema"]["additionalProperties"] = False
        assert rules_broken(tools, client) == [], client


# (client, tools.json, a pointer and a piece of the rule the checker must report)
VIOLATIONS: list[tuple[str, Any, str, str]] = [
    ("portable", tool_with(name="9starts-with-digit"), "/0/name", "tool name must match"),
    ("portable", tool_with(name="has space"), "/0/name", "tool name must match"),
    ("claude", tool_with(name="x" * 65), "/0/name", "tool name must match"),
    ("portable", [copy.deepcopy(OK_TOOL), copy.deepcopy(OK_TOOL)], "/1/name", "used twice"),
    ("portable", tool_with(inputSchema={"type": "array"}), "/0/inputSchema/type", "root must have type: object"),
    ("portable", tool_with(inputSchema={"type": "object", "anyOf": []}), "/0/inputSchema/anyOf", "must not use anyOf"),
    ("portable", tool_with(outputSchema={"type": "string"}), "/0/outputSchema/type", "root must have type: object"),
    ("portable", tool_with(inputSchema="nope"), "/0/inputSchema", "must be an object"),
    ("portable", schema_with(**{"a b": {"type": "string"}}), "/0/inputSchema/properties/a b", "argument name"),
    ("gemini", schema_with(**{"x-y": {"type": "string"}}), "/0/inputSchema/properties/x-y", "argument name"),
    ("gemini", tool_with(name="-dash-first"), "/0/name", "tool name must match"),
    ("cursor", tool_with(name="n" * 56), "/0/name", "plus tool name is 59"),  # server "srv": 3 + 56 > 60? no: 59
    ("cursor", tool_with(name="n" * 58), "/0/name", "at most 60"),
    ("cursor", [dict(OK_TOOL, name=f"t{i}") for i in range(41)], "", "more than 40 tools"),
    ("vscode", [dict(OK_TOOL, name=f"t{i}") for i in range(129)], "", "more than 128 tools"),
    ("openai", [dict(OK_TOOL, name=f"t{i}") for i in range(129)], "", "discovery surface"),
    ("gemini", schema_with(a={"$ref": "#/$defs/A"}), "/0/inputSchema/properties/a/$ref", "no '$ref'"),
    ("gemini", schema_with(a={"type": "string", "const": "x"}), "/0/inputSchema/properties/a/const", "no 'const'"),
    ("gemini", schema_with(a={"type": ["string", "null"]}), "/0/inputSchema/properties/a/type", "one type name"),
    ("gemini", schema_with(a={"description": "any"}), "/0/inputSchema/properties/a", "needs a type"),
    ("gemini", schema_with(a={"type": "integer", "enum": [1, 2]}), "/0/inputSchema/properties/a/enum", "strings"),
    ("gemini", schema_with(a={"type": "string", "format": "uri"}), "/0/inputSchema/properties/a/format", "format"),
    ("gemini", schema_with(a={"type": "object"}), "/0/inputSchema/properties/a", "properties on a nested object"),
    ("gemini", schema_with(a={"type": "array"}), "/0/inputSchema/properties/a", "items on an array"),
    (
        "gemini",
        schema_with(a={"type": "object", "patternProperties": {}}),
        "/0/inputSchema/properties/a/patternProperties",
        "no 'patternProperties'",
    ),
    ("gemini", schema_with(a=True), "/0/inputSchema/properties/a", "no boolean schemas"),
    (
        "openai",
        schema_with(a={"type": "object", "properties": {}}),
        "/0/inputSchema/properties/a",
        "additionalProperties: false",
    ),
    (
        "openai",
        tool_with(
            inputSchema={"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
        ),
        "/0/inputSchema/properties/a",
        "every property in required",
    ),
    (
        "openai",
        schema_with(a={"type": "string", "default": "x"}),
        "/0/inputSchema/properties/a/default",
        "does not take 'default'",
    ),
    (
        "openai",
        schema_with(a={"oneOf": [{"type": "string"}]}),
        "/0/inputSchema/properties/a/oneOf",
        "does not take 'oneOf'",
    ),
    ("openai", schema_with(a={"description": "any"}), "/0/inputSchema/properties/a", "needs a type"),
    (
        "openai",
        schema_with(a={"type": "string", "format": "uri"}),
        "/0/inputSchema/properties/a/format",
        "format 'uri'",
    ),
    (
        "openai",
        schema_with(a={"type": ["string", "null"], "enum": ["x"]}),
        "/0/inputSchema/properties/a/enum",
        "must list null",
    ),
    (
        "openai",
        schema_with(a={"type": "string", "enum": [str(i) for i in range(1001)]}),
        "/0/inputSchema",
        "enum values",
    ),
]


def _nested(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"n": node}, "required": ["n"], "additionalProperties": False}
    return node


VIOLATIONS.append(("openai", schema_with(a=_nested(10)), "/0/inputSchema/properties/a" + "/properties/n" * 9, "levels"))
VIOLATIONS.append(
    ("openai", schema_with(**{f"p{i}": {"type": "string"} for i in range(5001)}), "/0/inputSchema", "object properties")
)


@pytest.mark.parametrize("client, tools, pointer, rule", VIOLATIONS, ids=[f"{v[0]}-{v[3][:30]}" for v in VIOLATIONS])
def test_the_checker_reports_each_rule(client: str, tools: Any, pointer: str, rule: str) -> None:
    if rule == "plus tool name is 59":  # 3 + 56 = 59 fits: no violation
        assert rules_broken(tools, client) == []
        return
    found = rules_broken(tools, client)
    assert any(p == pointer and rule in r for p, r in found), found


def test_a_tool_cap_violation_is_an_error_naming_the_discovery_surface() -> None:
    tools = [dict(OK_TOOL, name=f"t{i}") for i in range(41)]
    (cap,) = [v for v in check_tools(tools, ["cursor"], "srv") if v.client == "cursor"]
    assert cap.level.value == "error" and "discovery surface" in cap.rule
    assert tool_cap(["cursor"]) == 40 and tool_cap(["vscode", "openai"]) == 128 and tool_cap(["claude"]) is None
    assert tool_cap(["vscode", "cursor"]) == 40


def test_unreadable_tools_json_is_an_error() -> None:
    assert [v.rule for v in check_tools({"not": "a list"}, ["portable"], "s")] == ["tools.json must be a list of tools"]


# -- transforms ------------------------------------------------------------------------------------------------


def test_strict_shape_requires_everything_and_restores_absent() -> None:
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "tag": {"type": "string", "enum": ["a", "b"], "default": "a"},
            "meta": {"type": "object", "properties": {"color": {"const": "red"}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "either": {"type": ["string", "integer"]},
        },
        "required": ["id"],
    }
    shaped, restore = Shaper(gemini=False, strict=True).root(schema)
    assert shaped["required"] == ["id", "tag", "meta", "labels", "either"]
    assert shaped["additionalProperties"] is False
    props = shaped["properties"]
    assert props["id"] == {"type": "integer"}
    assert props["tag"]["type"] == ["string", "null"] and props["tag"]["enum"] == ["a", "b", None]
    assert 'Default: "a"' in props["tag"]["description"]
    assert props["meta"]["properties"]["color"]["enum"] == ["red", None]
    assert props["meta"]["additionalProperties"] is False
    assert props["labels"]["type"] == ["string", "null"] and "JSON text" in props["labels"]["description"]
    assert props["either"]["anyOf"] == [{"type": "string"}, {"type": "integer"}, {"type": "null"}]
    assert restore["properties"] == {
        "tag": {"absent": True},
        "meta": {"absent": True, "properties": {"color": {"absent": True}}},
        "labels": {"absent": True, "json": True},
        "either": {"absent": True},
    }
    assert rules_broken(tool_with(inputSchema=shaped), "openai") == []


def test_gemini_shape_uses_its_subset() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": ["string", "null"], "format": "date-time"},
            "url": {"type": "string", "format": "uri", "examples": ["https://x"]},
            "mode": {"const": "fast"},
            "level": {"type": "integer", "enum": [1, 2]},
            "anything": {},
            "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "both": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"required": ["a"]}]},
        },
    }
    shaped, restore = Shaper(gemini=True, strict=False).root(schema)
    props = shaped["properties"]
    assert props["when"] == {"type": "string", "format": "date-time", "nullable": True}
    assert props["url"]["example"] == "https://x" and "Format: uri." in props["url"]["description"]
    assert props["mode"] == {"type": "string", "enum": ["fast"]}
    assert "enum" not in props["level"] and "One of: 1, 2." in props["level"]["description"]
    assert props["anything"]["type"] == "string" and restore["properties"]["anything"] == {"json": True}
    assert props["pick"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert props["both"] == {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert rules_broken(tool_with(inputSchema=shaped), "gemini") == []


def test_recursion_is_cut_to_a_loosened_object() -> None:
    node = {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}, "name": {"type": "string"}}}
    schema = {"type": "object", "properties": {"tree": {"$ref": "#/$defs/Node"}}, "$defs": {"Node": node}}
    inlined, cuts = inline_refs(schema)
    assert cuts == 1 and "$defs" not in inlined
    child = inlined["properties"]["tree"]["properties"]["child"]
    assert child == {"type": "object", "description": CUT_NOTE}
    chain = {f"D{i}": {"type": "object", "properties": {"x": {"$ref": f"#/$defs/D{i + 1}"}}} for i in range(9)}
    chain["D9"] = {"type": "string"}
    deep, cuts = inline_refs({"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": chain})
    node = deep["properties"]["x"]
    for _ in range(INLINE_DEPTH - 1):
        node = node["properties"]["x"]
    assert cuts == 1 and node["properties"]["x"]["description"] == CUT_NOTE


def _tools(tmp_path: Path, paths: dict[str, Any], **config: Any) -> list[Any]:
    spec = write_spec(tmp_path, mini_spec(paths))
    api, tools, problems = analyze(Config(spec=str(spec), validate=False, **config))
    return tools


LONG_PATHS = {
    f"/very/long/resource/path/number/{i}/with/many/segments/for/naming": {
        "get": {
            "operationId": f"getTheVeryLongResourceNumber{i}WithManySegmentsForNamingPurposesOk",
            "responses": {"200": {"description": "ok"}},
        }
    }
    for i in range(3)
}


def test_cursor_names_are_short_unique_and_stable(tmp_path: Path) -> None:
    tools = _tools(tmp_path, LONG_PATHS, clients=("cursor",), name="server")
    names = [t.name for t in tools]
    assert len(set(names)) == 3 and all(len("server") + len(n) <= 60 for n in names)
    assert name_limit(Rules.of(["cursor"]), "server") == 54
    fewer = _tools(tmp_path, dict(list(LONG_PATHS.items())[1:]), clients=("cursor",), name="server")
    assert [t.name for t in fewer] == names[1:]  # derived from the name, not from the order
    assert [t.name for t in _tools(tmp_path, LONG_PATHS, name="server")] != names  # portable keeps 64


def test_gemini_renames_arguments_and_the_plan_follows(tmp_path: Path) -> None:
    paths = {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [{"name": "page-size", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}},
            }
        }
    }
    (tool,) = _tools(tmp_path, paths, clients=("gemini",))
    assert list(tool.input_schema["properties"]) == ["page_size"]
    assert [(a.arg, a.name) for a in tool.plan.args] == [("page_size", "page-size")]


def test_gemini_renamed_arguments_are_the_ones_next_pages_use(tmp_path: Path) -> None:
    # the result plan named the old keys: the next call's arguments carried `page-token`, which the tool no longer
    # takes (and the cursor was not sent)
    listed = {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}
    body = {"type": "object", "properties": {"items": listed, "nextPageToken": {"type": "string"}}}
    paths = {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [
                    {"name": "page-token", "in": "query", "schema": {"type": "string"}},
                    {"name": "page-size", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": body}}}},
            }
        }
    }
    (tool,) = _tools(tmp_path, paths, clients=("gemini",))
    assert tool.plan.results is not None and tool.plan.results.pages is not None
    pages = tool.plan.results.pages
    assert (pages.kind, pages.param, pages.size) == ("cursor", "page_token", "page_size")
    assert {pages.param, pages.size} <= set(tool.input_schema["properties"])


def test_openai_and_gemini_together_warn(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path, mini_spec({"/a": {"get": {"operationId": "a", "responses": {"200": {"description": "ok"}}}}})
    )
    _, _, problems = analyze(Config(spec=str(spec), validate=False, clients=("openai", "gemini")))
    assert any("cannot both be met" in p.message for p in problems)


# -- the command line ----------------------------------------------------------------------------------------

runner = CliRunner()
MINI = {
    "/items/{id}": {
        "get": {
            "operationId": "getItem",
            "parameters": [
                {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "fields", "in": "query", "schema": {"type": ["string", "null"]}},
            ],
            "responses": {"200": {"description": "ok"}},
        }
    }
}


def test_client_flag_and_check_for_another_client(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, {**mini_spec(MINI), "openapi": "3.1.0"})
    out = tmp_path / "a-server-name-that-is-long-enough-to-matter"
    done = runner.invoke(app, [str(spec), "-o", str(out), "--client", "claude", "-q"])
    assert done.exit_code == 0, done.output
    same = runner.invoke(app, [str(spec), "-o", str(out), "--client", "claude", "--check"])
    assert same.exit_code == 0, same.output
    other = runner.invoke(app, [str(spec), "-o", str(out), "--client", "gemini", "--check"])
    assert other.exit_code == 1
    assert "gemini: tool 'get_item'" in other.output and "one type name" in other.output
    assert "breaks the rules of: gemini" in other.output
    bad = runner.invoke(app, [str(spec), "-o", str(out), "--client", "netscape"])
    assert bad.exit_code == 2 and "must be one of" in bad.output


def test_client_config_key(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, mini_spec(MINI))
    (tmp_path / "mcp-codegen.toml").write_text('client = ["openai"]\n', encoding="utf-8")
    out = tmp_path / "srv"
    done = runner.invoke(app, [str(spec), "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    (tool,) = json.loads((out / "src" / "srv" / "tools.json").read_text())
    assert tool["inputSchema"]["required"] == ["id", "fields"]
    routes = json.loads((out / "src" / "srv" / "routes.json").read_text())
    assert routes["get_item"]["restore"] == {"fields": {"absent": True}}
    (tmp_path / "mcp-codegen.toml").write_text('client = ["opera"]\n', encoding="utf-8")
    bad = runner.invoke(app, [str(spec), "-o", str(out)])
    assert bad.exit_code == 2 and "'client' 'opera' must be one of" in bad.output


def test_profiles_change_nothing_for_portable_when_names_fit(tmp_path: Path) -> None:
    tools = _tools(tmp_path, MINI)
    again, problems = apply_profiles(tools, ["portable", "claude"], "srv")
    assert [t.to_json() for t in again] == [t.to_json() for t in tools] and problems == []


def test_check_file_bounds_what_it_reads(tmp_path: Path) -> None:
    from codegen.surface.profiles.check import check_file

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    (problem,) = check_file(deep, ["portable"], "s")
    assert problem.level.value == "error" and "cannot read" in problem.rule
    assert check_file(tmp_path / "missing.json", ["portable"], "s") == []
    nested: Any = {"type": "string"}
    for _ in range(5000):
        nested = {"type": "object", "properties": {"n": nested}}
    found = check_tools(schema_with(a=nested), ["gemini", "openai"], "s")  # iterative walks: no RecursionError
    assert any("levels of objects" in v.rule for v in found)
