"""The write stage: atomic files, our folders only, stale files removed, --check compares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codegen.emit import files as files_module
from codegen.emit.write import MANIFEST, check, with_manifest, write


def tree(version: str = "1", **files: str) -> dict[str, str]:
    return with_manifest(files, version)


def test_writes_files_and_manifest(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    assert write(out, tree(**{"a.txt": "A\n", "src/b.py": "B\n"}), force=False) == []
    assert (out / "a.txt").read_text() == "A\n" and (out / "src/b.py").read_text() == "B\n"
    assert '"src/b.py"' in (out / MANIFEST).read_text()
    assert not list(out.rglob("*.tmp"))


def test_refuses_a_foreign_folder_without_force(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    out.mkdir()
    (out / "mine.txt").write_text("user data")
    problems = write(out, tree(**{"a.txt": "A"}), force=False)
    assert len(problems) == 1 and "--force" in problems[0].message
    assert not (out / "a.txt").exists()
    assert write(out, tree(**{"a.txt": "A"}), force=True) == []
    assert (out / "mine.txt").read_text() == "user data"


def test_regeneration_removes_stale_files_and_keeps_user_files(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    write(out, tree(**{"a.txt": "A", "old/gone.txt": "G"}), force=False)
    (out / "notes.md").write_text("mine")
    assert write(out, tree(**{"a.txt": "A2"}), force=False) == []
    assert not (out / "old").exists()
    assert (out / "a.txt").read_text() == "A2" and (out / "notes.md").read_text() == "mine"


def test_unchanged_files_are_not_rewritten(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    write(out, tree(**{"a.txt": "A"}), force=False)
    before = (out / "a.txt").stat().st_mtime_ns
    write(out, tree(**{"a.txt": "A"}), force=False)
    assert (out / "a.txt").stat().st_mtime_ns == before


def test_check_reports_added_removed_and_changed(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    write(out, tree(**{"a.txt": "one\ntwo\n", "b.txt": "B"}), force=False)
    assert not check(out, tree(**{"a.txt": "one\ntwo\n", "b.txt": "B"})).stale
    report = check(out, tree(**{"a.txt": "one\nthree\n", "c.txt": "C"}))
    assert report.stale
    assert report.added == ("c.txt",) and report.removed == ("b.txt",)
    assert report.changed == (MANIFEST, "a.txt")
    summary = report.summary()
    assert "-two" in summary and "+three" in summary and "1 added, 1 removed, 2 changed" in summary
    assert check(tmp_path / "missing", tree(**{"a.txt": "A"})).added == (MANIFEST, "a.txt")


def test_files_are_written_and_compared_a_piece_at_a_time(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(files_module, "PIECE", 7)  # pieces that end inside multi-byte characters' text
    text = "ab€ç\n" * 10 + "😀 end"
    out = tmp_path / "pkg"
    assert write(out, tree(**{"a.txt": text}), force=False) == []
    assert (out / "a.txt").read_bytes() == text.encode("utf-8")
    before = (out / "a.txt").stat().st_mtime_ns
    assert write(out, tree(**{"a.txt": text}), force=False) == []
    assert (out / "a.txt").stat().st_mtime_ns == before  # the same bytes: not rewritten
    for changed in (text + "!", text[:-1], "x" + text[1:]):
        assert write(out, tree(**{"a.txt": changed}), force=False) == []
        assert (out / "a.txt").read_bytes() == changed.encode("utf-8")
    for data in (text.encode("utf-8"), (text + "!").encode("utf-8")):  # a data file given as its UTF-8 bytes
        assert write(out, {"a.txt": data}, force=True) == []
        assert (out / "a.txt").read_bytes() == data
        written = (out / "a.txt").stat().st_mtime_ns
        assert write(out, {"a.txt": data}, force=True) == []
        assert (out / "a.txt").stat().st_mtime_ns == written  # the same bytes: not rewritten
        assert not check(out, {"a.txt": data}).changed and check(out, {"a.txt": data + b"x"}).changed
