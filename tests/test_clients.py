"""Client setup snippets (Claude Desktop, Claude Code, VS Code, Cursor): printed after generating and written
into the generated README, the same text in both places; the Dockerfile serves the HTTP transport."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from conftest import PETSTORE
from test_cli import run

FENCE = re.compile(r"\*\*(?P<client>[^*]+)\*\*: (?P<where>[^\n]+)\n\n```(?P<lang>\w+)\n(?P<text>.*?)\n```", re.S)


def readme_snippets(readme: str) -> dict[str, tuple[str, str]]:
    return {m["client"]: (m["lang"], m["text"]) for m in FENCE.finditer(readme)}


def test_snippets_are_printed_and_written_into_the_readme(tmp_path: Path) -> None:
    out = tmp_path / "pets"
    result = run(PETSTORE, "-o", out, "--name", "pet-mcp", "--base-url", "https://petstore.example.com/v2")
    assert result.returncode == 0, result.stderr
    snippets = readme_snippets((out / "README.md").read_text())
    assert sorted(snippets) == ["Claude Code", "Claude Desktop", "Cursor", "VS Code"]
    for client, (_, text) in snippets.items():
        assert text in result.stdout, client  # the same text on stdout (the progress goes to stderr)
    env = {"PET_MCP_BASE_URL": "https://petstore.example.com/v2"}
    stdio = {"command": "pet-mcp", "args": [], "env": env}
    assert json.loads(snippets["Claude Desktop"][1]) == {"mcpServers": {"pet-mcp": stdio}}
    assert json.loads(snippets["Cursor"][1]) == {"mcpServers": {"pet-mcp": stdio}}
    assert json.loads(snippets["VS Code"][1]) == {"servers": {"pet-mcp": {"type": "stdio", **stdio}}}
    add_stdio, _, add_http = snippets["Claude Code"][1].splitlines()
    assert shlex.split(add_stdio) == [
        "claude",
        "mcp",
        "add",
        "pet-mcp",
        "-e",
        "PET_MCP_BASE_URL=https://petstore.example.com/v2",
        "--",
        "pet-mcp",
    ]
    assert shlex.split(add_http) == [
        "claude",
        "mcp",
        "add",
        "--transport",
        "http",
        "pet-mcp",
        "http://127.0.0.1:8000/mcp",
    ]


def test_quiet_prints_no_snippets(tmp_path: Path) -> None:
    result = run(PETSTORE, "-o", tmp_path / "pets", "-q")
    assert result.returncode == 0 and result.stdout == ""


def test_spec_without_servers_gets_a_placeholder_url(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    document: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "No Servers", "version": "1"},
        "paths": {"/x": {"get": {"operationId": "getX", "responses": {"200": {"description": "ok"}}}}},
    }
    spec.write_text(json.dumps(document))
    result = run(spec, "-o", tmp_path / "ns")
    assert result.returncode == 0, result.stderr
    desktop = json.loads(readme_snippets((tmp_path / "ns" / "README.md").read_text())["Claude Desktop"][1])
    assert desktop["mcpServers"]["ns"]["env"] == {"NS_BASE_URL": "https://api.example.com"}


def test_dockerfile_serves_http_on_all_interfaces_inside_the_container(petstore_package: Path) -> None:
    dockerfile = (petstore_package / "Dockerfile").read_text()
    cmd = json.loads(dockerfile.split("\nCMD ", 1)[1].splitlines()[0])
    assert cmd == ["petstore", "--transport", "http", "--host", "0.0.0.0", "--port", "8000"]
    assert "\nEXPOSE 8000\n" in dockerfile and "\nUSER mcp\n" in dockerfile
    # what the Dockerfile copies exists in the generated tree, and .dockerignore does not drop it
    copied = [word for line in dockerfile.splitlines() if line.startswith("COPY ") for word in line.split()[1:-1]]
    assert copied == ["pyproject.toml", "README.md", "src"]
    assert all((petstore_package / path).exists() for path in copied)
    ignored = [line for line in (petstore_package / ".dockerignore").read_text().splitlines() if line[:1] not in "#"]
    assert not set(copied) & set(ignored)
