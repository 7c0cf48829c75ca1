"""The Action, the workflows and the hooks, checked by the tools their ecosystems use: action.yml against GitHub's
metadata schema (check-jsonschema), every workflow in the repository and in docs/ci.md with actionlint, the hooks
manifest with pre-commit, and both hooks run by `pre-commit run` from a temporary project's .pre-commit-config.yaml."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.ci.inputs import read_inputs
from codegen.ci.servers import servers
from codegen.spec.overlay import check_overlay

from conftest import PETSTORE, ROOT, generate_into

BIN = Path(sys.executable).parent
DOCS = ROOT / "docs" / "ci.md"


def tool(name: str) -> str:
    path = BIN / name if (BIN / name).exists() else shutil.which(name)
    assert path, f"{name} is not installed (it is in the dev extra: pip install -e '.[dev]')"
    return str(path)


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)


def test_action_metadata_is_valid() -> None:
    done = subprocess.run(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(ROOT / "action.yml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflows_pass_actionlint(tmp_path: Path) -> None:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    found = [path.read_text(encoding="utf-8") for path in sorted((ROOT / ".github" / "workflows").glob("*.yml"))]
    found += [block for block in blocks("yaml") if "jobs" in (yaml.safe_load(block) or {})]
    assert len(found) >= 5  # the repository's own, and docs/ci.md's: check on PR, nightly, monorepo (2)
    files = []
    for i, text in enumerate(found):
        files.append(workflows / f"w{i}.yml")
        files[-1].write_text(text, encoding="utf-8")
    done = subprocess.run(
        [tool("actionlint"), "-no-color", *map(str, files)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_action_inputs_reach_the_command() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "ci")
    ours = set(action["inputs"]) - {"github-token", "python-version"}
    env = {f"INPUT_{name.upper().replace('-', '_')}" for name in ours}
    assert env <= set(step["env"]), env - set(step["env"])
    values = {f"INPUT_{name.upper().replace('-', '_')}": action["inputs"][name]["default"] or "x" for name in ours}
    inputs, problems = read_inputs({}, {**values, "INPUT_COMMENT": "false", "INPUT_ARGS": "--compact"})
    assert inputs is not None and not problems and inputs.mode == "check" and inputs.args == ("--compact",)
    assert set(action["outputs"]) == {"stale", "breaking", "tools-added", "tools-removed", "tools-changed", "report"}


def test_hooks_manifest_is_valid() -> None:
    done = subprocess.run(
        [tool("pre-commit"), "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_docs_examples_are_valid(tmp_path: Path) -> None:
    """docs/ci.md's [[servers]] config reads as three servers and its overlay example is a valid overlay."""
    toml = next(b for b in blocks("toml") if "[[servers]]" in b)
    (tmp_path / "mcp-codegen.toml").write_text(toml, encoding="utf-8")
    configs, problems = servers(None, {}, (), None, tmp_path)
    assert not problems and [c.output for c in configs] == [
        tmp_path / "mcp/billing",
        tmp_path / "mcp/users",
        tmp_path / "mcp/partner",
    ]
    assert configs[0].compact and configs[0].overlays == (str(tmp_path / "services/billing/curation.overlay.yaml"),)
    assert not configs[1].deprecated and configs[2].spec.startswith("https://")
    tomllib.loads(toml)
    document: Any = yaml.safe_load(next(b for b in blocks("yaml") if b.startswith("overlay:")))
    overlay, problems = check_overlay(document, "docs/ci.md")
    assert overlay is not None and not problems and len(overlay.actions) == 5


def hook_repo(tmp_path: Path) -> Path:
    """This repository's files as they are now (committed or not), committed once into a scratch repository (a
    hook repository pre-commit can clone at a revision)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    repo = tmp_path / "hook-repo"
    for name in listed:
        source = ROOT / name
        if source.is_file() and not name.startswith(("tests/", "bench/")):
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


@pytest.mark.slow
def test_pre_commit_hooks(tmp_path: Path) -> None:
    """The check hook fails on a stale package and passes after the generate hook: this repository as a hook
    repository in a project's .pre-commit-config.yaml (as docs/ci.md shows), installed once into the store."""
    repo = hook_repo(tmp_path)
    revision = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
    project = tmp_path / "project"
    (project / "api").mkdir(parents=True)
    spec = yaml.safe_load(PETSTORE.read_text(encoding="utf-8"))
    (project / "api" / "openapi.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0"\n\n[tool.mcp-codegen]\nspec = "api/openapi.yaml"\noutput = "mcp"\n',
        encoding="utf-8",
    )
    hooks = [{"id": "mcp-codegen-check"}, {"id": "mcp-codegen-generate"}]
    config = {"repos": [{"repo": str(repo), "rev": revision.stdout.strip(), "hooks": hooks}]}
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    env = {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, timeout=900)

    generate_into(project / "api" / "openapi.yaml", project / "mcp")  # the package as committed
    run("git", "init", "-q")
    run("git", "config", "user.email", "ci@example.invalid")
    run("git", "config", "user.name", "ci")
    del spec["paths"]["/pet/{petId}"]["delete"]  # the spec moves on; the committed package does not
    (project / "api" / "openapi.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    run("git", "add", "-A")

    both = run(tool("pre-commit"), "run", "--all-files")  # installs the hook environment, then check, generate
    output = both.stdout
    assert both.returncode == 1, output + both.stderr
    check_part, generate_part = output.split("mcp-codegen generate (regenerate the MCP server)")
    assert "mcp-codegen check (generated MCP server is current)" in check_part and "Failed" in check_part
    assert "`mcp/` is stale" in check_part and "`delete_pet`: removed" in check_part
    assert "Failed" in generate_part and "files were modified by this hook" in generate_part
    run("git", "add", "-A")
    fresh = run(tool("pre-commit"), "run", "mcp-codegen-check", "--all-files")  # the same environment, reused
    assert fresh.returncode == 0 and "Passed" in fresh.stdout, fresh.stdout + fresh.stderr
