"""`mcp-codegen diff OLD NEW`: the change in the generated tool surface, run as users run it, on the fixture
pairs under fixtures/diff/ and on two real releases of the same API from the corpus."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from codegen.config import Config
from codegen.surface.diff import diff_tools
from codegen.pipeline import analyze
from conftest import FIXTURES, PETSTORE, write_spec
from test_cli import run

BREAKING = FIXTURES / "diff" / "breaking"
COMPATIBLE = FIXTURES / "diff" / "compatible"
CORPUS = Path(os.environ.get("MCP_CODEGEN_CORPUS", Path.home() / ".cache" / "mcp-codegen-corpus"))
GHES = CORPUS / "node_modules" / "@octokit" / "openapi" / "generated"


def diff_json(old: Path, new: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    result = run("diff", old, new, "--format", "json", *flags)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def kinds(report: dict[str, Any]) -> set[tuple[str, str, bool]]:
    return {(c["tool"], c["kind"], c["breaking"]) for c in report["changes"]}


def test_breaking_pair_reports_every_kind_and_exits_1() -> None:
    code, report = diff_json(BREAKING / "old.yaml", BREAKING / "new.yaml")
    assert code == 1
    assert (report["old"], report["new"]) == ({"tools": 6}, {"tools": 5})
    assert kinds(report) == {
        ("ping", "tool-removed", True),
        ("fetch_order", "tool-renamed", True),  # same GET /orders/{id}, new operationId
        ("list_orders", "argument-added", True),  # `region`, required
        ("list_orders", "argument-removed", True),  # `cursor`; and `max_items`, `max_pages` (no pagination left)
        ("list_orders", "argument-retyped", True),  # `limit` integer -> string
        ("list_orders", "enum-values-removed", True),  # `status` lost "cancelled"
        ("list_orders", "output-property-removed", True),  # `next`
        ("fetch_order", "output-property-retyped", True),  # Order.total number -> string; status now nullable
        ("archive_order", "annotation-changed", True),  # destructiveHint false -> true
        ("create_order", "argument-added", False),  # `note`, optional
    }
    assert report["breaking"] == 12
    details = {(c["kind"], c["tool"]): c["details"] for c in report["changes"]}
    assert details[("tool-renamed", "fetch_order")] == {"old": "get_order", "new": "fetch_order"}
    assert details[("enum-values-removed", "list_orders")] == {"argument": "status", "values": ["cancelled"]}
    assert details[("argument-retyped", "list_orders")] == {"argument": "limit", "old": "integer", "new": "string"}
    retyped = [c["details"] for c in report["changes"] if c["kind"] == "output-property-retyped"]
    assert {"property": "status", "old": "string", "new": "null | string"} in retyped  # may now return null
    assert details[("annotation-changed", "archive_order")] == {
        "annotation": "destructiveHint",
        "old": False,
        "new": True,
    }


def test_no_fail_flag_reports_but_exits_0() -> None:
    code, report = diff_json(BREAKING / "old.yaml", BREAKING / "new.yaml", "--no-fail")
    assert code == 0 and report["breaking"] == 12


def test_compatible_pair_exits_0() -> None:
    code, report = diff_json(COMPATIBLE / "old.yaml", COMPATIBLE / "new.yaml")
    assert code == 0
    assert kinds(report) == {
        ("get_note", "tool-added", False),
        ("list_notes", "argument-added", False),
        ("list_notes", "enum-values-added", False),
        ("list_notes", "output-property-added", False),
        ("list_notes", "argument-retyped", False),  # limit: integer -> integer | null accepts more
        ("list_notes", "output-property-retyped", False),  # cursor: null | string -> string returns less
    }


def test_text_and_markdown_formats() -> None:
    text = run("diff", BREAKING / "old.yaml", BREAKING / "new.yaml")  # text is the default
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines[0] == "6 tools -> 5 tools: 12 breaking, 1 other changes"
    assert "BREAKING fetch_order: renamed from get_order (GET /orders/{id})" in lines
    assert 'BREAKING list_orders: argument status no longer accepts "cancelled"' in lines
    assert "change   create_order: optional argument note added" in lines
    markdown = run("diff", BREAKING / "old.yaml", BREAKING / "new.yaml", "--format", "markdown")
    assert markdown.stdout.startswith("## MCP tool surface: 12 breaking, 1 other changes\n")
    assert "### Breaking changes (12)\n\n- `archive_order`: `destructiveHint` changed from `false` to `true` — " in (
        markdown.stdout
    )
    assert "| tools | 6 | 5 | -1 (-16.7%) |\n" in markdown.stdout
    assert "| tools/list tokens (cl100k) | " in markdown.stdout
    assert "### Argument changes (1)\n\n- `create_order`: optional argument `note` added\n" in markdown.stdout


def test_same_spec_has_no_changes() -> None:
    code, report = diff_json(PETSTORE, PETSTORE)
    assert code == 0 and report["changes"] == [] and report["breaking"] == 0
    text = run("diff", PETSTORE, PETSTORE, "--format", "markdown")
    assert "No change to the tools." in text.stdout


def test_rules_apply_to_both_sides() -> None:
    code, report = diff_json(BREAKING / "old.yaml", BREAKING / "new.yaml", "--rule", "exclude path=/orders*")
    assert code == 1 and kinds(report) == {("ping", "tool-removed", True)}


def test_unreadable_spec_exits_2(tmp_path: Path) -> None:
    result = run("diff", tmp_path / "missing.yaml", PETSTORE)
    assert result.returncode == 2
    assert "cannot read the tools of" in result.stderr and "Traceback" not in result.stderr


def test_moved_tool_keeps_its_name_and_is_not_breaking(tmp_path: Path) -> None:
    def spec(path: str) -> dict[str, Any]:
        operation = {"operationId": "getThing", "responses": {"200": {"description": "ok"}}}
        return {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": {path: {"get": operation}}}

    old = write_spec(tmp_path, spec("/things"), "old.yaml")
    new = write_spec(tmp_path, spec("/v2/things"), "new.yaml")
    report = diff_tools(analyze(Config(spec=str(old)))[1], analyze(Config(spec=str(new)))[1])
    assert [(c.tool, c.kind, c.breaking, c.message) for c in report.changes] == [
        ("get_thing", "tool-moved", False, "now calls GET /v2/things (was GET /things)")
    ]


@pytest.mark.slow
def test_real_releases_of_the_github_enterprise_api() -> None:
    old, new = GHES / "ghes-3.18.json", GHES / "ghes-3.19.json"
    assert old.is_file() and new.is_file(), "corpus missing: run tools/fetch-corpus"
    code, report = diff_json(old, new)
    assert report["old"]["tools"] < report["new"]["tools"]
    added = [c for c in report["changes"] if c["kind"] == "tool-added"]
    assert len(added) >= report["new"]["tools"] - report["old"]["tools"]
    assert code == (1 if report["breaking"] else 0)
    # every change names a tool that exists on the side it talks about
    new_names = {c["tool"] for c in report["changes"] if c["kind"] != "tool-removed"}
    assert all(name for name in new_names)


def test_ref_root_lets_both_sides_read_refs_outside_their_folder(tmp_path: Path) -> None:
    """A new release in a subfolder that shares the old one's files: refused by default, read with --ref-root."""
    root = tmp_path / "api"
    shutil.copytree(FIXTURES / "refs", root)
    text = (root / "main.yaml").read_text(encoding="utf-8")
    for name in ("paths.yaml", "parameters.yaml", "schemas/"):
        text = text.replace(f'"{name}', f'"../{name}')
    (root / "v2").mkdir()
    (root / "v2" / "main.yaml").write_text(text, encoding="utf-8")
    refused = run("diff", root / "main.yaml", root / "v2" / "main.yaml")  # the new side loses what its refs hold
    assert refused.returncode == 1 and "operations skipped" in refused.stderr and "Traceback" not in refused.stderr
    code, report = diff_json(root / "main.yaml", root / "v2" / "main.yaml", "--ref-root", str(root))
    assert code == 0 and report["changes"] == []
