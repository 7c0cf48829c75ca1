"""The validator's cached problems: a hit gives what the validator gives, anything it depends on changing misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen.config import Config
from codegen.emit import cache
from codegen.pipeline import generate
from codegen.problems import Level, Problem
from codegen.spec import validate as validation
from codegen.spec.load import open_documents
from conftest import mini_spec

BROKEN = {"/a": {"get": {"operationId": "a", "responses": {"200": {"description": 5}}}}}


@pytest.fixture
def disk_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder, and no entries kept in memory from other tests."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("MCP_CODEGEN_CACHE", str(folder))
    monkeypatch.setattr(cache, "_memory", {})
    return folder


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The dialects the validator really ran for (a hit does not run it)."""
    ran: list[str] = []
    real = validation._run

    def counted(name: str, *args: Any) -> tuple[list[validation.Finding], Problem | None]:
        ran.append(name)
        return real(name, *args)

    monkeypatch.setattr(validation, "_run", counted)
    return ran


def _validate(spec: Path) -> list[Problem]:
    documents, problems = open_documents(str(spec))
    assert documents is not None and documents.store is not None, problems
    documents.store.load_all()
    return validation.validate(documents.root, documents.root_uri, documents.loaded, documents.store.docs)


def _spec(folder: Path, paths: dict[str, Any], **extra: Any) -> Path:
    spec = folder / "api.json"
    spec.write_text(json.dumps(mini_spec(paths, **extra)))
    return spec


def test_a_hit_gives_the_same_problems_without_the_validator(tmp_path: Path, disk_cache: Path, runs: list[str]) -> None:
    spec = _spec(tmp_path, BROKEN)
    first = _validate(spec)
    assert first and runs == ["OpenAPIV30SpecValidator"]
    assert _validate(spec) == first  # from memory
    cache._memory.clear()
    assert _validate(spec) == first  # from disk
    assert runs == ["OpenAPIV30SpecValidator"]
    assert list((disk_cache / validation.KIND).rglob("*"))


def test_the_same_problems_in_the_same_order_as_a_miss(tmp_path: Path, disk_cache: Path) -> None:
    bad = {"name": "q", "in": "query", "schema": {"type": 5}}
    paths = {f"/p{i}": {"get": {"responses": {"200": {"description": i}}, "parameters": [bad]}} for i in range(5)}
    spec = _spec(tmp_path, paths)
    miss = _validate(spec)
    cache._memory.clear()
    hit = _validate(spec)
    assert len(miss) > 5 and hit == miss
    assert [(p.level, p.message, p.pointer, p.source) for p in hit] == [
        (p.level, p.message, p.pointer, p.source) for p in miss
    ]


def test_a_changed_byte_misses(tmp_path: Path, disk_cache: Path, runs: list[str]) -> None:
    spec = _spec(tmp_path, BROKEN)
    _validate(spec)
    spec.write_text(spec.read_text().replace('"Mini"', '"Mimi"'))
    _validate(spec)
    assert len(runs) == 2


def test_a_changed_referenced_document_misses(tmp_path: Path, disk_cache: Path, runs: list[str]) -> None:
    schema = tmp_path / "pet.json"
    schema.write_text('{"type": "object"}')
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "pet.json"}}}}}
    spec = _spec(tmp_path, {"/a": {"get": {"responses": ok}}})
    clean = _validate(spec)
    schema.write_text('{"type": "object", "required": "name"}')
    changed = _validate(spec)
    assert len(runs) == 2 and clean != changed
    cache._memory.clear()
    assert _validate(spec) == changed and len(runs) == 2


def test_another_root_uri_misses(tmp_path: Path, disk_cache: Path, runs: list[str]) -> None:
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        _validate(_spec(tmp_path / name, BROKEN))
    assert len(runs) == 2


def test_turned_off_it_is_bypassed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[str]) -> None:
    monkeypatch.setenv("MCP_CODEGEN_CACHE", "off")
    monkeypatch.setattr(cache, "_memory", {})
    spec = _spec(tmp_path, BROKEN)
    assert _validate(spec) == _validate(spec)
    assert len(runs) == 2 and cache._memory == {}


def test_a_crash_is_not_kept(tmp_path: Path, disk_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def crash(name: str, *args: Any) -> tuple[list[validation.Finding], Problem | None]:
        calls.append(name)
        return [], Problem(Level.WARNING, "openapi-spec-validator failed (X: y); not validated")

    monkeypatch.setattr(validation, "_run", crash)
    spec = _spec(tmp_path, BROKEN)
    assert (
        _validate(spec)
        == _validate(spec)
        == [Problem(Level.WARNING, "openapi-spec-validator failed (X: y); not validated")]
    )
    assert len(calls) == 2 and not (disk_cache / validation.KIND).exists()


def test_an_unreadable_entry_is_a_miss(tmp_path: Path, disk_cache: Path, runs: list[str]) -> None:
    spec = _spec(tmp_path, BROKEN)
    first = _validate(spec)
    for entry in (disk_cache / validation.KIND).rglob("*"):
        if entry.is_file():
            entry.write_text('[["warning", 1]]')
    cache._memory.clear()
    assert _validate(spec) == first and len(runs) == 2


def test_generation_reports_the_same_problems_on_a_hit(tmp_path: Path, disk_cache: Path) -> None:
    spec = _spec(tmp_path, BROKEN)
    first = generate(Config(spec=str(spec), output=tmp_path / "out"))
    cache._memory.clear()
    second = generate(Config(spec=str(spec), output=tmp_path / "out"))
    assert any("invalid spec" in p.message for p in first.problems)
    assert second.problems == first.problems and second.files == first.files


def test_a_warm_run_imports_neither_pydantic_nor_the_validator(tmp_path: Path) -> None:
    """The command line's fixed cost: typer's converters (pydantic) and the validator are not loaded when
    nothing needs them."""
    spec = _spec(tmp_path, BROKEN)
    script = (
        "import sys\n"
        "from codegen.cli import app\n"  # main() ends the process when the command is done
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'openapi_spec_validator')))\n"
    )
    env = {**os.environ, "MCP_CODEGEN_CACHE": str(tmp_path / "cache")}
    args = [sys.executable, "-c", script, str(spec), "-o", str(tmp_path / "out"), "--force", "--surface", "tools"]
    first = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    second = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert "openapi_spec_validator" in first.stdout.splitlines()[-1], first.stderr
    assert second.stdout.splitlines()[-1] == "[]", second.stderr
    assert second.stderr == first.stderr and "invalid spec" in second.stderr
