"""Shared helpers: generate packages from specs with the real pipeline, in temporary folders."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.config import Config
from codegen.pipeline import Result, generate
from codegen.emit.write import write

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
PETSTORE = FIXTURES / "petstore.yaml"
sys.path.append(str(ROOT / "tools"))  # the tools' stdlib modules (named_specs, cut_spec, corpus_run, ...)


def generate_into(spec: Path | str, out: Path, **options: Any) -> Result:
    """Run the whole pipeline and write the package, as the CLI does; fail on write problems."""
    result = generate(Config(spec=str(spec), output=out, **options))
    assert result.files, [str(p) for p in result.problems]
    assert write(out, result.files, force=False) == []
    return result


def write_spec(tmp_path: Path, spec: dict[str, Any], name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    text = json.dumps(spec) if name.endswith(".json") else yaml.safe_dump(spec, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def mini_spec(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A minimal OpenAPI 3.0 document around `paths`."""
    return {"openapi": "3.0.3", "info": {"title": "Mini", "version": "1.0"}, "paths": paths, **extra}


@pytest.fixture(scope="session")
def petstore_package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The petstore fixture generated once per test session (folder `petstore`)."""
    out = tmp_path_factory.mktemp("generated") / "petstore"
    generate_into(PETSTORE, out)
    yield out


collect_ignore_glob = ["golden/*"]  # generated packages kept for comparison, with tests of their own


@pytest.fixture
def anyio_backend() -> str:
    """The async tests (pytest's anyio plugin) run on asyncio, as the generated servers do."""
    return "asyncio"


@pytest.fixture(scope="module")
def prism_url() -> Iterator[str]:
    """Stoplight Prism mocking the petstore fixture on 127.0.0.1 (validates every request it gets)."""
    from support.prism import prism_server

    with prism_server(PETSTORE) as url:
        yield url


# The fixtures of the runtime end-to-end tests (test_runtime_auth.py, test_runtime_resilience.py, test_runtime_e2e.py):
# the package generated from support/runtime.py's spec (one per module), imported, and the real upstream it calls.
from support.runtime import api, package, server_module, upstream  # noqa: E402, F401
