"""The petstore's generated tree, byte for byte, against the committed golden copy."""

from __future__ import annotations

from pathlib import Path

from codegen.config import Config
from codegen.pipeline import generate
from codegen.emit.write import check
from conftest import PETSTORE, ROOT

GOLDEN = ROOT / "tests" / "golden" / "petstore"
REFRESH = ".venv/bin/python tools/refresh-golden"


def test_petstore_matches_golden_tree() -> None:
    result = generate(Config(spec=str(PETSTORE), output=Path("petstore")))
    assert result.files
    report = check(GOLDEN, result.files)
    assert (
        not report.stale
    ), f"generated output differs from {GOLDEN.relative_to(ROOT)}; if intended, run: {REFRESH}\n{report.summary()}"
    on_disk = sorted(str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*") if p.is_file())
    assert on_disk == sorted(result.files), f"unexpected files in the golden tree; run: {REFRESH}"
