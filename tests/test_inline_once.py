"""Definitions used once, written in place (large listings): the same schema, never a broken reference."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from codegen.surface.inline_once import inline_once

ADDRESS = {"type": "object", "properties": {"city": {"type": "string", "minLength": 1}}, "required": ["city"]}
TAG = {"type": "string", "enum": ["a", "b"]}


def schema(properties: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "$defs": defs}


def test_a_definition_used_once_is_written_in_place_and_one_used_twice_stays() -> None:
    before = schema(
        {
            "home": {"$ref": "#/$defs/Address", "description": "Where they live."},
            "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
            "other": {"$ref": "#/$defs/Tag"},
        },
        {"Address": ADDRESS, "Tag": TAG},
    )
    after = inline_once(before)
    assert after["properties"]["home"] == {**ADDRESS, "description": "Where they live."}
    assert after["properties"]["other"] == {"$ref": "#/$defs/Tag"} and after["$defs"] == {"Tag": TAG}
    for value, valid in (({"home": {"city": ""}}, False), ({"home": {"city": "x"}, "other": "c"}, False)):
        for node in (before, after):  # the same answers
            assert jsonschema.Draft202012Validator(node).is_valid(value) is valid


def test_definitions_inside_definitions_are_inlined_and_the_defs_go_when_empty() -> None:
    before = schema(
        {"person": {"$ref": "#/$defs/Person"}},
        {"Person": {"type": "object", "properties": {"home": {"$ref": "#/$defs/Address"}}}, "Address": ADDRESS},
    )
    after = inline_once(before)
    assert "$defs" not in after
    assert after["properties"]["person"]["properties"]["home"] == ADDRESS


@pytest.mark.parametrize(
    ("properties", "defs"),
    [
        (
            {"node": {"$ref": "#/$defs/Node"}},
            {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        ),
        ({"a": {"$ref": "#/$defs/A"}}, {"A": {"items": {"$ref": "#/$defs/B"}}, "B": {"items": {"$ref": "#/$defs/A"}}}),
        ({"home": {"$ref": "#/$defs/Address", "properties": {"zip": {}}}}, {"Address": ADDRESS}),  # a constraint beside
        ({"home": {"$ref": "#/$defs/Address", "required": ["zip"]}}, {"Address": ADDRESS}),
        ({"tag": {"$ref": "#/$defs/Tag", "description": "x"}}, {"Tag": {**TAG, "description": "y"}}),  # both said
        (
            {"city": {"$ref": "#/$defs/Address/properties/city"}, "home": {"$ref": "#/$defs/Address"}},
            {"Address": ADDRESS},
        ),
        ({"home": {"$ref": "#/$defs/Address"}}, {"Address": {**ADDRESS, "$id": "https://x.example/a"}}),
        ({"flag": {"$ref": "#/$defs/Yes"}}, {"Yes": True}),
    ],
)
def test_references_that_cannot_move_safely_stay(properties: dict[str, Any], defs: dict[str, Any]) -> None:
    before = schema(properties, defs)
    after = inline_once(before)
    assert after == before


def test_data_is_not_read_as_references() -> None:
    before = schema({"home": {"$ref": "#/$defs/Address", "default": {"$ref": "#/$defs/Address"}}}, {"Address": ADDRESS})
    assert inline_once(before)["properties"]["home"] == {**ADDRESS, "default": {"$ref": "#/$defs/Address"}}
    assert inline_once({"type": "object"}) == {"type": "object"}


def test_a_definition_used_once_inside_a_kept_one_is_inlined_there() -> None:
    before = schema(
        {"a": {"$ref": "#/$defs/Shared"}, "b": {"$ref": "#/$defs/Shared"}},
        {"Address": ADDRESS, "Shared": {"type": "object", "properties": {"home": {"$ref": "#/$defs/Address"}}}},
    )
    after = inline_once(before)
    assert after["$defs"] == {"Shared": {"type": "object", "properties": {"home": ADDRESS}}}


def test_a_schema_nested_too_deep_to_count_is_left_as_it_is() -> None:
    deep: dict[str, Any] = {"$ref": "#/$defs/Address"}
    for _ in range(300):
        deep = {"items": deep}
    before = schema({"home": {"$ref": "#/$defs/Address"}, "deep": deep}, {"Address": ADDRESS})
    assert inline_once(before) == before


def test_a_definition_named_in_a_discriminator_mapping_stays() -> None:
    before = schema(
        {
            "pet": {
                "oneOf": [{"$ref": "#/$defs/Cat"}],
                "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/$defs/Cat"}},
            }
        },
        {"Cat": ADDRESS},
    )
    assert inline_once(before) == before
