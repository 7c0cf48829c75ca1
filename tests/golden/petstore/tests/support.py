"""What the tests of the generated petstore server share: the tools, a fake API that records each
request, the server under test with every credential set, and the choice of the tool each check calls (the
first, in tools.json order, that suits it and has sample arguments).
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from importlib.resources import files
from typing import Any

import anyio
import httpx
import mcp.types as types
import pytest

from petstore.auth import usable
from petstore.server import build_server
from petstore.settings import CREDENTIAL_VARIABLES, Settings
from samples import built

PACKAGE = files("petstore")
TOOLS: list[dict[str, Any]] = json.loads(
    PACKAGE.joinpath("tools.json").read_text(encoding="utf-8")
)
ROUTES: dict[str, dict[str, Any]] = json.loads(
    PACKAGE.joinpath("routes.json").read_text(encoding="utf-8")
)
BASE_URL = "http://api.test"
# one made-up value per credential variable, recognisable in requests and never allowed in results
SECRETS = {
    name: f"s3cret{i}-{name.lower()}" for i, name in enumerate(CREDENTIAL_VARIABLES)
}
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})

Answer = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


class Recorder:
    """A fake API: records each request (and when it came) and answers with a fixed response or `answer`."""

    def __init__(
        self,
        status: int = 204,
        body: bytes = b"",
        content_type: str = "application/json",
        answer: Answer | None = None,
    ) -> None:
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []
        self.status, self.body, self.content_type = status, body, content_type
        self.answer = answer

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.times.append(time.monotonic())
        if self.answer is not None:
            reply = self.answer(request)
            return reply if isinstance(reply, httpx.Response) else await reply
        return httpx.Response(
            self.status, content=self.body, headers={"content-type": self.content_type}
        )


def server(recorder: Recorder, base_url: str = BASE_URL, **options: Any) -> Any:
    """The server with every credential set, no retries (unless asked) and `recorder` as the API."""
    settings = replace(
        Settings(base_url=base_url, retries=0, backoff=0.01, credentials=SECRETS),
        **options,
    )
    return build_server(settings, httpx.MockTransport(recorder))


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def script(*answers: httpx.Response) -> Answer:
    """Answer with `answers` in turn, then with the last one again."""
    replies = list(answers)

    def answer(request: httpx.Request) -> httpx.Response:
        return replies.pop(0) if len(replies) > 1 else replies[0]

    return answer


def buildable(tool: dict[str, Any]) -> bool:
    return isinstance(built(tool), dict)


def arguments_for(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool's sample arguments (a copy); the test is skipped, with the reason, when none can be built.
    An argument a client profile made required only to send null for "absent" (routes.json `restore`) is null.
    """
    arguments = built(tool)
    if isinstance(arguments, str):
        pytest.skip(
            f"no valid arguments could be built for {tool['name']}: {arguments}"
        )
    absent = ROUTES[tool["name"]].get("restore") or {}
    return {
        key: None if absent.get(key, {}).get("absent") else value
        for key, value in copy.deepcopy(arguments).items()
    }


def callable_here(tool: dict[str, Any]) -> bool:
    """False for a tool whose every security alternative is one this server cannot send."""
    alternatives = ROUTES[tool["name"]].get("security") or [{}]
    return any(usable(alternative) for alternative in alternatives)


def method(tool: dict[str, Any]) -> str:
    return str(ROUTES[tool["name"]]["method"])


def first(*conditions: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The first callable tool (tools.json order) meeting every condition that has sample arguments; None when
    no callable tool meets them; the test is skipped when those that do all lack sample arguments.
    """
    suiting = [t for t in CALLABLE if all(condition(t) for condition in conditions)]
    found = next((t for t in suiting if buildable(t)), None)
    if found is None and suiting:
        names = ", ".join(t["name"] for t in suiting[:5])
        pytest.skip(
            f"no valid arguments could be built for the tools that suit this check ({names})"
        )
    return found


def idempotent(tool: dict[str, Any]) -> bool:
    return method(tool) in IDEMPOTENT


CALLABLE = [tool for tool in TOOLS if callable_here(tool)]


def target() -> dict[str, Any]:
    """The tool most checks call: the first callable one, an idempotent one if there is one (retries apply)."""
    tool = first(idempotent) or first()
    if (
        tool is None
    ):  # every tool needs security this server cannot send (test_every_tool... checks them)
        pytest.skip("no tool of this API can be called by this server")
    return tool


def path_pattern(template: str) -> re.Pattern[str]:
    path = template.split("#", 1)[0].split("?", 1)[
        0
    ]  # a fragment is never sent; a query in the key is the query's
    parts = re.split(r"{[^}]+}", path)
    return re.compile("^" + "[^/?#]+".join(re.escape(p) for p in parts) + "$")


def args_in(tool: dict[str, Any], *places: str) -> list[str]:
    """The tool's arguments that the route sends in `places` (path, query, header, cookie)."""
    return [
        arg["arg"]
        for arg in ROUTES[tool["name"]].get("args", [])
        if arg.get("in") in places
    ]


def wrong_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool["inputSchema"]
    props, defs = schema.get("properties", {}), schema.get("$defs", {})
    wrong = {k: v for k, p in props.items() if (v := wrong_value(p, defs)) is not None}
    # a multipart file may be a plain base64 string: a number is what it never accepts
    return wrong | {k: 1.5 for k in file_args(tool) if isinstance(wrong.get(k), str)}


def wrong_value(schema: Any, defs: dict[str, Any]) -> Any:
    """A value `schema` rejects for its type or enum; None when it accepts anything."""
    for _ in range(8):
        if not isinstance(schema, dict):
            return None
        if "$ref" in schema:
            schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
        elif isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            schema = schema["allOf"][0]
        else:
            break
    kinds = schema.get("type") if isinstance(schema, dict) else None
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if not kinds:
        return (
            "surely-not-an-allowed-value"
            if isinstance(schema, dict) and schema.get("enum")
            else None
        )
    for value, kind in (
        ("text", "string"),
        (1.5, "number"),
        (True, "boolean"),
        ([1], "array"),
        ({"a": 1}, "object"),
    ):
        if kind not in kinds:
            return value
    return None


def file_args(tool: dict[str, Any]) -> list[str]:
    return [
        arg["arg"] for arg in ROUTES[tool["name"]].get("args", []) if arg.get("file")
    ]


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """`app`'s ASGI lifespan, as a server such as uvicorn runs it: started before the block, shut down after
    (the HTTP app's session managers run in it)."""
    to_app, app_receives = anyio.create_memory_object_stream[dict[str, Any]](2)
    app_sends, from_app = anyio.create_memory_object_stream[dict[str, Any]](2)
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    async with anyio.create_task_group() as group:
        group.start_soon(app, scope, app_receives.receive, app_sends.send)
        await to_app.send({"type": "lifespan.startup"})
        assert (await from_app.receive())["type"] == "lifespan.startup.complete"
        try:
            yield
        finally:
            await to_app.send({"type": "lifespan.shutdown"})
            assert (await from_app.receive())["type"] == "lifespan.shutdown.complete"
