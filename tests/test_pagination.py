"""Pagination detection (codegen/surface/pagination.py) and the result plan (codegen/surface/results.py): from small
specs in each style, from the real GitHub, Stripe and Slack documents (slow), and the per-operation budget from the
spec (x-mcp-result-tokens) and from the config file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from codegen.config import Config
from codegen.configfile import build_config
from codegen.pipeline import analyze
from codegen.problems import Level
from codegen.surface.plans import ToolSpec
from codegen.surface.results import unrequire
from conftest import mini_spec, write_spec
from named_specs import named_spec
from support.pages_api import SPEC


def tools_of(tmp_path: Path, spec: dict[str, Any], **options: Any) -> dict[str, ToolSpec]:
    _, tools, problems = analyze(Config(spec=str(write_spec(tmp_path, spec)), validate=False, **options))
    assert not [p for p in problems if p.level == Level.ERROR]
    return {t.name: t for t in tools}


def listing(params: list[dict[str, Any]], schema: dict[str, Any], headers: Any = None) -> dict[str, Any]:
    response: dict[str, Any] = {"description": "ok", "content": {"application/json": {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return {"get": {"operationId": "list", "parameters": params, "responses": {"200": response}}}


def q(name: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": kind}}


OBJ = {"type": "object", "properties": {"id": {"type": "string"}}}


def plan(tmp_path: Path, params: list[dict[str, Any]], schema: dict[str, Any], headers: Any = None) -> dict[str, Any]:
    tools = tools_of(tmp_path, mini_spec({"/things": listing(params, schema, headers)}))
    results = tools["list"].plan.results
    assert results is not None
    return results.to_json()


def test_pages_api_styles(tmp_path: Path) -> None:
    tools = tools_of(tmp_path, SPEC)
    plans = {name: t.plan.to_json().get("results", {}) for name, t in tools.items()}
    assert plans["issues_list_for_repo"]["pages"] == {
        "kind": "link",
        "size": "per_page",
        "query": [["state", "state", "string"], ["per_page", "per_page", "integer"], ["page", "page", "integer"]],
    }
    assert plans["issues_list_for_repo"]["items"] == ""
    assert plans["get_customers"]["pages"] == {
        "kind": "after_id",
        "param": "starting_after",
        "flag": "has_more",
        "size": "limit",
    }
    assert plans["get_customers"]["items"] == "data"
    assert plans["files_list"]["pages"] == {
        "kind": "cursor",
        "param": "pageToken",
        "member": "nextPageToken",
        "size": "pageSize",
    }
    assert plans["list_records"]["pages"] == {
        "kind": "offset",
        "param": "offset",
        "total": "total",
        "size": "limit",
        "start": 0,
    }
    assert "pages" not in plans["get_doc"] and plans["get_doc"]["tokens"] == 300
    assert plans["get_customers"]["maxItems"] == "max_items" and plans["get_customers"]["fields"] == "fields"


def test_nested_cursor_and_next_url(tmp_path: Path) -> None:
    slack = {
        "type": "object",
        "properties": {
            "channels": {"type": "array", "items": OBJ},
            "response_metadata": {"type": "object", "properties": {"next_cursor": {"type": "string"}}},
        },
    }
    assert plan(tmp_path, [q("cursor"), q("limit", "integer")], slack)["pages"] == {
        "kind": "cursor",
        "param": "cursor",
        "member": "response_metadata.next_cursor",
        "size": "limit",
    }
    drf = {
        "type": "object",
        "properties": {
            "next": {"type": "string", "format": "uri", "nullable": True},
            "results": {"type": "array", "items": OBJ},
        },
    }
    found = plan(tmp_path, [q("page", "integer")], drf)
    assert found["pages"]["kind"] == "url" and found["pages"]["member"] == "next" and found["items"] == "results"


def test_page_number_needs_a_total_and_nothing_is_guessed(tmp_path: Path) -> None:
    with_total = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": OBJ}, "total_count": {"type": "integer"}},
    }
    found = plan(tmp_path, [q("page", "integer"), q("per_page", "integer")], with_total)["pages"]
    assert found == {"kind": "page", "param": "page", "total": "total_count", "size": "per_page", "start": 1}
    no_total = {"type": "object", "properties": {"items": {"type": "array", "items": OBJ}}}
    assert "pages" not in plan(tmp_path, [q("page", "integer"), q("per_page", "integer")], no_total)
    assert "pages" not in plan(tmp_path, [q("q")], {"type": "array", "items": OBJ})  # a plain list: fields only


def test_spec_parameters_named_like_the_controls_win(tmp_path: Path) -> None:
    google = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": OBJ}, "nextPageToken": {"type": "string"}},
    }
    tools = tools_of(tmp_path, mini_spec({"/things": listing([q("fields"), q("pageToken")], google)}))
    results = tools["list"].plan.results
    assert results is not None and results.fields is None  # the API's own `fields` is sent, not shadowed
    assert tools["list"].input_schema["properties"]["fields"] == {"type": "string"}


def test_unrequire_keeps_properties_named_required() -> None:
    schema = {
        "type": "object",
        "required": ["a"],
        "properties": {
            "required": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            "a": {"type": "string"},
        },
        "$defs": {"x": {"type": "object", "required": ["b"], "minProperties": 1, "not": {"required": ["c"]}}},
    }
    out = unrequire(schema)
    assert out == {
        "type": "object",
        "properties": {"required": {"type": "array", "items": {"type": "string"}}, "a": {"type": "string"}},
        "$defs": {"x": {"type": "object", "not": {"required": ["c"]}}},  # never inside `not`: that would be stricter
    }
    jsonschema.Draft202012Validator(out).validate({"required": []})


def test_config_result_tokens_win_over_the_extension(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, SPEC)
    (tmp_path / "mcp-codegen.toml").write_text(
        '[overrides.getDoc]\nresult_tokens = 50\n[overrides."GET /files"]\nresult_tokens = 0\n', encoding="utf-8"
    )
    config, problems = build_config(str(spec), {}, (), tmp_path / "mcp-codegen.toml")
    assert config is not None and not problems
    _, tools, _ = analyze(config)
    by_name = {t.name: t.plan.results for t in tools}
    assert by_name["get_doc"] is not None and by_name["get_doc"].tokens == 50
    assert by_name["files_list"] is not None and by_name["files_list"].tokens == 0
    bad = tmp_path / "bad.toml"
    bad.write_text("[overrides.getDoc]\nresult_tokens = -1\n", encoding="utf-8")
    assert build_config(str(spec), {}, (), bad)[1]


def test_invalid_extension_is_a_warning(tmp_path: Path) -> None:
    spec = mini_spec({"/a": listing([], {"type": "object"})})
    spec["paths"]["/a"]["get"]["x-mcp-result-tokens"] = "lots"
    _, tools, problems = analyze(Config(spec=str(write_spec(tmp_path, spec)), validate=False))
    assert any("x-mcp-result-tokens must be a whole number" in p.message for p in problems)
    assert not any("unknown extension" in p.message for p in problems)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spec", "tool", "kind", "describe"),
    [
        ("github", "issues_list_for_repo", "link", "Link header rel=next -> "),
        ("stripe", "get_customers", "after_id", "has_more + last item's id -> starting_after"),
        ("slack", "conversations_list", "cursor", "cursor response_metadata.next_cursor -> cursor"),
    ],
)
def test_real_specs(spec: str, tool: str, kind: str, describe: str) -> None:
    _, tools, _ = analyze(Config(spec=named_spec(spec), validate=False))
    found = {t.name: t for t in tools}[tool]
    results = found.plan.results
    assert results is not None and results.pages is not None and results.pages.kind == kind
    assert results.pages.describe().startswith(describe)
    # a listing over the token budget leaves output schemas out (GitHub, Stripe): `next` then travels in _meta
    assert found.output_schema is None or "next" in found.output_schema["properties"]
    assert {"fields", "max_items", "max_pages"} <= set(found.input_schema["properties"])
