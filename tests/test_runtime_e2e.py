"""End to end: the generated server's production behaviour, driven by the official MCP client against a
real HTTP upstream on 127.0.0.1 (tests/support/upstream.py: records requests, scripts answers and faults).

One package is generated per module from support/runtime.py's spec (every auth scheme, per-operation security, OR
and AND requirements, `security: []`, binary and JSON answers). Here: results as the client reads them (off-spec
JSON, content kinds, redirects), the stdio and HTTP transports (started as subprocesses) and the package's own
checks; authentication and arguments are in test_runtime_auth.py, a misbehaving upstream in
test_runtime_resilience.py. Most tests run the generated server in-process (`build_server(settings)`), talking real
HTTP to the upstream.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import httpx
import mcp.types as types
import pytest
from mcp import Client

from support.upstream import Answer, Upstream
from support.package_checks import assert_package_is_clean
from support.servers import free_port
from support.runtime import JSON, PKG, PREFIX, SECRETS, call, make, text_of

pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


# -- responses ----------------------------------------------------------------------------------------
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_off_spec_json_reaches_the_official_client(
    server_module: ModuleType, upstream: Upstream, mode: str
) -> None:
    body = {"id": "not-a-number", "name": "rex", "tags": "oops", "extra": True}
    upstream.script("/items/1", Answer(200, JSON, json.dumps(body).encode()))
    result = await call(make(server_module, upstream), "get_item", {"item_id": "1"}, mode)
    assert not result.is_error
    assert result.structured_content == {"name": "rex", "extra": True}  # the members that match
    assert json.loads(text_of(result).split("\n[note")[0]) == body  # the full answer, as text
    assert "id, tags did not match" in text_of(result)
    upstream.script("/items/1", Answer(200, JSON, b"[1, 2, 3]"))
    array = await call(make(server_module, upstream), "get_item", {"item_id": "1"}, mode)
    assert not array.is_error and array.structured_content == {"result": [1, 2, 3]} and "[1, 2, 3]" in text_of(array)


@pytest.mark.anyio
async def test_content_kinds(server_module: ModuleType, upstream: Upstream) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    )
    upstream.script("/files/img", Answer(200, {"Content-Type": "image/png"}, png))
    upstream.script("/files/bin", Answer(200, {"Content-Type": "application/pdf"}, b"%PDF-1.4\x00\xff\xfe"))
    upstream.script("/files/txt", Answer(200, {"Content-Type": "text/plain; charset=utf-8"}, "héllo".encode()))
    upstream.script("/files/none", Answer(204))
    upstream.script("/files/big", Answer(200, {"Content-Type": "text/plain"}, b"z" * 50_000))
    async with Client(make(server_module, upstream, max_response_bytes=10_000), mode="legacy") as client:
        image = await client.call_tool("get_file", {"item_id": "img"})
        binary = await client.call_tool("get_file", {"item_id": "bin"})
        text = await client.call_tool("get_file", {"item_id": "txt"})
        empty = await client.call_tool("get_file", {"item_id": "none"})
        big = await client.call_tool("get_file", {"item_id": "big"})
    assert isinstance(image.content[0], types.ImageContent) and base64.b64decode(image.content[0].data) == png
    assert image.content[0].mime_type == "image/png"
    resource = binary.content[0]
    assert isinstance(resource, types.EmbeddedResource) and isinstance(resource.resource, types.BlobResourceContents)
    assert (
        resource.resource.mime_type == "application/pdf"
        and base64.b64decode(resource.resource.blob) == b"%PDF-1.4\x00\xff\xfe"
    )
    assert text_of(text) == "héllo"
    assert not empty.is_error and text_of(empty) == "HTTP 204 No Content: success, no content."
    assert (
        not big.is_error
        and text_of(big).startswith("z" * 10_000)
        and "[truncated: the response has 50,000 bytes" in text_of(big)
    )


@pytest.mark.anyio
async def test_redirects(server_module: ModuleType, upstream: Upstream) -> None:
    port = upstream.url.rsplit(":", 1)[1]
    upstream.script("/items/away", Answer(302, {"Location": f"http://localhost:{port}/items/1"}))
    upstream.script("/items/moved", Answer(307, {"Location": "/items/1"}))
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    async with Client(make(server_module, upstream), mode="legacy") as client:
        away = await client.call_tool("get_item", {"item_id": "away"})
        moved = await client.call_tool("get_item", {"item_id": "moved"})
    assert away.is_error and "redirected to another host (localhost)" in text_of(away)
    assert not moved.is_error and moved.structured_content == {"id": 1, "name": "one"}
    assert [r.target for r in upstream.requests] == ["/items/away", "/items/moved", "/items/1"]


# -- transports ---------------------------------------------------------------------------------------
def _env(package: Path, upstream: Upstream, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(package / "src"),
        f"{PREFIX}_BASE_URL": upstream.url,
        **SECRETS,
        **extra,
    }


def test_help_documents_every_variable(package: Path, upstream: Upstream) -> None:
    done = subprocess.run(
        [sys.executable, "-m", PKG, "--help"], env=_env(package, upstream), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    readme = (package / "README.md").read_text()
    for variable in [
        *SECRETS,
        f"{PREFIX}_BASE_URL",
        f"{PREFIX}_TIMEOUT",
        f"{PREFIX}_MCP_TOKEN",
        f"{PREFIX}_RATE_LIMIT",
        f"{PREFIX}_PROGRESS_INTERVAL",
        f"{PREFIX}_BACKOFF",
    ]:
        assert variable in done.stdout and variable in readme, variable


def test_stdio_keeps_stdout_for_protocol_and_logs_audit_to_stderr(package: Path, upstream: Upstream) -> None:
    upstream.script("/auth/bearer", Answer(200, JSON, b'{"ok": true}'))
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "auth_bearer", "arguments": {}}},
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", PKG],
        env=_env(package, upstream),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
    lines = [json.loads(process.stdout.readline()), json.loads(process.stdout.readline())]
    process.stdin.close()
    assert process.wait(timeout=30) == 0 and process.stderr is not None
    stderr = process.stderr.read()
    assert lines[1]["id"] == 2 and lines[1]["result"]["isError"] is False
    assert "tool=auth_bearer method=GET path=/auth/bearer status=200" in stderr and "retries=0" in stderr
    assert not any(secret in stderr for secret in SECRETS.values() if len(secret) > 5)


@pytest.mark.anyio
async def test_http_transport_token_health_and_statelessness(package: Path, upstream: Upstream) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    upstream.script("/auth/bearer", Answer(200, JSON, b'{"ok": true}'))
    port = free_port()
    env = _env(package, upstream, **{f"{PREFIX}_MCP_TOKEN": "mcp-door-key"})
    process = subprocess.Popen(
        [sys.executable, "-m", PKG, "--transport", "http", "--port", str(port)], env=env, stderr=subprocess.PIPE
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(base + "/healthz", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert httpx.post(base + "/mcp", json={}, timeout=5).status_code == 401
        for _ in range(2):  # two independent connections: no session to keep
            headers = {"Authorization": "Bearer mcp-door-key"}
            async with httpx2.AsyncClient(headers=headers, timeout=10) as http:
                async with Client(streamable_http_client(base + "/mcp", http_client=http), mode="legacy") as client:
                    result = await client.call_tool("auth_bearer", {})
                    assert not result.is_error and result.structured_content == {"result": {"ok": True}}
        assert len(upstream.for_path("/auth/bearer")) == 2
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.slow
def test_generated_runtime_package_is_formatted_typed_and_its_tests_pass(package: Path) -> None:
    """The package with every kind of security scheme: black, mypy --strict, and its own tests."""
    assert_package_is_clean(package)
