"""The sample-argument builder of the generated tests (templates/samples.py.jinja: `built`): for each kind of
schema the corpus has, it builds arguments that jsonschema accepts (checked here again, formats included), and for
a schema it cannot satisfy it gives the reason instead of a value."""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

NAMES = itertools.count()


@pytest.fixture(scope="module")
def generated(petstore_package: Path) -> ModuleType:
    """The petstore package's generated tests/samples.py, imported as a module."""
    sys.path.insert(0, str(petstore_package / "src"))
    sys.path.insert(0, str(petstore_package / "tests"))  # samples.py imports sample_values.py beside it
    spec = importlib.util.spec_from_file_location("petstore_samples", petstore_package / "tests" / "samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(generated: ModuleType, properties: dict[str, Any], **extra: Any) -> Any:
    """The arguments built for a tool with these properties, all required; checked with jsonschema here too."""
    schema = {"type": "object", "properties": properties, "required": list(properties), **extra}
    arguments = generated.built({"name": f"tool{next(NAMES)}", "inputSchema": schema})
    if isinstance(arguments, dict):
        errors = list(
            Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).iter_errors(arguments)
        )
        assert not errors, (arguments, errors[0].message)
    return arguments


def test_patterns(generated: ModuleType) -> None:
    sha = build(generated, {"sha": {"type": "string", "pattern": "^([0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?)$"}})
    assert re.fullmatch("[0-9a-fA-F]{40}", sha["sha"])
    key = build(
        generated, {"key": {"type": "string", "pattern": "^ssh-(rsa|dss|ed25519) |^ecdsa-sha2-nistp(256|384|521) "}}
    )
    assert key["key"].startswith(("ssh-", "ecdsa-"))
    bounded = build(generated, {"code": {"type": "string", "pattern": "^[A-Z]+$", "minLength": 3, "maxLength": 3}})
    assert re.fullmatch("[A-Z]{3}", bounded["code"])


def test_no_sample_ends_in_the_newline_pythons_dollar_allows(generated: ModuleType) -> None:
    """`$` in a JSON Schema pattern is the end of the text; Python's also matches before a final newline, and
    hypothesis generates one (a sample "QH\n" for ^[A-Z]+$ of length 3 once failed CI): such a sample would be
    refused by an ECMAScript validator upstream, so only a string without it counts."""
    for length in range(2, 7):
        code = build(generated, {"code": {"type": "string", "pattern": "^[A-Z]+$", "minLength": length}})
        assert not code["code"].endswith("\n") and re.fullmatch("[A-Z]+", code["code"]), code
    only_with_newline = build(generated, {"x": {"type": "string", "pattern": "^x$", "minLength": 2}})
    assert isinstance(only_with_newline, str) and only_with_newline.startswith("x:"), only_with_newline


def test_maps(generated: ModuleType) -> None:
    files = {
        "type": "object",
        "additionalProperties": {
            "type": "object",
            "properties": {"content": {"type": "string"}},
            "required": ["content"],
        },
    }
    gist = build(generated, {"files": files})
    assert gist["files"] and all(isinstance(v, dict) and "content" in v for v in gist["files"].values())
    headers = {
        "type": "object",
        "patternProperties": {"^x-[a-z]+$": {"type": "integer"}},
        "additionalProperties": False,
    }
    built = build(generated, {"headers": headers})
    assert built["headers"] == {} or all(re.fullmatch("x-[a-z]+", k) for k in built["headers"])
    lists = {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {"type": "array", "items": {"type": "string"}},
    }
    assert build(generated, {"rules": lists})["rules"]


def test_one_of_and_any_of(generated: ModuleType) -> None:
    body = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "name": {"type": "string"},
        },
        "required": ["name"],
        "oneOf": [{"required": ["b"]}, {"required": ["a"]}],
    }
    assert set(build(generated, {"body": body})["body"]) == {"name", "b"}
    either = {"oneOf": [{"type": "boolean"}, {"type": "string", "enum": ["true", "false"]}]}
    assert build(generated, {"flag": either})["flag"] is True
    status = {
        "type": "object",
        "properties": {"conclusion": {"type": "string", "enum": ["success", "failure"]}, "status": {"type": "string"}},
        "anyOf": [
            {"properties": {"status": {"enum": ["completed"]}}, "required": ["conclusion"]},
            {"properties": {"status": {"enum": ["queued"]}}},
        ],
    }
    assert build(generated, {"check": status})["check"] in ({}, {"conclusion": "success"})
    mixed = {
        "anyOf": [
            {"type": "string", "pattern": "^[0-9]+$"},
            {
                "type": "object",
                "properties": {"if": {"type": "array"}},
                "required": ["if"],
                "additionalProperties": False,
            },
        ]
    }
    assert re.fullmatch("[0-9]+", build(generated, {"rule": mixed})["rule"])


def test_formats_and_bounds(generated: ModuleType) -> None:
    formats = {
        f: {"type": "string", "format": f}
        for f in ("date-time", "date", "email", "uuid", "ipv4", "ipv6", "uri", "hostname")
    }
    built = build(generated, formats)
    assert built["date"] == "2024-01-02" and "@" in built["email"]
    numbers = {
        "count": {"type": "integer", "minimum": 5, "maximum": 10, "multipleOf": 5},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "negative": {"type": "integer", "maximum": -3},
        "pair": {"type": "array", "items": {"type": "integer", "minimum": 2}, "minItems": 2, "maxItems": 2},
        "code": {"type": "string", "minLength": 4, "maxLength": 4},
        "nothing": {"type": "array", "maxItems": 0},
    }
    built = build(generated, numbers)
    assert isinstance(built, dict), built
    assert built["count"] == 5 and 0 < built["ratio"] < 1 and built["negative"] <= -3
    assert built["pair"] == [2, 2] and len(built["code"]) == 4 and built["nothing"] == []


def test_nested_defs_refs(generated: ModuleType) -> None:
    defs = {
        "a/b": {"$ref": "#/$defs/Inner", "description": "a ref beside other keywords"},
        "Inner": {"type": "object", "properties": {"id": {"$ref": "#/$defs/Id"}}, "required": ["id"]},
        "Id": {"type": "string", "pattern": "^id-[0-9]{3}$"},
        "Both": {
            "allOf": [
                {"$ref": "#/$defs/Inner"},
                {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            ]
        },
    }
    built = build(generated, {"x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/Both"}}, **{"$defs": defs})
    assert re.fullmatch("id-[0-9]{3}", built["x"]["id"]) and built["y"]["n"] == 1


def test_unsatisfiable_schemas_give_a_reason(generated: ModuleType) -> None:
    forbidden = {
        "type": "object",
        "properties": {"default": {"type": "integer"}},
        "required": ["defaultScreen"],
        "additionalProperties": False,
    }
    reason = build(generated, {"screens": forbidden})
    assert isinstance(reason, str) and "screens/defaultScreen" in reason
    reason = build(generated, {"word": {"type": "string", "pattern": "^\\p{L}+$"}})  # not Python regex syntax
    assert isinstance(reason, str) and "cannot be checked" in reason
    reason = build(generated, {"n": {"type": "integer", "minimum": 5, "maximum": 4}})
    assert isinstance(reason, str) and reason.startswith("n:")
