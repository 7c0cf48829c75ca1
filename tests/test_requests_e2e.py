"""End to end: fixture specs -> generated servers (in-process, official MCP client) -> the exact HTTP request
that reaches a recording upstream on 127.0.0.1 (method, raw path, raw query, headers, cookie, body bytes)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import FIXTURES, generate_into
from support.generated import GeneratedPackage, text_of
from support.recorder import RecordedRequest, Upstream, recording_upstream


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with recording_upstream() as server:
        yield server


CONTROLS = ("fields", "max_items", "max_pages")  # result controls every JSON tool may take, never sent upstream


def arguments_of(tool: dict[str, Any]) -> list[str]:
    """The tool's arguments that reach the request (the result controls left out)."""
    return [k for k in tool["inputSchema"]["properties"] if k not in CONTROLS]


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


# credentials for the fixtures' security schemes, by the generated servers' variable names
CREDENTIALS = {"SWAGGER2_APIKEY": "key-1", "SWAGGER2_BASIC_USERNAME": "user", "SWAGGER2_BASIC_PASSWORD": "pass"}


def send(
    package: GeneratedPackage, upstream: Upstream, tool: str, arguments: dict[str, Any], base: str = ""
) -> RecordedRequest:
    upstream.clear()
    upstream.respond(204, b"", content_type=None)
    result = package.call(upstream.url + base, tool, arguments, CREDENTIALS)
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
    r = send(styles, upstream, "path_simple", {"prim": "../a b/?#", "arr": [1], "obj": {"a": 1}, "objx": {"b": ". ."}})
    assert r.path == "/simple/..%2Fa%20b%2F%3F%23/1/a,1/b=.%20."


def test_empty_path_value_is_refused(styles: GeneratedPackage, upstream: Upstream) -> None:
    upstream.clear()
    result = styles.call(upstream.url, "path_label", {"prim": "a", "arr": [], "arrx": ["b"], "obj": RGB, "objx": RGB})
    assert result.is_error and "arr: a path parameter cannot be empty" in text_of(result)
    assert not upstream.requests


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


# -- bodies ----------------------------------------------------------------------------------------------
def test_json_object_body_with_colliding_names(bodies: GeneratedPackage, upstream: Upstream) -> None:
    schema = bodies.tool("json_object")["inputSchema"]
    assert "created" not in schema["properties"]  # readOnly: not an input
    assert schema["properties"]["meta"]["type"] == ["object", "null"]  # nullable -> type union
    args = {"id__path": 5, "id__body": "b-5", "name": "ü", "tags": ["x"]}
    r = send(bodies, upstream, "json_object", args)
    assert (r.method, r.target, r.content_type) == ("POST", "/json/object/5", "application/json")
    assert r.body == '{"id":"b-5","name":"ü","tags":["x"]}'.encode()


def test_explicit_null_is_sent_for_nullable_body_properties_only(bodies: GeneratedPackage, upstream: Upstream) -> None:
    # a JSON body property whose schema allows null (nullable, or through a $ref): null is sent, clearing it;
    # for parameters null still means "not given"
    args = {"id__path": 5, "name": "n", "meta": None, "label": None, "trace": None, "X-Trace": None}
    r = send(bodies, upstream, "json_object", args)
    assert (r.target, r.header("X-Trace")) == ("/json/object/5", None)
    assert json.loads(r.body) == {"name": "n", "meta": None, "label": None}
    assert r.body == b'{"label":null,"meta":null,"name":"n"}'  # properties in name order


def test_json_non_object_body(bodies: GeneratedPackage, upstream: Upstream) -> None:
    r = send(bodies, upstream, "json_array", {"body": [1, 2, 3]})
    assert (r.content_type, r.body) == ("application/json", b"[1,2,3]")


def test_json_is_preferred_among_media_types(bodies: GeneratedPackage, upstream: Upstream) -> None:
    tool = bodies.tool("json_preferred")
    assert "application/vnd.api+json" in tool["description"] and "application/xml" in tool["description"]
    assert arguments_of(tool) == ["text"]  # readOnly id dropped
    r = send(bodies, upstream, "json_preferred", {"text": "hi"})
    assert (r.method, r.content_type, r.body) == ("PUT", "application/vnd.api+json", b'{"text":"hi"}')


def test_form_urlencoded(bodies: GeneratedPackage, upstream: Upstream) -> None:
    args = {"name": "a b&c", "count": 2, "colors": ["red", "blue"], "piped": ["x", "y"], "address": {"city": "Zürich"}}
    r = send(bodies, upstream, "form_urlencoded", args)
    assert r.content_type == "application/x-www-form-urlencoded"
    # fields in argument-name order (body properties are sorted so the spec's key order cannot change the output)
    assert r.body == (
        b"address=%7B%22city%22%3A%22Z%C3%BCrich%22%7D&colors=red&colors=blue&count=2&name=a%20b%26c&piped=x|y"
    )


def _parts(request: RecordedRequest) -> list[tuple[dict[str, str], bytes]]:
    """The parts of a multipart/form-data body: (headers, data), parsed by hand from the raw bytes."""
    content_type = request.content_type or ""
    match = re.fullmatch(r"multipart/form-data; boundary=([0-9a-f]{32})", content_type)
    assert match, content_type
    delimiter = b"--" + match.group(1).encode()
    chunks = request.body.split(delimiter)
    assert chunks[0] == b"" and chunks[-1] == b"--\r\n"
    parts = []
    for chunk in chunks[1:-1]:
        assert chunk.startswith(b"\r\n") and chunk.endswith(b"\r\n")
        head, _, data = chunk[2:-2].partition(b"\r\n\r\n")
        headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n"))
        parts.append((headers, data))
    return parts


def test_multipart_with_files(bodies: GeneratedPackage, upstream: Upstream) -> None:
    schema = bodies.tool("multipart_upload")["inputSchema"]
    assert schema["properties"]["file"]["required"] == ["content"]
    assert schema["properties"]["file"]["properties"]["content"]["contentEncoding"] == "base64"
    png = bytes(range(256))
    args = {
        "title": "Report",
        "file": {
            "content": base64.b64encode(b"%PDF-1\x00\xff").decode(),
            "filename": "r.pdf",
            "contentType": "application/pdf",
        },
        "attachments": [{"content": base64.b64encode(b"one").decode()}, {"content": "dHdv", "filename": "2.txt"}],
        "meta": {"size": 3},
        "thumb": {"content": base64.b64encode(png).decode()},
    }
    r = send(bodies, upstream, "multipart_upload", args)
    assert r.method == "POST" and r.path == "/upload"
    assert _parts(r) == [  # parts in argument-name order
        (
            {
                "Content-Disposition": 'form-data; name="attachments"; filename="attachments"',
                "Content-Type": "application/octet-stream",
            },
            b"one",
        ),
        (
            {
                "Content-Disposition": 'form-data; name="attachments"; filename="2.txt"',
                "Content-Type": "application/octet-stream",
            },
            b"two",
        ),
        (
            {"Content-Disposition": 'form-data; name="file"; filename="r.pdf"', "Content-Type": "application/pdf"},
            b"%PDF-1\x00\xff",
        ),
        ({"Content-Disposition": 'form-data; name="meta"', "Content-Type": "application/json"}, b'{"size":3}'),
        ({"Content-Disposition": 'form-data; name="thumb"; filename="thumb"', "Content-Type": "image/png"}, png),
        ({"Content-Disposition": 'form-data; name="title"'}, b"Report"),
    ]


def test_multipart_bad_base64_is_a_tool_error(bodies: GeneratedPackage, upstream: Upstream) -> None:
    upstream.clear()
    result = bodies.call(upstream.url, "multipart_upload", {"file": {"content": "not base64!"}})
    assert result.is_error and "file" in text_of(result) and "base64" in text_of(result)
    assert not upstream.requests


def test_octet_stream_body(bodies: GeneratedPackage, upstream: Upstream) -> None:
    data = b"\x00\x01\x02\xfe\xff"
    r = send(bodies, upstream, "upload_octets", {"body": base64.b64encode(data).decode()})
    assert (r.method, r.content_type, r.body) == ("PUT", "application/octet-stream", data)


def test_text_body_and_text_response(bodies: GeneratedPackage, upstream: Upstream) -> None:
    upstream.clear()
    upstream.respond(200, "echo: héllo", content_type="text/plain; charset=utf-8")
    result = bodies.call(upstream.url, "send_text", {"body": "héllo\nworld"})
    assert not result.is_error, text_of(result)
    r = upstream.last()
    assert (r.content_type, r.body, r.header("Accept")) == ("text/plain", "héllo\nworld".encode(), "text/plain")
    assert "echo: héllo" in text_of(result)


# -- Swagger 2.0 ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def swagger2(tmp_path_factory: pytest.TempPathFactory) -> GeneratedPackage:
    return _package(tmp_path_factory, "swagger2")


def test_swagger2_base_url_from_host_base_path_and_schemes(swagger2: GeneratedPackage) -> None:
    assert swagger2.settings.DEFAULT_BASE_URL == "https://api.example.invalid/v2"


def test_swagger2_collection_formats(swagger2: GeneratedPackage, upstream: Upstream) -> None:
    upstream.clear()
    upstream.respond(200, b'[{"name": "Rex"}]')
    ab = ["a", "b"]
    args = {"limit": 5, "csv": ab, "ssv": ab, "tsv": ab, "pipes": ab, "multi": [1, 2], "X-Ids": [7, 8]}
    result = swagger2.call(upstream.url + "/v2", "list_pets", args, CREDENTIALS)
    assert not result.is_error, text_of(result)
    r = upstream.last()
    assert (r.method, r.path) == ("GET", "/v2/pets")
    assert r.query == "limit=5&csv=a,b&ssv=a%20b&tsv=a%09b&pipes=a|b&multi=1&multi=2"
    assert r.header("X-Ids") == "7,8"
    assert r.header("Accept") == "application/json"
    assert json.loads(text_of(result)) == [{"name": "Rex"}]
    assert result.structured_content == {"result": [{"name": "Rex"}]}


def test_swagger2_body_parameter(swagger2: GeneratedPackage, upstream: Upstream) -> None:
    schema = swagger2.tool("create_pet")["inputSchema"]
    assert "id" not in schema["properties"]  # readOnly
    assert schema["properties"]["tag"]["type"] == ["string", "null"]  # x-nullable
    r = send(swagger2, upstream, "create_pet", {"name": "Rex", "kind": "dog"})
    assert (r.method, r.path, r.content_type, r.body) == (
        "POST",
        "/pets",
        "application/json",
        b'{"kind":"dog","name":"Rex"}',
    )


def test_swagger2_form_data_urlencoded(swagger2: GeneratedPackage, upstream: Upstream) -> None:
    r = send(swagger2, upstream, "rename_pet", {"petId": 3, "name": "Max Power", "tags": ["a", "b"]})
    assert (r.method, r.path) == ("PUT", "/pets/3")
    assert (r.content_type, r.body) == ("application/x-www-form-urlencoded", b"name=Max%20Power&tags=a&tags=b")


def test_swagger2_form_data_file(swagger2: GeneratedPackage, upstream: Upstream) -> None:
    args = {
        "petId": 3,
        "caption": "me",
        "photo": {"content": base64.b64encode(b"\x89PNG").decode(), "filename": "p.png"},
        "labels": ["a b", "c"],
    }
    r = send(swagger2, upstream, "upload_photo", args)
    assert r.path == "/pets/3/photo"
    assert _parts(r) == [  # parts in argument-name order
        ({"Content-Disposition": 'form-data; name="caption"'}, b"me"),
        ({"Content-Disposition": 'form-data; name="labels"'}, b"a b|c"),  # collectionFormat: pipes, one part
        (
            {
                "Content-Disposition": 'form-data; name="photo"; filename="p.png"',
                "Content-Type": "application/octet-stream",
            },
            b"\x89PNG",
        ),
    ]  # parts in property-name order


# -- path keys with a fragment or a query; single-valued Accept / Content-Type parameters --------------------
@pytest.fixture(scope="module")
def pathkeys(tmp_path_factory: pytest.TempPathFactory) -> GeneratedPackage:
    return _package(tmp_path_factory, "pathkeys")


def test_fragment_fixes_a_declared_header(pathkeys: GeneratedPackage, upstream: Upstream) -> None:
    names = sorted(t["name"] for t in pathkeys.tools)
    assert "post_x_amz_target_store_2024_get_item" in names and "post_x_amz_target_store_2024_put_item" in names
    tool = pathkeys.tool("post_x_amz_target_store_2024_get_item")
    assert arguments_of(tool) == ["Key"]  # the key fixes X-Amz-Target: not an argument
    r = send(pathkeys, upstream, "post_x_amz_target_store_2024_get_item", {"Key": "k1"})
    assert (r.method, r.target) == ("POST", "/")  # the fragment itself is never sent
    assert r.header("X-Amz-Target") == "Store_2024.GetItem"
    assert (r.content_type, r.body) == ("application/x-amz-json-1.0", b'{"Key":"k1"}')
    r = send(pathkeys, upstream, "post_x_amz_target_store_2024_put_item", {"Key": "k2"})
    assert (r.target, r.header("X-Amz-Target")) == ("/", "Store_2024.PutItem")


def test_fragment_fixes_a_declared_query_parameter(pathkeys: GeneratedPackage, upstream: Upstream) -> None:
    # required parameters that allow one value (enum, const) are sent, not asked for; an optional one stays
    assert sorted(arguments_of(pathkeys.tool("list_users"))) == ["Format", "Marker"]
    r = send(pathkeys, upstream, "list_users", {"Marker": "m 1"})
    assert (r.method, r.path, r.query) == ("GET", "/", "Action=ListUsers&Version=2010-05-08&MaxItems=100&Marker=m%201")
    assert r.header("Action") is None


def test_fragment_naming_no_parameter_is_not_sent(pathkeys: GeneratedPackage, upstream: Upstream) -> None:
    r = send(pathkeys, upstream, "analyze_stream", {"body": "AAE="})
    assert (r.method, r.target, r.body) == ("POST", "/analyze", b"\x00\x01")
    assert r.header("overload") is None


def test_query_in_the_path_key_is_sent_first(pathkeys: GeneratedPackage, upstream: Upstream) -> None:
    assert arguments_of(pathkeys.tool("get_photos")) == ["photo_id"]  # `method` is fixed
    r = send(pathkeys, upstream, "get_photos", {"photo_id": "42"})
    assert (r.path, r.query) == ("/rest", "method=photos.get&format=json&photo_id=42")
    r = send(pathkeys, upstream, "alerts", {"lat": 1.5, "lon": -2, "key": "a&b"})
    assert (r.path, r.query) == ("/alerts", "lat=1.5&lon=-2&key=a%26b")
    # `?query={query}` with `query` declared as a query parameter: one argument, sent once
    assert arguments_of(pathkeys.tool("search")) == ["query"]
    r = send(pathkeys, upstream, "search", {"query": "a b"})
    assert (r.path, r.query) == ("/search", "sort=new&query=a%20b")


def test_single_valued_accept_and_content_type_are_fixed_headers(
    pathkeys: GeneratedPackage, upstream: Upstream
) -> None:
    assert arguments_of(pathkeys.tool("get_order")) == ["id"]
    r = send(pathkeys, upstream, "get_order", {"id": "o1"})
    assert (r.method, r.target, r.body) == ("GET", "/orders/o1", b"")
    assert r.header("Accept") == "application/json"  # the parameter's default: the responses name no media type
    assert r.header("Content-Type") == "application/json"  # its one enum value (no body: harmless)
    assert r.header("Authorization") is None  # never a parameter
    # the responses' media type wins over the parameter's example; a Content-Type with no value is not sent
    r = send(pathkeys, upstream, "delete_order", {"id": "o2"})
    assert (r.header("Accept"), r.header("Content-Type")) == ("application/json", None)
