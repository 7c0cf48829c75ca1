"""The command line, run as users run it: exit codes and messages for good and broken specs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import PETSTORE, mini_spec, write_spec

CLI = [sys.executable, "-m", "codegen"]


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def test_help_explains_the_command() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert "mcp-codegen openapi.yaml -o myserver" in result.stdout
    generate_help = run("generate", "--help").stdout
    for flag in ("--output", "--name", "--base-url", "--check", "--force", "--templates"):
        assert flag in generate_help


def test_generates_the_petstore(tmp_path: Path) -> None:
    result = run(PETSTORE, "-o", tmp_path / "myserver")
    assert result.returncode == 0, result.stderr
    assert "generated 20 tools" in result.stderr and "Traceback" not in result.stderr
    assert (tmp_path / "myserver/src/myserver/server.py").is_file()
    assert 'myserver = "myserver.handshake:main"' in (tmp_path / "myserver/pyproject.toml").read_text()


def test_name_and_default_output_folder(tmp_path: Path) -> None:
    result = run(PETSTORE, "--name", "pet-shop", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "swagger-petstore/src/pet_shop/server.py").is_file()
    assert 'PET_SHOP"' in (tmp_path / "swagger-petstore/src/pet_shop/settings.py").read_text()


def test_missing_file_exits_1_without_traceback(tmp_path: Path) -> None:
    result = run(tmp_path / "nope.yaml", "-o", tmp_path / "out")
    assert result.returncode == 1
    assert "no such file" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_not_openapi_exits_1(tmp_path: Path) -> None:
    spec = tmp_path / "x.yaml"
    spec.write_text("hello: world\n")
    result = run(spec, "-o", tmp_path / "out")
    assert result.returncode == 1 and "not an OpenAPI 3.x document" in result.stderr


def test_usage_error_exits_2(tmp_path: Path) -> None:
    result = run(PETSTORE, "--no-such-flag")
    assert result.returncode == 2 and "No such option" in result.stderr


def test_broken_operation_is_reported_with_pointer_and_skipped(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        mini_spec(
            {
                "/ok": {"get": {"operationId": "ok", "responses": {"200": {"description": "ok"}}}},
                "/broken": {"get": {"parameters": [{"in": "query"}], "responses": {"200": {"description": "ok"}}}},
            }
        ),
    )
    result = run(spec, "-o", tmp_path / "out", "--no-validate")
    assert result.returncode == 0, result.stderr
    assert "error: #/paths/~1broken/get/parameters/0: parameter has no 'name'" in result.stderr
    assert "generated 1 tools, 1 skipped" in result.stderr


def test_nothing_usable_exits_1(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, mini_spec({}))
    result = run(spec, "-o", tmp_path / "out")
    assert result.returncode == 1
    assert "no operations that can be served as tools" in result.stderr and "nothing was generated" in result.stderr


def test_validation_findings_carry_pointers(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path, mini_spec({"/a": {"get": {"operationId": "a", "responses": {"200": {"description": 5}}}}})
    )
    result = run(spec, "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "warning: #/paths/~1a/get/responses/200: invalid spec: {'description': 5}" in result.stderr


def test_refuses_to_overwrite_a_foreign_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = run(PETSTORE, "-o", out)
    assert result.returncode == 1 and "--force" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    assert run(PETSTORE, "-o", out, "--force").returncode == 0


def test_check_mode(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run(PETSTORE, "-o", out, "--check").returncode == 1  # missing
    assert run(PETSTORE, "-o", out).returncode == 0
    fresh = run(PETSTORE, "-o", out, "--check")
    assert fresh.returncode == 0 and "up to date" in fresh.stdout
    (out / "README.md").write_text("edited\n")
    stale = run(PETSTORE, "-o", out, "--check")
    assert (
        stale.returncode == 1
        and "changed: README.md" in stale.stderr
        and "-edited" in stale.stderr
        and "+# out" in stale.stderr
    )
