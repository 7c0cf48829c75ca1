"""The recording upstream itself: it keeps requests exactly as they arrive."""

from __future__ import annotations

import httpx

from support.recorder import Reply, recording_upstream


def test_records_raw_request_and_replies() -> None:
    with recording_upstream() as upstream:
        upstream.respond(201, b'{"id": 1}', X_Trace="t1")
        response = httpx.post(
            upstream.url + "/a%2Fb/c?x=1&x=2&y=%5B1%5D",
            content=b"\x00\x01raw",
            headers={"Content-Type": "application/octet-stream", "Cookie": "a=1; b=2", "X-Id": "7"},
        )
        assert response.status_code == 201 and response.json() == {"id": 1}
        assert response.headers["x-trace"] == "t1"
        request = upstream.last()
    assert request.method == "POST"
    assert request.path == "/a%2Fb/c" and request.query == "x=1&x=2&y=%5B1%5D" and request.has_query
    assert request.body == b"\x00\x01raw"
    assert request.content_type == "application/octet-stream"
    assert request.cookie == "a=1; b=2"
    assert request.header("x-id") == "7"


def test_handler_and_no_query() -> None:
    with recording_upstream() as upstream:
        upstream.respond_with(lambda r: Reply(200, r.path.encode(), (("Content-Type", "text/plain"),)))
        assert httpx.get(upstream.url + "/echo/me").text == "/echo/me"
        assert upstream.last().query == "" and not upstream.last().has_query
        assert len(upstream.requests) == 1
