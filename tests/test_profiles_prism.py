"""OpenAI strict mode round trip: a package generated with --client openai lists every property as required
(optional ones nullable); the official MCP client sends nulls for the optional arguments, and the request that
reaches the API has no such fields. Prism (which validates every request against the spec: a null for a string,
an unknown or an empty query parameter is refused) accepts it, and a recording upstream shows its exact shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from codegen.surface.profiles import check_tools

from conftest import generate_into, write_spec
from support.generated import GeneratedPackage, text_of
from support.prism import prism_server
from support.recorder import recording_upstream

pytestmark = pytest.mark.slow

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Notes", "version": "1.0"},
    "servers": [{"url": "http://localhost"}],
    "paths": {
        "/notes": {
            "post": {
                "operationId": "createNote",
                "parameters": [
                    {"name": "tag", "in": "query", "schema": {"type": "string"}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["title"],
                                "additionalProperties": False,
                                "properties": {
                                    "title": {"type": "string"},
                                    "note": {"type": "string"},
                                    "meta": {
                                        "type": "object",
                                        "additionalProperties": False,
                                        "properties": {
                                            "color": {"type": "string", "enum": ["red", "blue"]},
                                            "size": {"type": "integer"},
                                        },
                                    },
                                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "201": {
                        "description": "created",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"id": {"type": "integer"}}},
                                "example": {"id": 1},
                            }
                        },
                    }
                },
            }
        }
    },
}
NULLS = {
    "tag": None,
    "limit": None,
    "title": "hello",
    "note": None,
    "meta": {"color": None, "size": None},
    "labels": '{"team": "core"}',
}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GeneratedPackage, Path]]:
    folder = tmp_path_factory.mktemp("strict")
    spec = write_spec(folder, SPEC, "notes.yaml")
    generate_into(spec, folder / "strict_notes", clients=("openai",))
    yield GeneratedPackage(folder / "strict_notes"), spec


def test_the_listed_tool_is_strict(package: tuple[GeneratedPackage, Path]) -> None:
    generated, _ = package
    assert [v for v in check_tools(generated.tools, ["openai"], "strict-notes")] == []
    schema = generated.tool("create_note")["inputSchema"]
    assert sorted(schema["required"]) == sorted(schema["properties"]) and schema["additionalProperties"] is False
    assert schema["properties"]["note"]["type"] == ["string", "null"]
    (listed,) = generated.list_tools()  # what the official client receives
    assert sorted(listed.input_schema["required"]) == sorted(schema["required"])


def test_nulls_become_absent_at_the_upstream(package: tuple[GeneratedPackage, Path]) -> None:
    generated, _ = package
    with recording_upstream() as upstream:
        upstream.respond(201, b'{"id": 1}')
        result = generated.call(upstream.url, "create_note", NULLS)
        assert not result.is_error, text_of(result)
        sent = upstream.last()
    assert sent.method == "POST" and sent.path == "/notes" and not sent.has_query
    assert json.loads(sent.body) == {"title": "hello", "meta": {}, "labels": {"team": "core"}}
    with recording_upstream() as upstream:
        upstream.respond(201, b'{"id": 1}')
        given = {**NULLS, "tag": "x", "limit": 2, "meta": {"color": "red", "size": None}}
        assert not generated.call(upstream.url, "create_note", given).is_error
        sent = upstream.last()
    assert sent.query == "tag=x&limit=2" and json.loads(sent.body)["meta"] == {"color": "red"}


def test_prism_accepts_the_request(package: tuple[GeneratedPackage, Path]) -> None:
    generated, spec = package
    with prism_server(spec) as url:
        refused = httpx.post(f"{url}/notes", json={"title": "hello", "note": None}, timeout=30)
        assert refused.status_code == 422  # the nulls themselves would not get through
        accepted = generated.call(url, "create_note", NULLS)
        assert not accepted.is_error, text_of(accepted)
        assert accepted.structured_content == {"id": 1}
        bad = generated.call(url, "create_note", {**NULLS, "labels": "not json"})
        assert bad.is_error and "labels: must be JSON text" in text_of(bad)
