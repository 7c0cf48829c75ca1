"""A paginated API for tests and benchmarks: its OpenAPI document and a handler for support.recorder that
really pages through fixed data, in the four styles the generator recognises.

    with recording_upstream() as upstream:
        upstream.respond_with(PagesApi(upstream.url).handle)

- GET /repos/{owner}/{repo}/issues?page&per_page&state: a JSON array, `Link: <...>; rel="next", <...>; rel="last"`
  as GitHub sends it (the next URL names the repository by id: another path, same query arguments).
- GET /v1/customers?limit&starting_after: `{"object": "list", "data": [...], "has_more": bool, "url": ...}` (Stripe).
- GET /files?pageSize&pageToken: `{"files": [...], "nextPageToken": "..."}` (Google; absent on the last page).
- GET /records?offset&limit: `{"records": [...], "total": N}`.
- GET /drf/items?page: `{"count": N, "next": "<absolute URL>" | null, "previous": ..., "results": [...]}` (Django
  REST framework): the response has its own `next`, so the tool's `next` travels in the result's `_meta`.
- GET /docs/{id}: one object with a long text (`size` words).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from .recorder import RecordedRequest, Reply

JSON = (("Content-Type", "application/json"),)


def _int(name: str, minimum: int = 0, maximum: int | None = None, default: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        schema["maximum"] = maximum
    if default is not None:
        schema["default"] = default
    return {"name": name, "in": "query", "schema": schema}


def _ok(schema: dict[str, Any], headers: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"description": "ok", "content": {"application/json": {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return {"200": response}


ISSUE = {
    "type": "object",
    "required": ["number", "title", "user", "state"],
    "properties": {
        "number": {"type": "integer"},
        "title": {"type": "string"},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "user": {
            "type": "object",
            "required": ["login"],
            "properties": {"login": {"type": "string"}, "id": {"type": "integer"}},
        },
        "labels": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "body": {"type": "string", "nullable": True},
    },
}
CUSTOMER = {
    "type": "object",
    "required": ["id", "object", "email"],
    "properties": {
        "id": {"type": "string"},
        "object": {"type": "string", "enum": ["customer"]},
        "email": {"type": "string"},
        "name": {"type": "string"},
        "description": {"type": "string", "nullable": True},
    },
}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pages API", "version": "1.0"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "paths": {
        "/repos/{owner}/{repo}/issues": {
            "get": {
                "operationId": "issues/list-for-repo",
                "parameters": [
                    {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "state", "in": "query", "schema": {"type": "string", "enum": ["open", "closed", "all"]}},
                    _int("per_page", 1, 100, 30),
                    _int("page", 1, None, 1),
                ],
                "responses": _ok(
                    {"type": "array", "items": {"$ref": "#/components/schemas/issue"}},
                    {"Link": {"schema": {"type": "string"}}},
                ),
            }
        },
        "/v1/customers": {
            "get": {
                "operationId": "GetCustomers",
                "parameters": [
                    _int("limit", 1, 100),
                    {"name": "starting_after", "in": "query", "schema": {"type": "string"}},
                    {"name": "ending_before", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": _ok(
                    {
                        "type": "object",
                        "required": ["data", "has_more", "object", "url"],
                        "properties": {
                            "object": {"type": "string", "enum": ["list"]},
                            "data": {"type": "array", "items": {"$ref": "#/components/schemas/customer"}},
                            "has_more": {"type": "boolean"},
                            "url": {"type": "string", "pattern": "^/v1/customers"},
                        },
                    }
                ),
            }
        },
        "/files": {
            "get": {
                "operationId": "files.list",
                "parameters": [
                    _int("pageSize", 1, 1000),
                    {"name": "pageToken", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": _ok(
                    {
                        "type": "object",
                        "properties": {
                            "files": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["id", "name"],
                                    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                                },
                            },
                            "nextPageToken": {"type": "string"},
                        },
                    }
                ),
            }
        },
        "/records": {
            "get": {
                "operationId": "listRecords",
                "parameters": [_int("offset", 0), _int("limit", 1, 50)],
                "responses": _ok(
                    {
                        "type": "object",
                        "properties": {
                            "records": {
                                "type": "array",
                                "items": {"type": "object", "properties": {"n": {"type": "integer"}}},
                            },
                            "total": {"type": "integer"},
                        },
                    }
                ),
            }
        },
        "/drf/items": {
            "get": {
                "operationId": "drf_list",
                "parameters": [_int("page", 1)],
                "responses": _ok(
                    {
                        "type": "object",
                        "properties": {
                            "count": {"type": "integer"},
                            "next": {"type": "string", "format": "uri", "nullable": True},
                            "previous": {"type": "string", "format": "uri", "nullable": True},
                            "results": {
                                "type": "array",
                                "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
                            },
                        },
                    }
                ),
            }
        },
        "/docs/{id}": {
            "get": {
                "operationId": "getDoc",
                "x-mcp-result-tokens": 300,
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                    _int("size", 1, 100_000),
                ],
                "responses": _ok(
                    {
                        "type": "object",
                        "required": ["id", "text"],
                        "properties": {"id": {"type": "string"}, "text": {"type": "string"}},
                    }
                ),
            }
        },
    },
    "components": {"schemas": {"issue": ISSUE, "customer": CUSTOMER}},
}


def issue(number: int, body_words: int = 20) -> dict[str, Any]:
    return {
        "number": number,
        "title": f"Issue number {number}",
        "state": "open",
        "user": {"login": f"user{number % 7}", "id": 1000 + number},
        "labels": [{"name": "bug"}, {"name": f"area-{number % 3}"}],
        "body": " ".join(f"word{i}" for i in range(body_words)),
    }


def customer(number: int) -> dict[str, Any]:
    return {
        "id": f"cus_{number:03d}",
        "object": "customer",
        "email": f"person{number}@example.com",
        "name": f"Person {number}",
        "description": "A customer of the shop, with a few words of description.",
    }


@dataclass
class PagesApi:
    url: str  # the upstream's base URL (Link headers are absolute, as GitHub's are)
    count: int = 23  # items in every collection
    body_words: int = 20  # words in each issue body

    def handle(self, request: RecordedRequest) -> Reply:
        query = {k: v[-1] for k, v in parse_qs(request.query, keep_blank_values=True).items()}
        path = request.path
        if path.startswith("/repos/") and path.endswith("/issues") or path.startswith("/repositories/"):
            return self.issues(query)
        if path == "/v1/customers":
            return self.customers(query)
        if path == "/files":
            return self.files(query)
        if path == "/records":
            return self.records(query)
        if path == "/drf/items":
            page = int(query.get("page", "1"))
            body = {
                "count": self.count,
                "next": f"{self.url}/drf/items?page={page + 1}" if page * 10 < self.count else None,
                "previous": f"{self.url}/drf/items?page={page - 1}" if page > 1 else None,
                "results": [{"id": n} for n in range((page - 1) * 10, min(page * 10, self.count))],
            }
            return Reply(200, json.dumps(body).encode(), JSON)
        if path.startswith("/docs/"):
            words = int(query.get("size", "2000"))
            text = " ".join(f"w{i % 10}" for i in range(words))
            return Reply(200, json.dumps({"id": path.rsplit("/", 1)[1], "text": text}).encode(), JSON)
        return Reply(404, b'{"message": "Not Found"}', JSON)

    def issues(self, query: dict[str, str]) -> Reply:
        page, size = int(query.get("page", "1")), int(query.get("per_page", "30"))
        items = [issue(n, self.body_words) for n in range(1, self.count + 1)][(page - 1) * size : page * size]
        last = max(1, -(-self.count // size))
        links = []
        state = f"&state={query['state']}" if "state" in query else ""
        if page < last:
            links.append(f'<{self.url}/repositories/42/issues?page={page + 1}&per_page={size}{state}>; rel="next"')
            links.append(f'<{self.url}/repositories/42/issues?page={last}&per_page={size}{state}>; rel="last"')
        headers = JSON + ((("Link", ", ".join(links)),) if links else ())
        return Reply(200, json.dumps(items).encode(), headers)

    def customers(self, query: dict[str, str]) -> Reply:
        size = int(query.get("limit", "10"))
        every = [customer(n) for n in range(1, self.count + 1)]
        start = 0
        if "starting_after" in query:
            start = next(i + 1 for i, c in enumerate(every) if c["id"] == query["starting_after"])
        page = every[start : start + size]
        body = {"object": "list", "data": page, "has_more": start + size < len(every), "url": "/v1/customers"}
        return Reply(200, json.dumps(body).encode(), JSON)

    def files(self, query: dict[str, str]) -> Reply:
        size = int(query.get("pageSize", "10"))
        start = int(query["pageToken"].removeprefix("tok-")) if "pageToken" in query else 0
        body: dict[str, Any] = {
            "files": [{"id": f"f{n}", "name": f"file {n}.txt"} for n in range(start, min(start + size, self.count))]
        }
        if start + size < self.count:
            body["nextPageToken"] = f"tok-{start + size}"
        return Reply(200, json.dumps(body).encode(), JSON)

    def records(self, query: dict[str, str]) -> Reply:
        offset, size = int(query.get("offset", "0")), int(query.get("limit", "10"))
        body = {"records": [{"n": n} for n in range(offset, min(offset + size, self.count))], "total": self.count}
        return Reply(200, json.dumps(body).encode(), JSON)
