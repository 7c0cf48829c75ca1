"""`mcp-codegen ci` end to end, without GitHub: a temporary git repository, a simulated pull_request event
(GITHUB_EVENT_PATH, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT), and GITHUB_API_URL pointing at a recording HTTP server on
127.0.0.1 that keeps the comments it is sent, like GitHub's issue-comments API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import PETSTORE
from tests.support.recorder import RecordedRequest, Reply, Upstream, recording_upstream

TOKEN = "ghs_secretTOKENvalue1234567890"
REPO = "octo/shop"


class FakeGitHub:
    """Issue comments for one repository: list (paginated), create, update; or a fixed failure status."""

    def __init__(self, upstream: Upstream) -> None:
        self.comments: list[dict[str, Any]] = [{"id": 1, "body": "LGTM", "user": {"login": "someone"}}]
        self.fail_with: int | None = None
        upstream.respond_with(self.handle)

    def handle(self, request: RecordedRequest) -> Reply:
        if self.fail_with is not None:
            return Reply(self.fail_with, json.dumps({"message": "Resource not accessible by integration"}).encode())
        if request.header("authorization") != f"Bearer {TOKEN}":
            return Reply(401, b'{"message": "Bad credentials"}')
        if request.method == "GET" and request.path == f"/repos/{REPO}/issues/7/comments":
            return Reply(200, json.dumps(self.comments).encode())
        if request.method == "POST" and request.path == f"/repos/{REPO}/issues/7/comments":
            comment = {"id": 100 + len(self.comments), "body": json.loads(request.body)["body"]}
            self.comments.append(comment)
            return Reply(201, json.dumps(comment).encode())
        if request.method == "PATCH" and request.path.startswith(f"/repos/{REPO}/issues/comments/"):
            identifier = int(request.path.rsplit("/", 1)[1])
            for comment in self.comments:
                if comment["id"] == identifier:
                    comment["body"] = json.loads(request.body)["body"]
                    return Reply(200, json.dumps(comment).encode())
        return Reply(404, b'{"message": "Not Found"}')


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A project with the petstore spec and its generated package committed on main."""
    repo = tmp_path / "repo"
    (repo / "api").mkdir(parents=True)
    (repo / "api" / "openapi.yaml").write_text(PETSTORE.read_text(encoding="utf-8"), encoding="utf-8")
    (repo / "mcp-codegen.toml").write_text('spec = "api/openapi.yaml"\noutput = "mcp-server"\n', encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.invalid")
    git(repo, "config", "user.name", "ci")
    done = ci(repo, {}, "--mode", "generate", "--no-comment")
    assert done.returncode == 0, done.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def ci(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    return subprocess.run(
        [sys.executable, "-m", "codegen", "ci", *args],
        cwd=repo,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def remove_operation(repo: Path) -> str:
    """On a branch: drop DELETE /pet/{petId} from the spec (not regenerated); returns the base commit."""
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    spec_path = repo / "api" / "openapi.yaml"
    spec = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
    del spec["paths"]["/pet/{petId}"]["delete"]
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "drop deletePet")
    return base


def pr_env(repo: Path, base: str, api_url: str, head_repo: str = REPO) -> dict[str, str]:
    event = {
        "number": 7,
        "pull_request": {
            "number": 7,
            "base": {"sha": base, "ref": "main", "repo": {"full_name": REPO}},
            "head": {"sha": git(repo, "rev-parse", "HEAD"), "ref": "feature", "repo": {"full_name": head_repo}},
        },
    }
    gh = repo.parent / "gh"
    gh.mkdir(exist_ok=True)
    (gh / "event.json").write_text(json.dumps(event), encoding="utf-8")
    for name in ("summary.md", "output.txt"):
        (gh / name).write_text("", encoding="utf-8")
    return {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(gh / "event.json"),
        "GITHUB_STEP_SUMMARY": str(gh / "summary.md"),
        "GITHUB_OUTPUT": str(gh / "output.txt"),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": api_url,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_WORKSPACE": str(repo),
        "GITHUB_ACTIONS": "true",
        "RUNNER_TEMP": str(gh),
        "INPUT_MODE": "check",
        "INPUT_COMMENT": "true",
    }


def outputs(env: dict[str, str]) -> dict[str, str]:
    lines = Path(env["GITHUB_OUTPUT"]).read_text(encoding="utf-8").splitlines()
    values = dict(line.split("=", 1) for line in lines)
    report = Path(values.pop("report"))
    assert report.read_text(encoding="utf-8").startswith("<!-- mcp-codegen:tool-surface")
    return values


@pytest.fixture()
def github() -> Iterator[tuple[Upstream, FakeGitHub]]:
    with recording_upstream() as upstream:
        yield upstream, FakeGitHub(upstream)


@pytest.mark.slow
def test_pull_request_removing_an_operation(repo: Path, github: tuple[Upstream, FakeGitHub]) -> None:
    upstream, fake = github
    base = remove_operation(repo)
    env = pr_env(repo, base, upstream.url)
    first = ci(repo, env)
    assert first.returncode == 1, first.stderr  # check mode: the committed package is stale
    assert outputs(env) == {
        "stale": "true",
        "breaking": "true",
        "tools-added": "0",
        "tools-removed": "1",
        "tools-changed": "0",
    }
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "`delete_pet`: removed (was DELETE /pet/{petId})" in summary
    assert "### Breaking changes (1)" in summary and "❌ `--check`: `mcp-server/` is stale" in summary
    ours = [c for c in fake.comments if c["body"].startswith("<!-- mcp-codegen:tool-surface mcp-server -->")]
    assert len(ours) == 1 and "`delete_pet`: removed" in ours[0]["body"]
    assert [r.method for r in upstream.requests] == ["GET", "POST"]

    # the second run (after regenerating) updates the same comment instead of adding one
    upstream.clear()
    Path(env["GITHUB_OUTPUT"]).write_text("", encoding="utf-8")
    assert ci(repo, {**env, "INPUT_MODE": "generate"}).returncode == 0
    git(repo, "commit", "-q", "-am", "regenerate")
    second = ci(repo, env)
    assert second.returncode == 0, second.stderr
    assert outputs(env)["stale"] == "false" and outputs(env)["breaking"] == "true"
    assert [r.method for r in upstream.requests] == ["GET", "PATCH", "GET", "PATCH"]
    ours = [c for c in fake.comments if c["body"].startswith("<!-- mcp-codegen:tool-surface")]
    assert len(ours) == 1 and "✅ `--check`: `mcp-server/` is up to date." in ours[0]["body"]
    assert len(fake.comments) == 2  # the other comment is untouched

    # the token reaches the API only: no log line, summary, output or comment carries it
    texts = [first.stdout, first.stderr, second.stdout, second.stderr, summary]
    texts += [Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8"), Path(env["GITHUB_OUTPUT"]).read_text()]
    texts += [c["body"] for c in fake.comments]
    assert not [t for t in texts if TOKEN in t]
    assert all(r.header("authorization") == f"Bearer {TOKEN}" for r in upstream.requests)


@pytest.mark.slow
@pytest.mark.parametrize("status", [403, 500])
def test_comment_failure_is_a_warning(repo: Path, github: tuple[Upstream, FakeGitHub], status: int) -> None:
    upstream, fake = github
    fake.fail_with = status
    env = pr_env(repo, remove_operation(repo), upstream.url)
    done = ci(repo, env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    warnings = [line for line in done.stdout.splitlines() if line.startswith("::warning")]
    assert len(warnings) == 1, done.stdout
    if status == 403:
        assert "pull-requests: write" in warnings[0]
    else:  # retried once, then given up
        assert "HTTP 500" in warnings[0] and len(upstream.requests) == 2
    assert "`delete_pet`: removed" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert outputs(env)["breaking"] == "true"


@pytest.mark.slow
def test_fork_and_push_do_not_call_the_api(repo: Path, github: tuple[Upstream, FakeGitHub]) -> None:
    upstream, _ = github
    env = pr_env(repo, remove_operation(repo), upstream.url, head_repo="someone/shop")
    done = ci(repo, env)
    assert "comes from a fork" in done.stdout and not upstream.requests
    push = {**env, "GITHUB_EVENT_NAME": "push"}
    Path(env["GITHUB_EVENT_PATH"]).write_text(json.dumps({"before": git(repo, "rev-parse", "main")}))
    done = ci(repo, push)
    assert "::notice title=mcp-codegen::not a pull request (push)" in done.stdout and not upstream.requests
    assert "`delete_pet`: removed" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")


@pytest.mark.slow
def test_unreachable_api_is_bounded(repo: Path) -> None:
    from tests.support.servers import free_port

    env = pr_env(repo, remove_operation(repo), f"http://127.0.0.1:{free_port()}")
    done = ci(repo, env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "could not comment on pull request #7" in done.stdout


def test_bad_inputs_exit_2(repo: Path) -> None:
    done = ci(repo, {"INPUT_MODE": "publish"})
    assert done.returncode == 2 and "input 'mode' must be 'check' or 'generate'" in done.stderr
    done = ci(repo, {}, "--args", "--check")
    assert done.returncode == 2 and "args: --check is set by the ci command itself" in done.stderr


def test_several_servers_from_the_config(tmp_path: Path) -> None:
    """[[servers]]: one run generates each, and the report has one section per server (one comment marker)."""
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "pets.yaml").write_text(PETSTORE.read_text(encoding="utf-8"), encoding="utf-8")
    spec = yaml.safe_load(PETSTORE.read_text(encoding="utf-8"))
    spec["paths"] = {path: item for path, item in spec["paths"].items() if path.startswith("/store")}
    (tmp_path / "api" / "store.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    (tmp_path / "mcp-codegen.toml").write_text(
        'compact = true\n\n[[servers]]\nspec = "api/pets.yaml"\noutput = "mcp/pets"\n\n'
        '[[servers]]\nspec = "api/store.yaml"\noutput = "mcp/store"\nstrict = false\n',
        encoding="utf-8",
    )
    done = ci(tmp_path, {"RUNNER_TEMP": str(tmp_path)}, "--mode", "generate", "--no-comment")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<!-- mcp-codegen:tool-surface mcp/pets,mcp/store -->\n")
    assert "## MCP tool surface of `mcp/pets/`" in done.stdout and "## MCP tool surface of `mcp/store/`" in done.stdout
    store = json.loads((tmp_path / "mcp" / "store" / "src" / "store" / "tools.json").read_text(encoding="utf-8"))
    assert {t["name"] for t in store} == {"delete_order", "get_inventory", "get_order_by_id", "place_order"}
    assert all("outputSchema" not in t for t in store)  # the shared `compact = true`
    check = ci(tmp_path, {}, "--no-comment")
    assert check.returncode == 0 and check.stdout.count("is up to date.") == 2, check.stdout


def test_strict_from_the_config(tmp_path: Path) -> None:
    (tmp_path / "openapi.yaml").write_text(PETSTORE.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "mcp-codegen.toml").write_text('spec = "openapi.yaml"\noutput = "out"\nstrict = true\n')
    done = ci(tmp_path, {}, "--mode", "generate", "--no-comment")
    assert done.returncode == 2 and "--strict: 2 warnings are errors" in done.stderr
    assert "error: #/paths/~1user~1{username}/put/parameters/0:" in done.stderr and not (tmp_path / "out").exists()
