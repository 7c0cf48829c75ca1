"""The command line, run as users run it: exit codes and messages for good and broken specs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_a_problem_met_by_many_operations_is_printed_once_with_its_count(tmp_path: Path) -> None:
    shared = {"name": "$top", "in": "query", "schema": {"type": "integer"}}
    spec = write_spec(
        tmp_path,
        mini_spec(
            {
                f"/{name}": {
                    "get": {
                        "operationId": name,
                        "parameters": [{"$ref": "#/components/parameters/top"}],
                        "responses": {"200": {"description": "ok"}},
                    }
                }
                for name in ("a", "b", "c")
            },
            components={"parameters": {"top": shared}},
        ),
    )
    result = run(spec, "-o", tmp_path / "out", "--no-validate")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("warning: #/components/parameters/top:")]
    assert len(lines) == 1 and lines[0].endswith("sends it as '$top' (×3)"), result.stderr
    assert "(3 warnings, 1 distinct)" in result.stderr


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


def test_option_values_are_read_as_typer_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """options.defer_coercion only puts off building typer's converters: the values are the same, type and all."""
    import typer

    from codegen import options
    from codegen.cli import app

    (tmp_path / "templates").mkdir()
    args = [str(PETSTORE), "-o", "out", "--rule", "exclude tag=a", "--rule", "include op=b", "--templates"]
    args += [str(tmp_path / "templates"), "--timeout", "2", "--surface", "tools", "--no-validate", "--name", "x"]
    args += ["--config", str(tmp_path / "none.toml"), "--output-depth", "1", "--client", "claude", "--force"]

    def params() -> dict[str, object]:
        command = typer.main.get_command(app).commands["generate"]  # type: ignore[attr-defined]
        return dict(command.make_context("generate", list(args)).params)

    deferred = params()
    monkeypatch.setattr(options, "defer_coercion", lambda params: None)
    plain = params()
    assert deferred == plain
    assert {key: type(value) for key, value in deferred.items()} == {key: type(value) for key, value in plain.items()}
    assert isinstance(deferred["output"], Path) and deferred["rules"] == ["exclude tag=a", "include op=b"]


def test_a_typer_whose_internals_differ_keeps_its_own_converters(monkeypatch: pytest.MonkeyPatch) -> None:
    """defer_coercion reads typer internals: where they are not as it expects (another typer), it changes nothing,
    and typer reads the values as it always does."""
    import typer

    from codegen import options
    from codegen.cli import app

    def changed(*args: object) -> object:
        raise TypeError("another RuntimeParam")

    deferring = options._Deferred
    monkeypatch.setattr(options, "_Deferred", changed)
    command = typer.main.get_command(app).commands["generate"]  # type: ignore[attr-defined]
    context = command.make_context("generate", [str(PETSTORE), "-o", "out", "--timeout", "2"])
    assert context.params["output"] == Path("out") and context.params["timeout"] == 2.0
    assert not any(isinstance(getattr(p, "_runtime_param", None), deferring) for p in command.get_params(context))


def test_refused_option_values_give_typers_messages(tmp_path: Path) -> None:
    """A value typer refuses is refused with its message, naming the value as it was given."""
    (tmp_path / "afile").write_text("")
    cases = {
        ("--templates", "./missing/"): "dir './missing/' does not exist",
        ("--templates", "./afile"): "dir './afile' is a file",
        ("--config", "./"): "file './' is a directory",
        ("--timeout", "0"): "greater than or equal to 0.001",
        ("--unmatched", "maybe"): "'maybe' is not one of 'include', 'exclude'",
    }
    for flags, message in cases.items():
        result = run(PETSTORE, "-o", "out", *flags, cwd=tmp_path)
        assert result.returncode == 2 and message in result.stderr, (flags, result.stderr)
        assert not (tmp_path / "out").exists()


def test_the_command_flushes_everything_it_wrote_before_ending() -> None:
    """main() ends the process without the interpreter's teardown: what went to a pipe still arrives whole."""
    from codegen.emit.render import describe_templates

    result = run("templates")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == len(describe_templates())
    assert result.stdout.endswith("\n")


def test_every_template_is_in_the_documented_table() -> None:
    """docs/custom.md's table of templates names each one a user can override (render.FILES, DISCOVERY_FILES)."""
    from codegen.emit.render import DISCOVERY_FILES, FILES

    table = (Path(__file__).resolve().parent.parent / "docs" / "custom.md").read_text(encoding="utf-8")
    assert [template for template, _ in FILES + DISCOVERY_FILES if f"`{template}`" not in table] == []
