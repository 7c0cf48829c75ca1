"""Timeouts, retries, rate and connection limits, cancellation, progress and log notifications of the
generated petstore server."""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from petstore.settings import Settings
from petstore.web import http_app
from support import (
    BASE_URL,
    CALLABLE,
    Answer,
    Recorder,
    arguments_for,
    first,
    idempotent,
    lifespan,
    script,
    server,
    target,
    text_of,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


async def test_timeouts_are_tool_errors() -> None:
    def read_timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    cancelled: list[bool] = []

    async def hang(request: httpx.Request) -> httpx.Response:
        try:
            await anyio.sleep(30)
        finally:
            cancelled.append(True)
        raise AssertionError("the total timeout did not stop the request")

    tool = target()
    async with Client(
        server(Recorder(answer=read_timeout), timeout=0.5), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "no data for 0.5 s (read timeout)" in text_of(result)
    async with Client(
        server(Recorder(answer=hang), timeout=0.05), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        result.is_error
        and "within the total timeout of 0.05 s" in text_of(result)
        and cancelled
    )


def answers_then_ok(*first_answers: httpx.Response) -> Answer:
    return script(*first_answers, httpx.Response(204))


async def test_429_is_retried_honouring_retry_after_with_progress_and_log() -> None:
    """An idempotent call waits as Retry-After says; a client that sent a progressToken hears of the retry
    and, while waiting, of the wait; the client's log level gets the retry notice."""
    messages: list[str] = []
    logs: list[Any] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        messages.append(message or "")

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    tool = target()
    recorder = Recorder(
        answer=answers_then_ok(httpx.Response(429, headers={"Retry-After": "0.1"}))
    )
    busy_api = server(recorder, retries=2, progress_interval=0.02)
    async with Client(busy_api, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("info")
        result = await client.call_tool(
            tool["name"], arguments_for(tool), progress_callback=on_progress
        )
    if not idempotent(
        tool
    ):  # no tool of this API is idempotent: a 429 to a POST is not retried
        assert not any(idempotent(t) for t in CALLABLE)
        assert (
            result.is_error
            and "HTTP 429" in text_of(result)
            and len(recorder.requests) == 1
        )
        return
    assert not result.is_error and len(recorder.requests) == 2
    assert recorder.times[1] - recorder.times[0] >= 0.09  # waited as the API asked
    retry = messages.index("HTTP 429; retry 1 of 2 in 0.1 s")
    assert any(
        m.startswith("waiting for the API") for m in messages[retry + 1 :]
    )  # heartbeat during the wait
    assert any(isinstance(d, dict) and d.get("retry") == 1 for d in logs)


async def test_log_notifications_honour_the_client_level() -> None:
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    tool = target()
    recorder = Recorder(
        answer=answers_then_ok(httpx.Response(503, headers={"Retry-After": "0"}))
    )
    async with Client(
        server(recorder, retries=1), mode="legacy", logging_callback=on_log
    ) as client:
        await client.set_logging_level("error")
        await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        logs == []
    )  # a retry notice is "info" and a non-idempotent 503 a "warning": below "error"


async def test_a_log_level_set_over_http_is_not_kept() -> None:
    """Over HTTP (stateless) logging/setLevel is answered but not kept: no session holds it, and a level one
    replica kept would reach every other client of that replica and none of another's.
    """
    tool = target()
    seen: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        seen.append(params.data)

    recorder = Recorder(
        answer=answers_then_ok(httpx.Response(503, headers={"Retry-After": "0"}))
    )
    mcp_server = server(recorder, retries=1)
    app = http_app(mcp_server, Settings(base_url=BASE_URL))
    async with lifespan(app):
        http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app))
        async with http, Client(
            streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http),
            mode="legacy",
        ) as client:  # one client asks for debug over HTTP ...
            await client.set_logging_level("debug")
    async with Client(
        mcp_server, mode="legacy", logging_callback=on_log
    ) as client:  # ... another, asking for nothing, calls a tool that is retried
        await client.call_tool(tool["name"], arguments_for(tool))
    assert not [
        data for data in seen if isinstance(data, dict) and "retry" in data
    ]  # the retry notice is "info": below the default level


async def test_retries_are_bounded() -> None:
    tool = first(idempotent)
    recorder = Recorder(
        answer=lambda request: httpx.Response(
            503, headers={"Retry-After": "0"}, text="busy"
        )
    )
    if tool is None:  # nothing idempotent to retry
        assert not any(idempotent(t) for t in CALLABLE)
        return
    async with Client(server(recorder, retries=2), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "503" in text_of(result) and len(recorder.requests) == 3


async def test_non_idempotent_call_is_not_retried() -> None:
    tool = first(lambda t: not idempotent(t))
    recorder = Recorder(status=503, body=b"busy")
    if tool is None:  # every callable tool is idempotent (retried: see above)
        assert all(idempotent(t) for t in CALLABLE)
        return
    async with Client(server(recorder, retries=3), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "503" in text_of(result) and len(recorder.requests) == 1


async def test_refused_connection_is_retried_for_any_method() -> None:
    def refuse_once(request: httpx.Request) -> httpx.Response:
        if len(recorder.requests) == 1:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(204)

    tool = first(lambda t: not idempotent(t)) or target()
    recorder = Recorder(answer=refuse_once)
    async with Client(server(recorder, retries=1), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        not result.is_error and len(recorder.requests) == 2
    )  # it never reached the API: safe to resend


async def test_connection_reset() -> None:
    def reset(request: httpx.Request) -> httpx.Response:
        if len(recorder.requests) == 1:
            raise httpx.ReadError("connection reset by peer", request=request)
        return httpx.Response(204)

    tool = target()
    recorder = Recorder(answer=reset)
    async with Client(server(recorder, retries=0), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "(connection reset)" in text_of(result)
    recorder = Recorder(answer=reset)
    async with Client(server(recorder, retries=1), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    if idempotent(tool):  # resent once, then answered
        assert not result.is_error and len(recorder.requests) == 2
    else:  # it may have reached the API: not resent (no tool of this API is idempotent)
        assert (
            result.is_error
            and len(recorder.requests) == 1
            and not any(idempotent(t) for t in CALLABLE)
        )


async def test_cancelling_a_call_cancels_the_upstream_request() -> None:
    started, cancelled = anyio.Event(), anyio.Event()

    async def hang(request: httpx.Request) -> httpx.Response:
        started.set()
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return httpx.Response(204)

    tool = target()
    async with Client(server(Recorder(answer=hang)), mode="legacy") as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, tool["name"], arguments_for(tool))
            with anyio.fail_after(5):
                await started.wait()
            group.cancel_scope.cancel()  # the client gives up: it sends notifications/cancelled
        with anyio.fail_after(5):
            await cancelled.wait()


async def test_rate_limit_spaces_requests() -> None:
    tool = target()
    recorder = Recorder(status=204)
    async with Client(
        server(recorder, rate_limit=20.0), mode="legacy"
    ) as client:  # one per 50 ms
        started = time.monotonic()
        for _ in range(4):
            assert not (
                await client.call_tool(tool["name"], arguments_for(tool))
            ).is_error
        elapsed = time.monotonic() - started
    # the 4th request may start 3 intervals after the 1st at the earliest (a busy machine only adds time)
    assert len(recorder.requests) == 4 and elapsed >= 0.15, elapsed


async def test_connection_limit_caps_requests_in_flight() -> None:
    in_flight, most, released = 0, 0, False
    pair, overflow = anyio.Event(), anyio.Event()

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most, released
        in_flight += 1
        most = max(most, in_flight)
        if in_flight == 2:
            pair.set()
        if in_flight > 2:
            overflow.set()
        if (
            not released
        ):  # the first two requests (the cap lets 2 through) meet, then wait for a third
            with anyio.move_on_after(5):
                await pair.wait()
            with anyio.move_on_after(
                0.2
            ):  # without the cap, the other 3 would arrive meanwhile
                await overflow.wait()
            released = True
        in_flight -= 1
        return httpx.Response(204)

    tool = target()
    recorder = Recorder(answer=slow)
    async with Client(server(recorder, max_connections=2), mode="legacy") as client:
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(client.call_tool, tool["name"], arguments_for(tool))
    assert len(recorder.requests) == 5 and most == 2


async def test_long_call_reports_progress_when_asked() -> None:
    heard = anyio.Event()

    async def slow(request: httpx.Request) -> httpx.Response:
        if heard.is_set():  # later calls: a 100 ms wait
            await anyio.sleep(0.1)
        with anyio.move_on_after(
            5
        ):  # the first: the API answers once the client has heard progress (5 s at most)
            await heard.wait()
        return httpx.Response(204)

    messages: list[str] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        messages.append(message or "")
        heard.set()

    tool = target()
    async with Client(
        server(Recorder(answer=slow), progress_interval=0.02), mode="legacy"
    ) as client:
        result = await client.call_tool(
            tool["name"], arguments_for(tool), progress_callback=on_progress
        )
        assert not result.is_error and messages  # every 20 ms while the API is silent
        assert all(m.startswith("waiting for the API (") for m in messages), messages
        messages.clear()
        await client.call_tool(
            tool["name"], arguments_for(tool)
        )  # no progressToken: no progress
    async with Client(
        server(Recorder(answer=slow), progress_interval=0), mode="legacy"
    ) as client:
        await client.call_tool(
            tool["name"], arguments_for(tool), progress_callback=on_progress
        )
    assert messages == []  # an interval of 0 turns the heartbeat off
