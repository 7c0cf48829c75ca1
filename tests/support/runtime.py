"""The generated runtime package the end-to-end runtime tests drive (test_runtime_*.py): its spec (every auth scheme,
per-operation security, OR and AND requirements, `security: []`, binary and JSON answers), the credentials it is
given, the module-scoped fixtures that generate and import it and start the upstream, and the helpers that call it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import mcp.types as types
import pytest
from mcp import Client

from conftest import generate_into, write_spec
from support.generated import on_path
from support.upstream import Upstream, upstream_server

PKG = "rtapi"
PREFIX = "RTAPI"
JSON = {"Content-Type": "application/json"}


def op(op_id: str, security: Any = None, params: Any = None, response: Any = None) -> dict[str, Any]:
    content = response if response is not None else {"application/json": {"schema": {"type": "object"}}}
    operation: dict[str, Any] = {"operationId": op_id, "responses": {"200": {"description": "ok", "content": content}}}
    if security is not None:
        operation["security"] = security
    if params:
        operation["parameters"] = params
    return operation


ITEM = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}
ITEM_ID = {"name": "item_id", "in": "path", "required": True, "schema": {"type": "string"}}
RUNTIME_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Runtime test API", "version": "1.0"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "security": [{"hdrKey": []}],
    "components": {
        "securitySchemes": {
            "hdrKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
            "queryKey": {"type": "apiKey", "in": "query", "name": "api_key"},
            "cookieKey": {"type": "apiKey", "in": "cookie", "name": "session"},
            "bearer": {"type": "http", "scheme": "bearer"},
            "basic": {"type": "http", "scheme": "basic"},
            "cc": {
                "type": "oauth2",
                "flows": {"clientCredentials": {"tokenUrl": "/oauth/token", "scopes": {"read": "read"}}},
            },
            "mtls": {"type": "mutualTLS"},
            "oidc": {
                "type": "openIdConnect",
                "openIdConnectUrl": "http://127.0.0.1:9/.well-known/openid-configuration",
            },
        }
    },
    "paths": {
        "/items/{item_id}": {
            "get": op("getItem", [], [ITEM_ID], {"application/json": {"schema": ITEM}}),
            "put": op("putItem", [], [ITEM_ID]),
        },
        "/items": {
            "post": {
                **op("createItem", []),
                "requestBody": {"required": True, "content": {"application/json": {"schema": ITEM}}},
            }
        },
        "/files/{item_id}": {
            "get": op(
                "getFile",
                [],
                [ITEM_ID],
                {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
            )
        },
        "/note": {
            "get": op(
                "sendNote", [], [{"name": "X-Note", "in": "header", "required": True, "schema": {"type": "string"}}]
            )
        },
        "/search": {
            "get": op(
                "search",
                [],
                [
                    {"name": "limit", "in": "query", "required": True, "schema": {"type": "integer", "minimum": 1}},
                    {
                        "name": "kind",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string", "enum": ["cat", "dog"]},
                    },
                    {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}},
                ],
            )
        },
        "/auth/header": {"get": op("authHeader", [{"hdrKey": []}])},
        "/auth/query": {"get": op("authQuery", [{"queryKey": []}])},
        "/auth/cookie": {"get": op("authCookie", [{"cookieKey": []}])},
        "/auth/bearer": {"get": op("authBearer", [{"bearer": []}])},
        "/auth/basic": {"get": op("authBasic", [{"basic": []}])},
        "/auth/cc": {"get": op("authCc", [{"cc": ["read"]}])},
        "/auth/oidc": {"get": op("authOidc", [{"oidc": []}])},
        "/auth/either": {"get": op("authEither", [{"hdrKey": []}, {"bearer": []}])},
        "/auth/both": {"get": op("authBoth", [{"hdrKey": [], "bearer": []}])},
        "/auth/default": {"get": op("authDefault")},
        "/auth/mtls": {"get": op("authMtls", [{"mtls": []}])},
        # basic AND bearer both need the Authorization header: never sendable; the OR falls through
        "/auth/clash": {"get": op("authClash", [{"basic": [], "bearer": []}])},
        "/auth/clash-or": {"get": op("authClashOr", [{"basic": [], "bearer": []}, {"hdrKey": []}])},
        # bearer tokens required together (as Google's Oauth2 + Oauth2c flows): one header, either token
        "/auth/tokens": {"get": op("authTokens", [{"bearer": [], "oidc": []}])},
    },
}
SECRETS = {
    f"{PREFIX}_HDRKEY": "hdr-secret-1",
    f"{PREFIX}_QUERYKEY": "query-secret-2",
    f"{PREFIX}_COOKIEKEY": "cookie-secret-3",
    f"{PREFIX}_BEARER": "bearer-secret-4",
    f"{PREFIX}_BASIC_USERNAME": "alice",
    f"{PREFIX}_BASIC_PASSWORD": "basic-secret-5",
    f"{PREFIX}_CC_CLIENT_ID": "client-id-6",
    f"{PREFIX}_CC_CLIENT_SECRET": "client-secret-7",
    f"{PREFIX}_OIDC": "oidc-secret-8",
}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("runtime")
    out = tmp / PKG
    generate_into(write_spec(tmp, RUNTIME_SPEC), out, name=PKG)
    with on_path(out):
        yield out


@pytest.fixture(scope="module")
def server_module(package: Path) -> ModuleType:
    return importlib.import_module(f"{PKG}.server")


@pytest.fixture(scope="module")
def api() -> Iterator[Upstream]:
    with upstream_server() as server:
        yield server


@pytest.fixture
def upstream(api: Upstream) -> Upstream:
    api.reset()
    return api


def make(server_module: ModuleType, upstream: Upstream, **options: Any) -> Any:
    """The generated server (in-process) with every credential set, pointed at the upstream."""
    settings_module = importlib.import_module(f"{PKG}.settings")
    settings = settings_module.Settings.from_env(
        {f"{PREFIX}_BASE_URL": upstream.url, f"{PREFIX}_RETRIES": "0", **SECRETS}
    )
    return server_module.build_server(replace(settings, **options))


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def call(server: Any, tool: str, arguments: dict[str, Any], mode: str = "legacy") -> types.CallToolResult:
    async with Client(server, mode=mode) as client:
        return await client.call_tool(tool, arguments)
