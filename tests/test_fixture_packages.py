"""The packages generated from the dialect fixtures are black-formatted, `mypy --strict` clean, and their own
generated tests pass (every tool sends its operation, errors are tool errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, generate_into
from support.package_checks import assert_package_is_clean

pytestmark = pytest.mark.slow
SPECS = ["styles.yaml", "bodies.yaml", "swagger2.yaml", "openapi31.yaml", "refs/main.yaml", "pathkeys.yaml"]


@pytest.mark.parametrize("spec", SPECS)
def test_generated_package_is_clean_and_its_tests_pass(spec: str, tmp_path: Path) -> None:
    out = tmp_path / spec.replace("/", "_").removesuffix(".yaml").replace(".", "_")
    generate_into(FIXTURES / spec, out)
    assert_package_is_clean(out)
