"""Tests of the generated petstore server's JSON results: next pages, auto-pagination, `fields` and the budget.

In-process, with the fake API and helpers of support.py, and generic over the API: each
check takes the first tool that suits it (a paginated one, a list, one with an outputSchema); when the API has
none, the test asserts that property of the tool list instead. Every structured result is checked against the
tool's outputSchema with jsonschema, as the official client does.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import mcp.types as types
import pytest
from mcp import Client

from petstore.cli import parse_args, settings_from
from petstore.settings import ENV_PREFIX
from samples import Sampler, sample
from support import (
    BASE_URL,
    ROUTES,
    TOOLS,
    Recorder,
    arguments_for,
    first,
    method,
    server,
    target,
    text_of,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


def results(tool: dict[str, Any]) -> dict[str, Any]:
    plan: dict[str, Any] = ROUTES[tool["name"]].get("results") or {}
    return plan


def paginated(tool: dict[str, Any]) -> bool:
    return "pages" in results(tool) and "items" in results(tool)


def a_list(tool: dict[str, Any]) -> bool:
    return (
        "items" in results(tool)
        and bool(tool.get("outputSchema"))
        and "tokens" not in results(tool)
    )


def valid(tool: dict[str, Any], result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict), text_of(result)
    jsonschema.Draft202012Validator(tool["outputSchema"]).validate(
        result.structured_content
    )
    return result.structured_content


def resolve(schema: Any, defs: dict[str, Any]) -> Any:
    for _ in range(16):
        if not isinstance(schema, dict) or "$ref" not in schema:
            break
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    return schema


def item_schema(tool: dict[str, Any]) -> Any:
    """The outputSchema of one item of the tool's list ({}: any, for a tool listed without an outputSchema)."""
    if not tool.get("outputSchema"):
        return {}
    schema = tool["outputSchema"]
    defs = schema.get("$defs", {})
    node = (
        schema["properties"]["result"] if ROUTES[tool["name"]]["wrapResult"] else schema
    )
    for key in [k for k in results(tool)["items"].split(".") if k]:
        node = resolve(node, defs).get("properties", {}).get(key, {})
    return resolve(node, defs).get("items", {})


def put(data: Any, path: str | None, value: Any) -> Any:
    """`data` (a dict) with `value` at the dotted `path` ("" replaces `data`)."""
    if path is None:
        return data
    if not path:
        return value
    head, _, rest = path.partition(".")
    return {**data, head: put(data.get(head, {}), rest, value)}


def items(tool: dict[str, Any], count: int, start: int = 0) -> list[Any]:
    """`count` items the tool's item schema accepts, each with an `id` (the after_id style's cursor)."""
    schema = item_schema(tool)
    defs = (tool.get("outputSchema") or {}).get("$defs", {})
    one = sample(schema, defs)
    plain = {
        "id": "i0",
        "name": "x",
    }  # an object, where the item schema allows one (a loosened `{}` does)
    if not isinstance(one, dict) and Sampler(defs).problem(schema, plain) is None:
        one = plain
    if not isinstance(one, dict):
        return [one] * count
    return [
        (
            {**one, "id": f"i{start + n}"}
            if "id" not in one or isinstance(one["id"], str)
            else {**one, "id": start + n}
        )
        for n in range(count)
    ]


def page(
    tool: dict[str, Any], count: int, more: bool, start: int = 0
) -> httpx.Response:
    """An answer with `count` items that says there is (or is not) a next page, in the tool's style."""
    plan = results(tool)
    pages, path = plan["pages"], plan["items"]
    body = put({} if path else [], path, items(tool, count, start))
    headers = {"content-type": "application/json"}
    kind = pages["kind"]
    query = pages.get("query") or [["page", "page", "integer"]]
    wire, _, typed = next((q for q in query if q[2] == "integer"), query[0])
    value = str(start + count) if typed == "integer" else f"token{start + count}"
    if kind == "link" and more:
        headers["link"] = (
            f'<{BASE_URL}/next?{wire}={value}>; rel="next", <{BASE_URL}/x?{wire}=99>; rel="last"'
        )
    elif kind == "url":
        body = put(
            body, pages["member"], f"{BASE_URL}/next?{wire}={value}" if more else None
        )
    elif kind == "cursor":
        body = put(body, pages["member"], f"c{start + count}" if more else None)
    elif kind in ("after_id", "page", "offset"):
        body = put(body, pages.get("flag"), more)
        body = put(body, pages.get("total"), start + count + (100 if more else 0))
        body = put(body, pages.get("pages"), (2 if more else 1) + start)
    return httpx.Response(200, content=json.dumps(body).encode(), headers=headers)


def test_result_plans_match_the_tool_surface() -> None:
    for tool in TOOLS:
        plan, props = results(tool), tool["inputSchema"]["properties"]
        for key in ("fields", "maxItems", "maxPages"):
            assert key not in plan or plan[key] in props, (tool["name"], key)
        declared = (
            (tool.get("outputSchema") or {}).get("properties", {}).get("next", {})
        )
        if (
            plan.get("nextIn") == "structured"
        ):  # the server's `next`: {"arguments": {...}}
            assert "pages" in plan and "arguments" in declared.get(
                "properties", {}
            ), tool["name"]
        elif (
            "pages" in plan
        ):  # the API's own member is called next, or there is no outputSchema: `next` in _meta
            assert plan.get("nextIn") == "meta" and (
                declared or not tool.get("outputSchema")
            ), tool["name"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_next_arguments_and_none_on_the_last_page(mode: str) -> None:
    tool = first(paginated)
    if (
        tool is None
    ):  # no paginated tool: no result carries `next`, and no tool declares one
        assert not any(
            paginated(t)
            or "next" in (t.get("outputSchema") or {}).get("properties", {})
            for t in TOOLS
        )
        return
    arguments = arguments_for(tool)
    answers = [page(tool, 2, True), page(tool, 1, False, 2)]
    recorder = Recorder(answer=lambda request: answers.pop(0))
    async with Client(server(recorder), mode=mode) as client:
        one = await client.call_tool(tool["name"], arguments)
        where = (
            (one.structured_content or {})
            if results(tool).get("nextIn") == "structured"
            else (one.meta or {})
        )
        nxt = where.get("next")
        assert nxt, text_of(one)
        changed = {k for k, v in nxt["arguments"].items() if arguments.get(k) != v}
        assert len(changed) == 1 and all(
            nxt["arguments"].get(k) == v
            for k, v in arguments.items()
            if k not in changed
        )
        assert f"[next page: call {tool['name']} with arguments" in text_of(one)
        last = await client.call_tool(tool["name"], nxt["arguments"])
    assert not (
        (last.structured_content or {})
        if results(tool).get("nextIn") == "structured"
        else (last.meta or {})
    ).get("next")
    assert "[next page" not in text_of(last) and len(recorder.requests) == 2


async def test_max_items_stops_at_the_bound() -> None:
    tool = first(lambda t: paginated(t) and "maxItems" in results(t))
    if tool is None:
        assert not any("maxItems" in results(t) for t in TOOLS if paginated(t))
        return
    answers = [page(tool, 2, True), page(tool, 2, True, 2), page(tool, 2, True, 4)]
    recorder = Recorder(answer=lambda request: answers.pop(0))
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(
            tool["name"], {**arguments_for(tool), results(tool)["maxItems"]: 3}
        )
    assert len(recorder.requests) == 2  # 2 + 2 items reach 3: no third page
    body = json.loads(text_of(result).split("\n")[0])
    path = results(tool)["items"]
    merged = body if not path else body[path.split(".")[0]]
    for key in [k for k in path.split(".")[1:] if k]:
        merged = merged[key]
    assert len(merged) == 3 and "3 items from 2 pages" in text_of(result)


async def test_budget_trims_a_list_to_whole_items_and_stays_valid() -> None:
    tool = first(a_list)
    if tool is None:
        assert not any(a_list(t) for t in TOOLS)
        return
    path = results(tool)["items"]
    body = put({} if path else [], path, items(tool, 3000))
    recorder = Recorder(status=200, body=json.dumps(body).encode())
    async with Client(server(recorder, result_tokens=500), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    valid(tool, result)
    shown = json.loads(text_of(result).split("\n")[0])
    for key in [k for k in path.split(".") if k]:
        shown = shown[key]
    assert 0 < len(shown) < 3000 and f"showing {len(shown)} of 3000 items" in text_of(
        result
    )
    assert len(text_of(result)) <= 500 * 4


async def test_long_strings_are_cut_at_a_space_with_a_marker() -> None:
    def an_object(
        tool: dict[str, Any],
    ) -> bool:  # with the server's budget (no x-mcp-result-tokens of its own)
        return (
            bool(tool.get("outputSchema"))
            and not ROUTES[tool["name"]]["wrapResult"]
            and "tokens" not in results(tool)
        )

    tool = first(an_object)
    if tool is None:
        assert not any(an_object(t) for t in TOOLS)
        return
    recorder = Recorder(
        status=200, body=json.dumps({"note": "lorem ipsum " * 5000}).encode()
    )
    async with Client(server(recorder, result_tokens=300), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    note = valid(tool, result)["note"]
    head, _, rest = note.partition("… [cut: ")
    assert head.endswith(("lorem", "ipsum")) and rest.endswith(" more characters]")
    assert len(text_of(result)) <= 300 * 4 and "long strings are cut" in text_of(result)
    async with Client(
        server(recorder, result_tokens=0), mode="legacy"
    ) as client:  # 0: no budget
        assert (
            len(text_of(await client.call_tool(tool["name"], arguments_for(tool))))
            > 60_000
        )


async def test_fields_keeps_only_those_members() -> None:
    tool = first(
        lambda t: a_list(t)
        and "fields" in results(t)
        and isinstance(items(t, 1)[0], dict)
    )
    if (
        tool is None
    ):  # no list tool whose items are objects: `fields` has no members to keep
        return
    path = results(tool)["items"]
    listed = items(tool, 3)
    if not isinstance(listed[0], dict) or len(listed[0]) < 2:
        listed = [
            {**item, "other": 1} if isinstance(item, dict) else item for item in listed
        ]
    keep = next(iter(listed[0]))
    recorder = Recorder(
        status=200, body=json.dumps(put({} if path else [], path, listed)).encode()
    )
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(
            tool["name"], {**arguments_for(tool), results(tool)["fields"]: [keep]}
        )
    valid(tool, result)
    shown = json.loads(text_of(result).split("\n")[0])
    for key in [k for k in path.split(".") if k]:
        shown = shown[key]
    assert shown == [{keep: item[keep]} for item in listed]
    assert "fields" not in str(recorder.requests[0].url)


async def test_text_past_the_budget_is_cut_with_a_link_to_the_whole_answer() -> None:
    """A read-only tool's long text is cut at a word, with a resource link that any server can read (the URI
    names the call); other tools get no link."""
    tool = first(lambda t: method(t) == "GET") or target()
    body = "lorem ipsum " * 2000
    recorder = Recorder(
        status=200, body=body.encode(), content_type="text/plain; charset=utf-8"
    )
    async with Client(server(recorder, result_tokens=300), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
        assert not result.is_error and len(text_of(result)) <= 300 * 4
        assert text_of(result).startswith(
            "lorem ipsum"
        ) and "cut to the result budget of about 300 tokens" in text_of(result)
        links = [b for b in result.content if isinstance(b, types.ResourceLink)]
        if method(tool) != "GET":
            assert not links
            return
        assert len(links) == 1
    async with Client(
        server(recorder), mode="legacy"
    ) as client:  # another server: nothing is shared
        read = await client.read_resource(links[0].uri)
    (content,) = read.contents
    assert (
        isinstance(content, types.TextResourceContents)
        and content.text == body
        and content.mime_type == "text/plain"
    )
    assert (
        len(recorder.requests) == 2
        and recorder.requests[0].url == recorder.requests[1].url
    )


def test_result_tokens_flag_and_variable() -> None:
    assert settings_from(parse_args([]), {}).result_tokens == 20_000
    assert (
        settings_from(
            parse_args([]), {f"{ENV_PREFIX}_RESULT_TOKENS": "500"}
        ).result_tokens
        == 500
    )
    assert (
        settings_from(
            parse_args(["--result-tokens", "0"]), {f"{ENV_PREFIX}_RESULT_TOKENS": "500"}
        ).result_tokens
        == 0
    )
    with pytest.raises(SystemExit):
        parse_args(["--result-tokens", "-3"])
