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
    sys.path.insert(0, str(petstore_package / "src"))
    try:
        from petstore.responses import to_result
        from petstore.upstream import Reply
    finally:
        sys.path.remove(str(petstore_package / "src"))
    response = httpx.Response(200, headers={"content-type": content_type}, content=body)
    reply = Reply(200, "OK", response.headers, body, len(body), False, "/store/order/1", 0)
    result = to_result("get_order_by_id", reply, structured=True, wrap=False)
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert block.text == response.text
    if "latin" not in content_type.lower() and "8859" not in content_type:
        assert result.structured_content == response.json()
