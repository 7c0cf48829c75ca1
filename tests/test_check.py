"""--check, as CI runs it: exit 0 when the committed folder is what would be generated, else exit 1 with
a readable summary (added / removed / changed files and a short diff), and never a write."""

from __future__ import annotations

from pathlib import Path

from conftest import mini_spec, write_spec
from test_cli import run


def spec_with(tmp_path: Path, *operation_ids: str) -> Path:
    paths = {
        f"/{op}": {"get": {"operationId": op, "responses": {"200": {"description": "ok"}}}} for op in operation_ids
    }
    return write_spec(tmp_path, mini_spec(paths, servers=[{"url": "https://api.example.com"}]))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_missing_folder_is_stale_and_nothing_is_written(tmp_path: Path) -> None:
    spec = spec_with(tmp_path, "listThings")
    out = tmp_path / "server"
    result = run(spec, "-o", out, "--check")
    assert result.returncode == 1
    assert "added:   src/server/tools.json" in result.stderr
    assert "added:   Dockerfile" in result.stderr
    assert "is stale: regenerate it" in result.stderr
    assert not out.exists()
    # every file a real generation writes is listed as added
    assert run(spec, "-o", out, "-q").returncode == 0
    written = sorted(snapshot(out))
    assert f"stale: {len(written)} added, 0 removed, 0 changed" in result.stderr
    assert [line.split()[-1] for line in result.stderr.splitlines() if line.startswith("  added:")] == written


def test_fresh_folder_passes(tmp_path: Path) -> None:
    spec = spec_with(tmp_path, "listThings")
    out = tmp_path / "server"
    assert run(spec, "-o", out, "-q").returncode == 0
    result = run(spec, "-o", out, "--check")
    assert result.returncode == 0, result.stderr
    assert f"{out}: up to date" in result.stdout


def test_spec_change_shows_changed_files_with_a_diff_and_writes_nothing(tmp_path: Path) -> None:
    spec = spec_with(tmp_path, "listThings")
    out = tmp_path / "server"
    assert run(spec, "-o", out, "-q").returncode == 0
    before = snapshot(out)
    spec_with(tmp_path, "listThings", "getStatus")  # the spec gained an operation
    result = run(spec, "-o", out, "--check")
    assert result.returncode == 1
    assert "stale: 0 added, 0 removed, " in result.stderr
    for changed in ("README.md", "src/server/tools.json", "src/server/routes.json"):
        assert f"changed: {changed}" in result.stderr
    assert "--- a/README.md" in result.stderr and "+++ b/README.md" in result.stderr
    assert "+| `get_status` | `GET /getStatus` |" in result.stderr  # the README's tool table, diffed
    assert "tools: 1 added (get_status), 0 removed, 0 changed" in result.stderr
    assert snapshot(out) == before


def test_renamed_package_shows_removed_files(tmp_path: Path) -> None:
    spec = spec_with(tmp_path, "listThings")
    out = tmp_path / "server"
    assert run(spec, "-o", out, "--name", "old-name", "-q").returncode == 0
    result = run(spec, "-o", out, "--name", "new-name", "--check")
    assert result.returncode == 1
    assert "removed: src/old_name/server.py" in result.stderr
    assert "added:   src/new_name/server.py" in result.stderr
    # the diff is kept short: at most 40 lines per file, then a count of the rest
    for block in result.stderr.split("--- a/")[1:]:
        assert len([line for line in block.splitlines() if line[:1] in "+- @"]) <= 42
