"""End to end: the generated server under a misbehaving upstream: hangs, slow drips, decompression bombs, errors with
status and body, 429 with Retry-After, bounded retries, resets, cancellation, rate and pool limits, progress on
long calls. The official MCP client, a real HTTP upstream (support/runtime.py)."""

from __future__ import annotations

import base64
import gzip
import json
import logging
import time
import tracemalloc
import zlib
from types import ModuleType
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client

from support.upstream import Answer, Upstream
from support.runtime import JSON, PKG, call, make, text_of

pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


# -- resilience ---------------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_hanging_upstream_times_out(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(hang=True))
    result = await call(make(server_module, upstream, timeout=0.5), "get_item", {"item_id": "1"})
    assert result.is_error and "within the total timeout of 0.5 s" in text_of(result)


@pytest.mark.anyio
async def test_slow_drip_is_cut_at_the_deadline(server_module: ModuleType, upstream: Upstream) -> None:
    """One byte a second never trips a per-read timeout; the call's one deadline cuts it."""
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "' + b"x" * 200 + b'"}', drip=1.0, chunk=1))
    started = time.monotonic()
    result = await call(make(server_module, upstream, timeout=2.5), "get_item", {"item_id": "1"})
    elapsed = time.monotonic() - started
    assert result.is_error and "total timeout of 2.5 s" in text_of(result)
    assert 2.4 < elapsed < 5, elapsed


def gzip_bomb(gigabytes: int = 1) -> bytes:
    """`gzip, gzip` of `gigabytes` GB of zeros, a few KB long (the inner stream is one repeated block)."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    head = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    repeated = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    return gzip.compress(head + repeated * (1024 * gigabytes - 1), 9)


@pytest.mark.anyio
async def test_gzip_bomb_stops_at_the_cap(server_module: ModuleType, upstream: Upstream) -> None:
    """A few KB of `gzip, gzip` that would be 1 GB: read over a real socket, decoded only up to the cap."""
    bomb = gzip_bomb(1)
    assert len(bomb) < 10_000
    encoded = {"Content-Type": "application/octet-stream", "Content-Encoding": "gzip, gzip"}
    upstream.script("/files/bomb", Answer(200, encoded, bomb))
    upstream.script("/files/three", Answer(200, {**encoded, "Content-Encoding": "gzip, gzip, gzip"}, bomb))
    tracemalloc.start()
    try:
        async with Client(make(server_module, upstream, max_response_bytes=100_000), mode="legacy") as client:
            result = await client.call_tool("get_file", {"item_id": "bomb"})
            three = await client.call_tool("get_file", {"item_id": "three"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    block = result.content[0]
    assert isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.BlobResourceContents)
    assert base64.b64decode(block.resource.blob) == bytes(75_000)
    assert "[truncated: the response has more bytes; only the first 75,000 are shown]" in text_of(result)
    assert peak < 64_000_000, peak  # megabytes, not the gigabyte the bomb holds
    assert three.is_error and "encoded 3 times" in text_of(three)


@pytest.mark.anyio
async def test_token_endpoint_is_bounded_too(server_module: ModuleType, upstream: Upstream) -> None:
    """Fetching an OAuth2 token counts against the call's deadline, and its answer is read bounded."""
    upstream.script("/oauth/token", Answer(hang=True))
    started = time.monotonic()
    hung = await call(make(server_module, upstream, timeout=0.5), "auth_cc", {})
    assert hung.is_error and "No access token within the total timeout of 0.5 s" in text_of(hung), text_of(hung)
    assert time.monotonic() - started < 3
    upstream.reset()
    bomb = {"Content-Type": "application/json", "Content-Encoding": "gzip, gzip"}
    upstream.script("/oauth/token", Answer(200, bomb, gzip_bomb(1)))
    result = await call(make(server_module, upstream), "auth_cc", {})
    assert result.is_error and "refused the client credentials" in text_of(result), text_of(result)
    assert not upstream.for_path("/auth/cc")


@pytest.mark.anyio
async def test_invalid_json_and_unknown_arguments(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "hdr-secret-1", '))
    async with Client(make(server_module, upstream), mode="legacy") as client:
        broken = await client.call_tool("get_item", {"item_id": "1"})
        misspelled = await client.call_tool("get_item", {"item_id": "1", "itemid": "2"})
    assert broken.is_error and "upstream sent invalid JSON" in text_of(broken)
    assert '{"id": 1, "name": "***", ' in text_of(broken)  # the first bytes, secrets masked
    assert misspelled.is_error and "'itemid': unknown argument; did you mean 'item_id'?" in text_of(misspelled)
    assert len(upstream.requests) == 1  # the misspelled call sent nothing


@pytest.mark.anyio
async def test_500_is_an_error_with_status_reason_and_truncated_body(
    server_module: ModuleType, upstream: Upstream
) -> None:
    upstream.script("/items/1", Answer(500, {"Content-Type": "text/plain"}, b"boom " * 2000))
    result = await call(make(server_module, upstream, retries=2), "get_item", {"item_id": "1"})
    text = text_of(result)
    assert result.is_error and "HTTP 500 Internal Server Error" in text and "boom boom" in text
    assert "[truncated" in text and len(text) < 4500 and len(upstream.requests) == 1  # 500 is not retried


@pytest.mark.anyio
async def test_429_retry_after_is_honoured_and_reported(
    server_module: ModuleType, upstream: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    upstream.script("/items/1", Answer(429, {"Retry-After": "1"}), Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with Client(make(server_module, upstream, retries=2), mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("info")
        result = await client.call_tool("get_item", {"item_id": "1"}, progress_callback=on_progress)
    assert not result.is_error and result.structured_content == {"id": 1, "name": "one"}
    first, second = upstream.requests
    assert second.at - first.at >= 0.95  # waited as the API asked
    assert any("HTTP 429; retry 1 of 2" in p for p in progress)
    assert any(isinstance(d, dict) and d.get("retry") == 1 for d in logs)
    audit = [r.getMessage() for r in caplog.records if r.name == f"{PKG}.audit"]
    assert (
        audit == [audit[0]]
        and "tool=get_item method=GET path=/items/{item_id} status=200" in audit[0]
        and "retries=1" in audit[0]
    )


@pytest.mark.anyio
async def test_log_level_is_honoured(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(503, {"Retry-After": "0"}), Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with Client(make(server_module, upstream, retries=1), mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("error")
        assert not (await client.call_tool("get_item", {"item_id": "1"})).is_error
    assert logs == []  # the retry notice is "info", below the level the client asked for


@pytest.mark.anyio
async def test_retries_are_bounded_and_only_for_idempotent_methods(
    server_module: ModuleType, upstream: Upstream
) -> None:
    upstream.script("/items/1", Answer(503, {"Retry-After": "0"}))
    upstream.script("/items", Answer(503, {"Retry-After": "0"}))
    server = make(server_module, upstream, retries=2)
    async with Client(server, mode="legacy") as client:
        got = await client.call_tool("get_item", {"item_id": "1"})
        put = await client.call_tool("put_item", {"item_id": "1"})
        post = await client.call_tool("create_item", {"id": 1, "name": "x"})
    assert got.is_error and put.is_error and "503" in text_of(got)
    assert [r.method for r in upstream.for_path("/items/1")] == ["GET"] * 3 + ["PUT"] * 3
    assert post.is_error and "503" in text_of(post) and len(upstream.for_path("/items")) == 1
    assert json.loads(upstream.for_path("/items")[0].body) == {"id": 1, "name": "x"}


@pytest.mark.anyio
async def test_connection_reset(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(reset=True), Answer(reset=True), Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    ok = await call(make(server_module, upstream, retries=2), "get_item", {"item_id": "1"})
    assert not ok.is_error and len(upstream.for_path("/items/1")) == 3
    upstream.script("/items/1", Answer(reset=True))
    failed = await call(make(server_module, upstream, retries=0), "get_item", {"item_id": "1"})
    assert failed.is_error and "connection" in text_of(failed).lower()


@pytest.mark.anyio
async def test_cancellation_reaches_the_upstream(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(hang=True))
    async with Client(make(server_module, upstream), mode="legacy") as client:
        with anyio.move_on_after(0.5):
            await client.call_tool("get_item", {"item_id": "1"})
        deadline = time.monotonic() + 5
        while not upstream.closed and time.monotonic() < deadline:
            await anyio.sleep(0.05)
    assert upstream.closed == ["/items/1"]


@pytest.mark.anyio
async def test_rate_limit_spaces_requests(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    async with Client(make(server_module, upstream, rate_limit=5.0), mode="legacy") as client:
        for _ in range(4):
            assert not (await client.call_tool("get_item", {"item_id": "1"})).is_error
    times = [r.at for r in upstream.requests]
    # 5 per second: 0.2 s apart (the first request also pays for opening the connection, so it is left out)
    assert times[3] - times[1] >= 0.37


@pytest.mark.anyio
async def test_connection_pool_limit(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "one"}', delay=0.4))
    async with Client(make(server_module, upstream, max_connections=1), mode="legacy") as client:
        async with anyio.create_task_group() as group:
            for _ in range(2):
                group.start_soon(client.call_tool, "get_item", {"item_id": "1"})
    first, second = upstream.requests
    assert second.at - first.at >= 0.35  # one connection: the second request waited for the first answer


@pytest.mark.anyio
async def test_long_call_reports_progress(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "one"}', delay=0.5))
    messages: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with Client(make(server_module, upstream, progress_interval=0.4), mode="legacy") as client:
        result = await client.call_tool("get_item", {"item_id": "1"}, progress_callback=on_progress)
    # a heartbeat at 0.4 s of a 0.5 s wait (on a loaded machine the wait can outlast a second interval: 0.8 s)
    assert not result.is_error and 1 <= len(messages) <= 2, messages
    assert messages[0] in ("waiting for the API (0.4 s)", "waiting for the API (0.5 s)"), messages
