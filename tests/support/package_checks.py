"""Checks every generated package must pass: black-formatted, `mypy --strict` clean (code and tests), own tests green."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from corpus_own_tests import own_pytest  # tools/corpus_own_tests.py (tests/conftest.py puts tools/ on sys.path)

BIN = Path(sys.executable).parent
# one mypy cache for the test run: the SDK, httpx and pydantic are analysed once, not once per package (mypy
# checks each cached module against its source's hash, so packages that reuse a module name are re-analysed)
MYPY_CACHE = Path(tempfile.mkdtemp(prefix="mcp-codegen-mypy-"))
atexit.register(shutil.rmtree, MYPY_CACHE, ignore_errors=True)


def assert_package_is_clean(package: Path) -> None:
    """Run black --check, mypy --strict and the package's own pytest suite in `package` (a generated folder)."""
    black = subprocess.run(
        [str(BIN / "black"), "--check", "-q", "src", "tests"], cwd=package, capture_output=True, text=True
    )
    assert black.returncode == 0, black.stderr
    mypy = subprocess.run(
        [str(BIN / "mypy"), "--strict", "--cache-dir", str(MYPY_CACHE), "src", "tests"],
        cwd=package,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert mypy.returncode == 0, mypy.stdout
    tests = own_pytest(package, timeout=600)
    assert tests.returncode == 0 and " passed" in tests.stdout, tests.stdout[-3000:]


def install_into_new_venv(venv: Path, target: str, cwd: Path | None = None) -> Path:
    """`pip install TARGET` into a new virtual environment at `venv`; returns its bin folder."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [str(venv / "bin/pip"), "install", "--disable-pip-version-check", "-q", target],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    return venv / "bin"
