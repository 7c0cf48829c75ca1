"""Security declared without editing the spec: x-mcp-security-schemes / x-mcp-security in the spec, the
config file's security-schemes / security / overrides.<op>.security; the variables the server reads (printed by
the generator, listed in --help, the README and .env.example), never colliding with the server's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen.configfile import build_config
from codegen.pipeline import analyze, generate
from conftest import mini_spec, write_spec
from test_cli import run

GITHUB = Path.home() / ".cache/mcp-codegen-corpus/node_modules/@octokit/openapi/generated/api.github.com.json"


def op(operation_id: str, **extra: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "responses": {"200": {"description": "ok"}}, **extra}


def security_of(spec: Path, cwd: Path, flags: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[str]]:
    config, problems = build_config(str(spec), flags or {}, cwd=cwd)
    assert config is not None, problems
    api, tools, found = analyze(config)
    assert api is not None
    return {t.name: [dict((k, list(v)) for k, v in alt) for alt in t.plan.security] for t in tools}, [
        str(p) for p in found
    ]


def test_spec_extensions_declare_schemes_and_requirements(tmp_path: Path) -> None:
    spec = mini_spec(
        {
            "/a": {"get": op("getA")},
            "/b": {"get": op("getB", **{"x-mcp-security": [{"key": []}]})},
            "/c": {"get": op("getC", security=[])},  # the spec's own per-operation security still wins over root
        },
        **{
            "x-mcp-security-schemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
                "broken": {"type": "apiKey"},
            },
            "x-mcp-security": [{"bearer": []}],
        },
    )
    security, problems = security_of(write_spec(tmp_path, spec), tmp_path)
    assert security == {"get_a": [{"bearer": []}], "get_b": [{"key": []}], "get_c": []}
    assert any("#/x-mcp-security-schemes/broken/in" in p and "ignored" in p for p in problems), problems
    assert not any("unknown extension" in p for p in problems), problems


def test_config_file_overrides_spec_and_extensions(tmp_path: Path) -> None:
    spec = mini_spec(
        {"/a": {"get": op("getA")}, "/b": {"get": op("getB", **{"x-mcp-security": [{"bearer": []}]})}},
        components={"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        security=[{"bearer": []}],
    )
    (tmp_path / "mcp-codegen.toml").write_text(
        """
security = [{ token = ["read"] }]

[security-schemes.token]
type = "oauth2"
flows = { clientCredentials = { tokenUrl = "https://auth.example.com/token", scopes = { read = "r" } } }

[overrides.getB]
security = [{ bearer = [] }, { token = [] }]
""",
        encoding="utf-8",
    )
    security, problems = security_of(write_spec(tmp_path, spec), tmp_path)
    assert security == {"get_a": [{"token": ["read"]}], "get_b": [{"bearer": []}, {"token": []}]}, problems


def test_config_security_shapes_are_checked_with_pointers(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, mini_spec({"/a": {"get": op("getA")}}))
    (tmp_path / "mcp-codegen.toml").write_text(
        'security = [{ bearer = "x" }]\n[security-schemes.bearer]\ntype = "http"\n', encoding="utf-8"
    )
    config, problems = build_config(str(spec), {}, cwd=tmp_path)
    assert config is None
    text = "\n".join(str(p) for p in problems)
    assert "#/security/0/bearer" in text and "scopes must be a list" in text
    assert "#/security-schemes/bearer/scheme" in text and "needs 'scheme'" in text


def test_variables_never_collide_with_the_servers_own(tmp_path: Path) -> None:
    spec = mini_spec(
        {"/a": {"get": op("getA", security=[{"oauth": [], "mcp_token": []}])}},
        components={
            "securitySchemes": {
                "oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "/token", "scopes": {}}}},
                "mcp_token": {"type": "apiKey", "in": "query", "name": "k"},
            }
        },
    )
    config, _ = build_config(
        str(write_spec(tmp_path, spec)), {"output": tmp_path / "out", "name": "demo"}, cwd=tmp_path
    )
    assert config is not None
    result = generate(config)
    settings = result.files["src/demo/settings.py"]
    assert '"DEMO_SCHEME_OAUTH_CLIENT_ID"' in settings and '"DEMO_OAUTH_CLIENT_ID"' not in settings
    assert '"DEMO_SCHEME_MCP_TOKEN"' in settings
    env_example = result.files[".env.example"]
    for name in ("DEMO_SCHEME_OAUTH_CLIENT_ID", "DEMO_SCHEME_MCP_TOKEN", "DEMO_MCP_TOKEN", "DEMO_AUTH_ISSUER"):
        assert f"# {name}=" in env_example and name in result.files["README.md"]


def test_generator_prints_the_variables_and_help_lists_them(tmp_path: Path) -> None:
    spec = mini_spec(
        {"/a": {"get": op("getA")}},
        servers=[{"url": "http://127.0.0.1:9"}],
        **{
            "x-mcp-security-schemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "x-mcp-security": [{"bearer": []}],
        },
    )
    out = tmp_path / "demo"
    result = run(write_spec(tmp_path, spec), "-o", out)
    assert result.returncode == 0, result.stderr
    assert "The server reads these environment variables" in result.stderr
    assert "DEMO_BEARER" in result.stderr and "AUTH_ISSUER" in result.stderr
    env = {**os.environ, "PYTHONPATH": str(out / "src")}
    shown = subprocess.run(
        [sys.executable, "-m", "demo", "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    for text in ("DEMO_BEARER", "--auth-issuer", "--upstream-auth", "DEMO_AUTH_ISSUER", "DEMO_OAUTH_CLIENT_ID"):
        assert text in shown.stdout, text


@pytest.mark.slow
@pytest.mark.skipif(not GITHUB.is_file(), reason="GitHub's description is not in the corpus cache")
def test_github_bearer_on_every_operation(tmp_path: Path) -> None:
    """GitHub's description declares no security: two config keys give every operation a bearer token."""
    (tmp_path / "mcp-codegen.toml").write_text(
        'security = [{ github = [] }]\n[security-schemes.github]\ntype = "http"\nscheme = "bearer"\n',
        encoding="utf-8",
    )
    spec = tmp_path / "api.github.com.json"
    spec.write_bytes(GITHUB.read_bytes())
    config, problems = build_config(str(spec), {"name": "github", "validate": False}, cwd=tmp_path)
    assert config is not None, problems
    api, tools, _ = analyze(config)
    assert len(tools) > 1000
    assert all(tool.plan.security == ((("github", ()),),) for tool in tools)
    assert json.dumps([s.key for s in api.security_schemes if s.key == "github"]) == '["github"]'
