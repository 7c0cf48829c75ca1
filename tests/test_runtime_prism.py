"""The generated petstore server against a Prism mock of the same spec, where Prism's own request and
security validation matters: credentials are sent as the spec declares (Prism answers 401 otherwise),
a missing one is an isError naming the variable, and bad arguments never reach the API."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import mcp.types as types
import pytest
from mcp import Client

from support.generated import on_path

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def petstore(petstore_package: Path) -> Iterator[ModuleType]:
    with on_path(petstore_package):
        yield importlib.import_module("petstore.server")


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


@pytest.mark.anyio
async def test_api_key_and_validation_against_prism(petstore: ModuleType, prism_url: str) -> None:
    settings = importlib.import_module("petstore.settings")
    with_key = settings.Settings.from_env({"PETSTORE_BASE_URL": prism_url, "PETSTORE_API_KEY": "prism-key-123"})
    without = settings.Settings.from_env({"PETSTORE_BASE_URL": prism_url})
    async with Client(petstore.build_server(with_key), mode="legacy") as client:
        inventory = await client.call_tool("get_inventory", {})  # security: api_key (header)
        assert not inventory.is_error, text_of(inventory)
        assert isinstance(inventory.structured_content, dict) and "prism-key-123" not in text_of(inventory)
        pet = await client.call_tool("get_pet_by_id", {"petId": 1})  # security: api_key
        assert not pet.is_error, text_of(pet)
        bad = await client.call_tool("find_pets_by_status", {"status": ["bogus"]})
        assert bad.is_error and "status" in text_of(bad) and "'available'" in text_of(bad)
    async with Client(petstore.build_server(without), mode="legacy") as client:
        missing = await client.call_tool("get_inventory", {})
        assert missing.is_error and "PETSTORE_API_KEY" in text_of(missing)
        oauth = await client.call_tool("find_pets_by_status", {"status": ["available"]})  # oauth2 (implicit flow)
        assert oauth.is_error and "PETSTORE_PETSTORE_AUTH" in text_of(oauth)
