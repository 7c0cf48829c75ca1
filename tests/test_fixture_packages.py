"""The packages generated from the dialect fixtures are black-formatted, `mypy --strict` clean, and their own
generated tests pass (every tool sends its operation, errors are tool errors)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, generate_into

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
SPECS = ["styles.yaml", "bodies.yaml", "swagger2.yaml", "openapi31.yaml", "refs/main.yaml"]


@pytest.mark.parametrize("spec", SPECS)
def test_generated_package_is_clean_and_its_tests_pass(spec: str, tmp_path: Path) -> None:
    out = tmp_path / spec.replace("/", "_").removesuffix(".yaml").replace(".", "_")
    generate_into(FIXTURES / spec, out)
    black = subprocess.run(
        [str(BIN / "black"), "--check", "-q", "src", "tests"], cwd=out, capture_output=True, text=True
    )
    assert black.returncode == 0, black.stderr
    mypy = subprocess.run(
        [str(BIN / "mypy"), "--strict", "--no-incremental", "src"], cwd=out, capture_output=True, text=True, timeout=300
    )
    assert mypy.returncode == 0, mypy.stdout
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=out,
        env={**os.environ, "PYTHONPATH": str(out / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert tests.returncode == 0, tests.stdout[-3000:]
