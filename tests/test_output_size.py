"""tools/list size by design: output schemas loosened below --output-depth (never stricter than the full
schema), --compact, and the largest corpus specs kept to a bounded size."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from codegen.config import Config
from codegen.pipeline import analyze
from codegen.surface.plans import ToolSpec
from conftest import mini_spec, write_spec
from named_specs import named_spec

ROOT = Path(__file__).resolve().parents[1]

C = {  # three $ref hops down: Order -> Customer -> Address -> Country
    "Order": {
        "type": "object",
        "required": ["id", "customer"],
        "properties": {
            "id": {"type": "integer", "example": 7},
            "customer": {"$ref": "#/components/schemas/Customer"},
            "lines": {"type": "array", "items": {"$ref": "#/components/schemas/Line"}},
            "note": {"type": "string", "nullable": True, "description": "free text"},
        },
    },
    "Customer": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "description": "[docs](https://example.invalid/x) full name"},
            "address": {"$ref": "#/components/schemas/Address"},
        },
        "not": {"required": ["forbidden"]},
    },
    "Address": {
        "type": "object",
        "nullable": True,
        "properties": {"country": {"$ref": "#/components/schemas/Country"}},
        "discriminator": {"propertyName": "kind"},
    },
    "Country": {"type": "string", "enum": ["DE", "FR"]},
    "Line": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}},
}


def order_spec() -> dict[str, Any]:
    ok = {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}}
    many = {
        "description": "ok",
        "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Order"}}}},
    }
    return mini_spec(
        {
            "/orders/{id}": {
                "get": {
                    "operationId": "getOrder",
                    "summary": "Get an order",
                    "description": "Reads one order. See [the guide](https://example.invalid/guide).\n\nMore text.",
                    "parameters": [
                        {
                            "name": "id",
                            "in": "path",
                            "required": True,
                            "description": "Order id, see [ids](https://example.invalid/ids).",
                            "schema": {"type": "integer"},
                        }
                    ],
                    "responses": {"200": ok, "404": {"description": "no such order"}},
                }
            },
            "/orders": {"get": {"operationId": "listOrders", "responses": {"200": many}}},
        },
        components={"schemas": C},
    )


def tools_with(tmp_path: Path, **options: Any) -> dict[str, ToolSpec]:
    path = write_spec(tmp_path, order_spec())
    _, tools, _ = analyze(Config(spec=str(path), **options))
    return {t.name: t for t in tools}


VALID = [  # each matches the full schema
    {"id": 1, "customer": {"name": "a"}},
    {"id": 2, "customer": {"name": "b", "address": None}, "note": None},
    {"id": 3, "customer": {"name": "c", "address": {"country": "DE"}}, "lines": [{"sku": "x", "qty": 2}]},
]


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_loosened_output_schema_accepts_every_valid_response(tmp_path: Path, depth: int) -> None:
    full = tools_with(tmp_path, output_depth=-1)
    cut = tools_with(tmp_path, output_depth=depth)
    for name in ("get_order", "list_orders"):
        strict, loose = full[name].output_schema, cut[name].output_schema
        assert strict is not None and loose is not None
        jsonschema.Draft202012Validator.check_schema(loose)
        assert len(json.dumps(loose)) < len(json.dumps(strict))
        wrap = name == "list_orders"
        for instance in VALID:
            value = {"result": [instance]} if wrap else instance
            jsonschema.validate(value, strict)
            jsonschema.validate(value, loose)
        deep_wrong = {"id": 4, "customer": {"name": "d", "address": {"country": "XX"}}}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"result": [deep_wrong]} if wrap else deep_wrong, strict)
        if depth < 2:  # Country is loosened to its type: a wrong enum value passes, a wrong type does not
            jsonschema.validate({"result": [deep_wrong]} if wrap else deep_wrong, loose)
        top_wrong = {"id": "not a number"}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"result": [top_wrong]} if wrap else top_wrong, loose)
        text = json.dumps(loose)
        assert "examples" not in text and "discriminator" not in text and '"not"' not in text


def test_default_depth_keeps_root_properties_and_types_of_what_it_cuts(tmp_path: Path) -> None:
    out = tools_with(tmp_path)["get_order"].output_schema
    assert out is not None
    assert out["properties"]["customer"] == {"type": "object"}
    assert out["properties"]["note"] == {"type": ["string", "null"], "description": "free text"}
    assert "$defs" not in out
    items = tools_with(tmp_path)["list_orders"].output_schema
    assert items is not None  # a wrapped result counts from its items: Order's own properties are kept
    assert items["$defs"]["Order"]["properties"]["customer"] == {"type": "object"}


def test_compact_drops_output_schemas_errors_and_later_paragraphs(tmp_path: Path) -> None:
    full = tools_with(tmp_path)["get_order"].to_json()
    small = tools_with(tmp_path, compact=True)["get_order"].to_json()
    assert "outputSchema" in full and "outputSchema" not in small
    assert full["description"] == "Reads one order.\n\nMore text.\n\nErrors: 404 no such order."
    assert small["description"] == "Reads one order."
    assert small["inputSchema"]["properties"]["id"]["description"] == "Order id, see ids."

    # link URLs go in both; only the result-shaping arguments lose their descriptions with --compact
    def without_control(schema: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in schema["properties"].items() if k not in ("fields", "max_items", "max_pages")}
        return {**schema, "properties": kept}

    assert without_control(full["inputSchema"]) == without_control(small["inputSchema"])
    assert small["inputSchema"]["properties"]["fields"] == {"type": "array", "items": {"type": "string"}}
    assert small["annotations"]["title"] == full["annotations"]["title"] == "Get an order"
    assert len(json.dumps(small)) < len(json.dumps(full)) * 0.6


@pytest.mark.slow
# github compact: 1.56e6 before result shaping added `fields` (GET tools) and `max_items`/`max_pages` (lists), 1.62e6 after
@pytest.mark.parametrize(("name", "limit", "compact_limit"), [("github", 3.3e6, 1.65e6), ("stripe", 2.8e6, 1.25e6)])
def test_large_corpus_specs_stay_small(name: str, limit: float, compact_limit: float) -> None:
    spec = named_spec(name)
    for compact, bound in ((False, limit), (True, compact_limit)):
        _, tools, _ = analyze(Config(spec=spec, compact=compact))
        listed = [t.to_json() for t in tools]
        size = len(json.dumps(listed, separators=(",", ":")))
        assert size < bound, (name, compact, size)
        for tool in listed[:: max(1, len(listed) // 60)]:  # a spread sample: valid 2020-12, all refs defined
            for key in ("inputSchema", "outputSchema"):
                if key in tool:
                    jsonschema.Draft202012Validator.check_schema(tool[key])
                    refs = {r[len("#/$defs/") :] for r in _refs(tool[key])}
                    assert refs <= set(tool[key].get("$defs", {})), (tool["name"], refs)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def create_order_spec() -> dict[str, Any]:
    spec = order_spec()
    customer = spec["components"]["schemas"]["Customer"] = dict(spec["components"]["schemas"]["Customer"])
    customer["discriminator"] = {"propertyName": "name", "mapping": {"home": "#/components/schemas/Address"}}
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}}
    spec["paths"]["/orders"]["post"] = {
        "operationId": "createOrder",
        "requestBody": body,
        "responses": {"201": {"description": "made"}},
    }
    return spec


def create_order(tmp_path: Path, budget: int) -> tuple[ToolSpec, list[str]]:
    path = write_spec(tmp_path, create_order_spec())
    _, tools, problems = analyze(Config(spec=str(path), input_budget=budget))
    return next(t for t in tools if t.name == "create_order"), [str(p) for p in problems if "input-budget" in str(p)]


def test_input_schema_over_budget_keeps_the_levels_that_fit_and_accepts_a_superset(tmp_path: Path) -> None:
    full, none = create_order(tmp_path, 0)  # 0: no limit
    assert none == [] and set(full.input_schema["$defs"]) == {"Address", "Country", "Customer", "Line"}
    level1 = sum(len(json.dumps(full.input_schema["$defs"][n], separators=(",", ":"))) for n in ("Customer", "Line"))
    cut, warned = create_order(tmp_path, level1 + 10)  # Customer and Line fit; Address (and Country) do not
    schema = cut.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema["$defs"]) == {"Customer", "Line"}
    assert schema["$defs"]["Customer"]["properties"]["address"] == {"type": ["object", "null"]}
    assert schema["$defs"]["Customer"]["discriminator"] == {"propertyName": "name"}  # its mapping named Address
    assert set(re.findall(r'"#/\$defs/([^"]+)"', json.dumps(schema))) <= set(schema["$defs"])
    assert warned == [
        "warning: #/paths/~1orders/post: the input schema's definitions exceed "
        f"{level1 + 10} characters (--input-budget); those more than 1 $ref levels down accept any value of their type"
    ]
    for instance in VALID:  # a superset: what the full schema accepts, the cut one does too
        jsonschema.validate(instance, full.input_schema)
        jsonschema.validate(instance, schema)
    deep_wrong = {"id": 4, "customer": {"name": "d", "address": {"country": "XX"}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(deep_wrong, full.input_schema)
    jsonschema.validate(deep_wrong, schema)
    with pytest.raises(jsonschema.ValidationError):  # the levels kept still check
        jsonschema.validate({"id": 5, "customer": {"address": None}}, schema)
    tiny, _ = create_order(tmp_path, 1)  # at least one level is always kept
    assert set(tiny.input_schema["$defs"]) == {"Customer", "Line"}
    same, quiet = create_order(tmp_path, 64_000)  # the default budget: small schemas are untouched
    assert quiet == [] and same.input_schema == full.input_schema


@pytest.mark.slow
def test_the_largest_corpus_document_generates_quickly_and_small() -> None:
    """Microsoft Graph (20 MB, 11,422 operations): every tool's input schema reaches most of its 2,600
    definitions; whole, tools.json was 2.2 GB and the mapping took 10 minutes."""
    listing = subprocess.run(
        [sys.executable, str(ROOT / "tools/list-specs"), "--set", "directory", "--min-ops", "10000"],
        capture_output=True,
        text=True,
        check=True,
    )
    spec = next(p for p in listing.stdout.splitlines() if p.endswith("microsoft.com/graph.json"))
    _, tools, problems = analyze(Config(spec=spec, validate=False))
    assert len(tools) > 11_000
    listed = [t.to_json() for t in tools]
    assert len(json.dumps(listed, separators=(",", ":"))) < 60e6
    budget = Config(spec="").input_budget
    for tool in listed:
        defs = tool["inputSchema"].get("$defs", {})
        assert len(json.dumps(defs, separators=(",", ":"), ensure_ascii=False)) < 4 * budget, tool["name"]
    for tool in listed[:: len(listed) // 60]:
        for key in ("inputSchema", "outputSchema"):
            if key in tool:
                jsonschema.Draft202012Validator.check_schema(tool[key])
                named = set(re.findall(r'"#/\$defs/([^"]+)"', json.dumps(tool[key])))  # $refs and mappings
                assert named <= set(tool[key].get("$defs", {})), (tool["name"], named)
    assert any("input-budget" in str(p) for p in problems)
