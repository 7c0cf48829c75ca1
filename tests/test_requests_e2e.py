"""End to end: fixture specs -> generated servers (in-process, official MCP client) -> the exact HTTP request
that reaches a recording upstream on 127.0.0.1 (method, raw path, raw query, headers, cookie, body bytes)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, generate_into
from support.generated import GeneratedPackage, text_of
from support.recorder import RecordedRequest, Upstream, recording_upstream


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with recording_upstream() as server:
        yield server


def _package(tmp_path_factory: pytest.TempPathFactory, fixture: str) -> GeneratedPackage:
    out = tmp_path_factory.mktemp("e2e") / fixture
    generate_into(FIXTURES / f"{fixture}.yaml", out)
    return GeneratedPackage(out)


@pytest.fixture(scope="module")
def styles(tmp_path_factory: pytest.TempPathFactory) -> GeneratedPackage:
    return _package(tmp_path_factory, "styles")


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> GeneratedPackage:
    return _package(tmp_path_factory, "bodies")


def send(
    package: GeneratedPackage, upstream: Upstream, tool: str, arguments: dict[str, Any], base: str = ""
) -> RecordedRequest:
    upstream.clear()
    upstream.respond(204, b"", content_type=None)
    result = package.call(upstream.url + base, tool, arguments)
    assert not result.is_error, text_of(result)
    assert len(upstream.requests) == 1
    return upstream.last()


RGB = {"R": 100, "G": 200}


# -- path styles ---------------------------------------------------------------------------------------
def test_path_simple(styles: GeneratedPackage, upstream: Upstream) -> None:
    r = send(styles, upstream, "path_simple", {"prim": "blue", "arr": [3, 4, 5], "obj": RGB, "objx": RGB}, "/v1")
    assert (r.method, r.path, r.has_query) == ("GET", "/v1/simple/blue/3,4,5/R,100,G,200/R=100,G=200", False)


def test_path_label(styles: GeneratedPackage, upstream: Upstream) -> None:
    args = {"prim": "blue", "arr": ["a", "b"], "arrx": ["a", "b"], "obj": RGB, "objx": RGB}
    r = send(styles, upstream, "path_label", args)
    assert r.path == "/label/.blue/.a,b/.a.b/.R,100,G,200/.R=100.G=200"


def test_path_matrix(styles: GeneratedPackage, upstream: Upstream) -> None:
    args = {"prim": "blue", "arr": ["a", "b"], "arrx": ["a", "b"], "obj": RGB, "objx": RGB}
    r = send(styles, upstream, "path_matrix", args)
    assert r.path == "/matrix/;prim=blue/;arr=a,b/;arrx=a;arrx=b/;obj=R,100,G,200/;R=100;G=200"


def test_path_values_are_percent_encoded(styles: GeneratedPackage, upstream: Upstream) -> None:
    r = send(styles, upstream, "path_simple", {"prim": "../a b/?#", "arr": [1], "obj": {}, "objx": {}})
    assert r.path.startswith("/simple/..%2Fa%20b%2F%3F%23/1/")


# -- query styles --------------------------------------------------------------------------------------
def test_query_form(styles: GeneratedPackage, upstream: Upstream) -> None:
    args = {
        "prim": 5,
        "arrx": ["a", "b"],
        "arr": ["a", "b"],
        "objx": RGB,
        "obj": RGB,
        "flag": True,
        "q": "a b&c=d",
        "raw": "a/b?c",
    }
    r = send(styles, upstream, "query_form", args)
    assert r.path == "/query/form"
    assert r.query == "prim=5&arrx=a&arrx=b&arr=a,b&R=100&G=200&obj=R,100,G,200&flag=true&q=a%20b%26c%3Dd&raw=a/b?c"


def test_query_delimited(styles: GeneratedPackage, upstream: Upstream) -> None:
    r = send(styles, upstream, "query_delimited", {"spaced": ["a", "b"], "piped": ["a", "b"], "pipedx": ["a", "b"]})
    assert r.query == "spaced=a%20b&piped=a|b&pipedx=a&pipedx=b"


def test_query_deep_object(styles: GeneratedPackage, upstream: Upstream) -> None:
    r = send(styles, upstream, "query_deep", {"filter": {"status": "open", "kind": "bug fix"}})
    assert r.query == "filter[status]=open&filter[kind]=bug%20fix"


def test_content_parameters(styles: GeneratedPackage, upstream: Upstream) -> None:
    r = send(styles, upstream, "query_content", {"where": {"age": 3}, "X-Meta": {"a": [1, 2]}})
    assert r.query == "where=%7B%22age%22%3A3%7D"
    assert r.header("X-Meta") == '{"a":[1,2]}'


def test_omitted_optional_arguments_are_not_sent(styles: GeneratedPackage, upstream: Upstream) -> None:
    r = send(styles, upstream, "query_form", {})
    assert (r.path, r.has_query) == ("/query/form", False)


# -- headers, cookies, path-level parameters ---------------------------------------------------------------
def test_headers_and_cookies(styles: GeneratedPackage, upstream: Upstream) -> None:
    args = {
        "itemId": 9007199254740993,
        "X-Request-Id": "req-1",
        "X-Tags": ["a", "b"],
        "X-Dims": {"w": 1, "h": 2},
        "session": "abc",
        "prefs": ["x", "y"],
    }
    r = send(styles, upstream, "get_item", args)
    assert (r.method, r.path) == ("GET", "/items/9007199254740993")
    assert r.header("X-Request-Id") == "req-1"
    assert r.header("X-Tags") == "a,b"
    assert r.header("X-Dims") == "w=1,h=2"
    assert r.cookie == "session=abc; prefs=x,y"


def test_path_level_parameters_apply_to_every_method(styles: GeneratedPackage, upstream: Upstream) -> None:
    r = send(styles, upstream, "delete_item", {"itemId": 4, "X-Request-Id": "r2"})
    assert (r.method, r.path, r.header("X-Request-Id")) == ("DELETE", "/items/4", "r2")
    assert styles.tool("delete_item")["inputSchema"]["properties"]["itemId"]["type"] == "integer"


def test_header_injection_is_refused(styles: GeneratedPackage, upstream: Upstream) -> None:
    upstream.clear()
    result = styles.call(upstream.url, "get_item", {"itemId": 1, "X-Request-Id": "a\r\nX-Evil: 1"})
    assert result.is_error and "X-Request-Id" in text_of(result)
    assert not upstream.requests


# -- argument names --------------------------------------------------------------------------------------
def test_odd_names_are_client_safe_and_sent_exactly(styles: GeneratedPackage, upstream: Upstream) -> None:
    schema = styles.tool("odd_names")["inputSchema"]
    keys = sorted(schema["properties"])
    assert keys == ["filter_status", "filter_status_2", "grosse", "id__header", "id__query", "page.size", "select"]
    assert all(re.fullmatch(r"[a-zA-Z0-9_.-]{1,64}", k) for k in keys)
    args = {
        "filter_status_2": "open",
        "filter_status": "plain",
        "select": "name,id",
        "page.size": 20,
        "grosse": "XL",
        "id__query": "q1",
        "id__header": "h1",
    }
    r = send(styles, upstream, "odd_names", args)
    assert r.query == "filter[status]=open&$select=name%2Cid&page.size=20&gr%C3%B6%C3%9Fe=XL&filter_status=plain&id=q1"
    assert r.header("id") == "h1"
