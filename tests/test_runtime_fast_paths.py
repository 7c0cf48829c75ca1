"""The generated server's start-up and per-call shortcuts keep behaviour: httpx is not imported at
start-up, and JSON bodies decode as httpx would decode them (without its slow header parse)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import mcp.types as types
import pytest

from support.generated import import_from


def run_in_package(package: Path, code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=package,
        env={"PYTHONPATH": str(package / "src")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_start_up_does_not_import_httpx(petstore_package: Path) -> None:
    code = "import json, sys\nimport petstore.server as s\ns.build_server()\nprint(json.dumps('httpx' in sys.modules))"
    assert json.loads(run_in_package(petstore_package, code)) is False


def test_data_files_are_parsed_with_the_collector_paused(petstore_package: Path) -> None:
    """datafiles.read: the collector is off while a file is parsed and as it was after; what was read is in its
    oldest generation (gc.freeze, gc.unfreeze), where the younger collections do not walk it again."""
    code = (
        "import gc, json\n"
        "from importlib.resources import files\n"
        "import petstore.datafiles as d\n"
        "seen, loads = [], json.loads\n"
        "json.loads = lambda text: (seen.append(gc.isenabled()), loads(text))[1]\n"
        "tools = d.read('tools.json')\n"
        "on_after = gc.isenabled()\n"
        "oldest = any(o is tools for o in gc.get_objects(generation=2))\n"
        "gc.disable()\n"
        "d.read('routes.json')\n"
        "off_after = not gc.isenabled()\n"
        "same = tools == loads(files('petstore').joinpath('tools.json').read_text(encoding='utf-8'))\n"
        "print(json.dumps([seen, on_after, oldest, off_after, same]))"
    )
    assert json.loads(run_in_package(petstore_package, code)) == [[False, False], True, True, True, True]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ('{"name": "Zoë"}'.encode(), "application/json"),
        ('{"name": "Zoë"}'.encode(), "application/json; charset=utf-8"),
        ('{"name": "Zoë"}'.encode("latin-1"), "application/json; charset=ISO-8859-1"),
        ('{"name": "Zoë"}'.encode("latin-1"), 'application/problem+json;charset="latin-1"'),
        (b'{"name": "x"}', "application/json; charset=no-such-codec"),
    ],
)
def test_json_text_matches_httpx(petstore_package: Path, body: bytes, content_type: str) -> None:
    to_result = import_from(petstore_package, "petstore.responses").to_result
    Reply = import_from(petstore_package, "petstore.upstream").Reply
    response = httpx.Response(200, headers={"content-type": content_type}, content=body)
    reply = Reply(200, "OK", response.headers, body, len(body), False, "/store/order/1", 0)
    result = to_result("get_order_by_id", reply, structured=True, wrap=False)
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert block.text == response.text
    if "latin" not in content_type.lower() and "8859" not in content_type:
        assert result.structured_content == response.json()


@pytest.mark.parametrize("base_url", ["https://api.example.com", "http://127.0.0.1:4010/v3/", "https://ex.com/a%20b"])
def test_requests_are_built_as_the_httpx_client_builds_them(petstore_package: Path, base_url: str) -> None:
    """Calls go to the transport directly (no client layers): the same method, URL, headers (in order) and body."""
    code = f"""
import json, httpx
from petstore.settings import Settings
from petstore.pool import Backend
from petstore.upstream import Upstream
from petstore.decoding import ACCEPT_ENCODING
upstream = Upstream(Settings.from_env({{"PETSTORE_BASE_URL": {base_url!r}}}), user_agent="ua/1")
client = httpx.AsyncClient(base_url={base_url!r}, trust_env=False, timeout=httpx.Timeout(30, connect=10),
                           headers={{"User-Agent": "ua/1", "Accept-Encoding": ACCEPT_ENCODING}})
out = []
for target, headers, content in [
    ("/pet/1", {{}}, None),
    ("/pet/findByStatus?status=available&tags=a%20b", {{"Accept": "application/json"}}, None),
    ("/store/order?q=a:b/c@d!$&x=[1]&y=caf%C3%A9", {{"accept": "application/xml", "X-Key": "k"}}, b'{{"id":1}}'),
    ("/a#frag", {{}}, None),
    ("//other/p", {{}}, None),
]:
    ours = upstream.request("POST" if content else "GET", target, headers, content)
    theirs = client.build_request("POST" if content else "GET", target, headers=headers, content=content)
    theirs.extensions["timeout"] = httpx.Timeout(upstream.settings.timeout, connect=min(upstream.settings.connect_timeout, upstream.settings.timeout)).as_dict()
    out.append([str(ours.url) == str(theirs.url), ours.url.raw_path == theirs.url.raw_path,
                ours.headers.raw == theirs.headers.raw, ours.content == theirs.content,
                ours.extensions == theirs.extensions])
pool = getattr(upstream.pool(), "_pool", None)
out.append(isinstance(getattr(pool, "_network_backend", None), Backend))
print(json.dumps(out))
"""
    found = json.loads(run_in_package(petstore_package, code))
    assert found[:-1] == [[True] * 5] * 5
    assert found[-1] is True, "the idle-connection check is not wrapped (httpx moved its pool?)"


def test_an_idle_connection_closed_by_the_server_is_seen(petstore_package: Path) -> None:
    """The wrapped liveness check answers as httpcore's: readable once the other end has closed."""
    code = """
import json, socket
from petstore.pool import readable
a, b = socket.socketpair()
before = readable(a)
b.close()
print(json.dumps([before, readable(a)]))
"""
    assert json.loads(run_in_package(petstore_package, code)) == [False, True]
