"""A spec fetched from a URL (a real HTTP server on 127.0.0.1): the manifest records its SHA-256, and --check
says whether the spec at the URL changed or the package was edited."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import PETSTORE, ROOT
from tests.support.recorder import recording_upstream


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_url_spec_hash_and_check_messages(tmp_path: Path) -> None:
    text = PETSTORE.read_text(encoding="utf-8")
    out = tmp_path / "out"
    with recording_upstream() as upstream:
        upstream.respond(200, text, content_type="application/yaml")
        url = f"{upstream.url}/openapi.yaml"
        assert cli("generate", url, "-o", str(out), "-q").returncode == 0
        manifest = json.loads((out / ".mcp-codegen.json").read_text(encoding="utf-8"))
        assert manifest["spec"] == {"url": url, "sha256": hashlib.sha256(text.encode()).hexdigest()}
        assert cli("generate", url, "-o", str(out), "--check").returncode == 0

        spec = yaml.safe_load(text)
        del spec["paths"]["/user/logout"]
        upstream.respond(200, yaml.safe_dump(spec), content_type="application/yaml")
        changed = cli("generate", url, "-o", str(out), "--check")
        assert changed.returncode == 1
        assert f"the spec at {url} changed since the last generation (sha256 " in changed.stderr
        assert "tools: 0 added, 1 removed (logout_user)" in changed.stderr

        upstream.respond(200, text, content_type="application/yaml")
        readme = out / "README.md"
        readme.write_text(readme.read_text(encoding="utf-8") + "\nlocal edit\n", encoding="utf-8")
        edited = cli("generate", url, "-o", str(out), "--check")
        assert edited.returncode == 1
        assert f"the spec at {url} is unchanged since the last generation: the package was edited" in edited.stderr


def test_local_spec_manifest_has_no_hash(tmp_path: Path) -> None:
    assert cli("generate", str(PETSTORE), "-o", str(tmp_path / "out"), "-q").returncode == 0
    assert "spec" not in json.loads((tmp_path / "out" / ".mcp-codegen.json").read_text(encoding="utf-8"))
