"""Reading an untrusted spec through the real CLI: the $ref sandbox, bounded reads, parser limits, and
output that does not depend on where the spec lives. Each case ends in a clear error naming the rule
and a JSON pointer, never a traceback, and quickly."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.config import Config
from codegen.spec.load import load
from codegen.pipeline import analyze, generate
from codegen.problems import Level
from codegen.spec.fetch import read_url
from codegen.spec.policy import LoadError, ReadPolicy
from codegen.emit.write import check, write
from conftest import FIXTURES, ROOT, mini_spec, write_spec
from support.recorder import RecordedRequest, Reply, recording_upstream

HEAD = "openapi: 3.0.0\ninfo: {title: T, version: '1'}\n"
CLI_TIMEOUT = 60


def run_cli(*args: str | Path, cwd: Path) -> tuple[int, str, float]:
    """The real CLI in a subprocess: (exit code, stderr, seconds)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "codegen", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
    )
    stderr = done.stderr
    assert "Traceback" not in stderr and "Traceback" not in done.stdout, stderr
    return done.returncode, stderr, time.monotonic() - started


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error: #")]


def analyzed(spec: Path | str, **settings: Any) -> tuple[dict[str, Any], list[str]]:
    """In-process analysis (no rendering): the tools' input schemas by name, and the error lines."""
    api, tools, problems = analyze(Config(spec=str(spec), validate=True, **settings))
    assert api is not None
    return {tool.name: tool.input_schema for tool in tools}, [str(p) for p in problems if p.level is Level.ERROR]


def one_operation(schema: Any) -> dict[str, Any]:
    """A spec whose one operation, POST /x, takes `schema` as its JSON body."""
    body = {"content": {"application/json": {"schema": schema}}}
    return mini_spec(
        {"/x": {"post": {"operationId": "postX", "requestBody": body, "responses": {"204": {"description": "ok"}}}}}
    )


# -- parser limits --------------------------------------------------------------------------------------------


def test_yaml_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = [HEAD, "x-0: &a0 [" + ",".join(["lol"] * 10) + "]\n"]
    lines += [f"x-{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10)]  # 10^9 nodes
    spec = tmp_path / "bomb.yaml"
    spec.write_text("".join(lines) + "paths: {}\n")
    code, stderr, seconds = run_cli(spec, "-o", tmp_path / "out", cwd=tmp_path)
    assert code == 1 and seconds < 20
    assert any("alias bomb" in line and "#/x-" in line for line in error_lines(stderr)), stderr


def test_recursive_yaml_alias_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "loop.yaml"
    spec.write_text(HEAD + "x-loop: &r {a: *r}\npaths: {}\n")
    code, stderr, _ = run_cli(spec, "-o", tmp_path / "out", cwd=tmp_path)
    assert code == 1 and any("#/x-loop/a: " in line and "recursive" in line for line in error_lines(stderr)), stderr


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_nesting_5000_deep_names_the_pointer(tmp_path: Path, suffix: str) -> None:
    spec = tmp_path / f"deep.{suffix}"
    marker = "DEEPMARK"
    text = (
        yaml.safe_dump(one_operation(marker))
        if suffix == "yaml"
        else write_spec(tmp_path, one_operation(marker), "x.json").read_text()
    )
    deep = '{"items": ' * 5000 + "{}" + "}" * 5000
    spec.write_text(text.replace(marker if suffix == "yaml" else f'"{marker}"', deep))
    code, stderr, seconds = run_cli(spec, "-o", tmp_path / "out", cwd=tmp_path)
    assert code == 1 and seconds < 20
    pointer = "#/paths/~1x/post/requestBody/content/application~1json/schema/items/items/"
    assert any(
        line.startswith(f"error: {pointer}") and "nested deeper than 200 levels" in line for line in error_lines(stderr)
    ), stderr


def test_nesting_within_the_limit_generates(tmp_path: Path) -> None:
    schema: Any = {}
    for _ in range(95):  # 190 levels of objects, under the 200 limit, deeper than any real spec
        schema = {"type": "object", "properties": {"p": schema}}
    spec = write_spec(tmp_path, one_operation(schema))
    tools, errors = analyzed(spec)
    assert not errors and tools["post_x"]["properties"]


def test_lone_surrogates_in_a_json_spec_are_replaced_not_a_crash(tmp_path: Path) -> None:
    """JSON can escape a lone surrogate (`\\ud800`), which no UTF-8 file can hold: it becomes U+FFFD."""
    spec = tmp_path / "spec.json"
    spec.write_text(
        '{"openapi": "3.0.3", "info": {"title": "S\\ud800", "version": "1\\udc00"}, "paths": {"/x": {"get": {'
        '"operationId": "get\\ud800X", "summary": "s\\udfff", "parameters": [{"name": "a\\ud800", "in": "query",'
        ' "schema": {"type": "string"}}], "responses": {"200": {"description": "ok"}}}}}}',
        encoding="utf-8",
    )
    code, stderr, _ = run_cli(spec, "-o", tmp_path / "out", cwd=tmp_path)
    assert code == 0, stderr
    tools = json.loads((tmp_path / "out" / "src" / "out" / "tools.json").read_text(encoding="utf-8"))
    assert tools[0]["annotations"]["title"].endswith("s\ufffd")  # the summary, verb-first


def test_huge_file_is_refused_before_reading(tmp_path: Path) -> None:
    spec = tmp_path / "huge.yaml"
    with spec.open("wb") as handle:
        handle.truncate(60 * 1024 * 1024)  # sparse: 60 MB that cost nothing
    code, stderr, seconds = run_cli(spec, "-o", tmp_path / "out", cwd=tmp_path)
    assert code == 1 and seconds < 20
    assert any("larger than 50 MB" in line and "--max-spec-mb" in line for line in error_lines(stderr)), stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_as_the_spec_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    code, stderr, seconds = run_cli(fifo, "-o", tmp_path / "out", cwd=tmp_path)
    assert code == 1 and seconds < 20
    assert any("not a regular file" in line for line in error_lines(stderr)), stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_device_as_the_spec_is_refused(tmp_path: Path) -> None:
    code, stderr, seconds = run_cli("/dev/zero", "-o", tmp_path / "out", cwd=tmp_path)
    assert code == 1 and seconds < 20
    assert any("/dev/zero" in line and "not a regular file" in line for line in error_lines(stderr)), stderr


# -- the $ref sandbox -------------------------------------------------------------------------------------------


def test_ref_out_of_the_spec_folder_is_not_read(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    folder.mkdir(parents=True)
    spec = write_spec(folder, one_operation({"$ref": "../../../../../../../../../../etc/passwd#/x"}))
    code, stderr, _ = run_cli(spec, "-o", tmp_path / "out", "--no-validate", cwd=tmp_path)
    errors = error_lines(stderr)
    site = "error: #/paths/~1x/post/requestBody/content/application~1json/schema/$ref: "
    assert any(line.startswith(site) and "etc/passwd" in line and "--ref-root" in line for line in errors), stderr
    assert "root:" not in stderr  # nothing of the file is echoed
    assert code == 0  # the rest is generated; the body accepts any value


def test_symlink_out_of_the_spec_folder_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.yaml"
    outside.write_text("type: string\ndescription: do-not-echo\n")
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "link.yaml").symlink_to(outside)
    _, errors = analyzed(write_spec(folder, one_operation({"$ref": "link.yaml"})))
    assert any("'link.yaml' not read: it is outside" in line for line in errors), errors
    assert "do-not-echo" not in str(errors)


def test_ref_root_widens_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "pet.yaml").write_text("type: object\nproperties: {name: {type: string}}\n")
    (tmp_path / "api").mkdir()
    spec = write_spec(tmp_path / "api", one_operation({"$ref": "../common/pet.yaml"}))
    _, errors = analyzed(spec)
    assert any("'../common/pet.yaml' not read: it is outside" in line for line in errors), errors
    tools, errors = analyzed(spec, ref_root=tmp_path)
    assert not errors and "name" in tools["post_x"]["properties"]


def test_remote_ref_of_a_local_spec_is_not_fetched(tmp_path: Path) -> None:
    with recording_upstream() as upstream:
        upstream.respond_with(lambda request: Reply(200, b"type: object\nproperties: {name: {type: string}}\n"))
        spec = write_spec(tmp_path, one_operation({"$ref": f"{upstream.url}/pet.yaml"}))
        code, stderr, _ = run_cli(spec, "-o", tmp_path / "out", "--no-validate", cwd=tmp_path)
        assert not upstream.requests  # the server was never hit
        refused = [line for line in error_lines(stderr) if "remote refs are not fetched (--allow-remote-refs" in line]
        assert code == 0 and refused, stderr
        tools, errors = analyzed(spec, allow_remote_refs=True)
        assert not errors and "name" in tools["post_x"]["properties"]
        assert [r.path for r in upstream.requests] == ["/pet.yaml"]


def test_refs_no_operation_reaches_are_not_read(tmp_path: Path) -> None:
    with recording_upstream() as upstream:
        spec_data = one_operation({"type": "object"})
        spec_data["components"] = {
            "schemas": {"Far": {"$ref": f"{upstream.url}/far.yaml"}, "Gone": {"$ref": "missing.yaml"}}
        }
        _, errors = analyzed(write_spec(tmp_path, spec_data), allow_remote_refs=True)
        assert not upstream.requests and not errors, errors


def serve_spec(files: dict[str, bytes], redirect: dict[str, str] | None = None) -> Any:
    def handler(request: RecordedRequest) -> Reply:
        if redirect and request.path in redirect:
            return Reply(302, b"", (("Location", redirect[request.path]),))
        if request.path in files:
            return Reply(200, files[request.path], (("Content-Type", "application/yaml"),))
        return Reply(404, b"", (("Content-Type", "text/plain"),))

    return handler


def test_redirect_to_another_origin_is_not_followed(tmp_path: Path) -> None:
    with recording_upstream() as spec_server, recording_upstream() as other:
        other.respond_with(lambda request: Reply(200, b"type: string\n"))
        spec = yaml.safe_dump(one_operation({"$ref": "schemas/pet.yaml"})).encode()
        spec_server.respond_with(
            serve_spec(
                {"/api.yaml": spec},
                {"/schemas/pet.yaml": f"{other.url}/pet.yaml", "/moved.yaml": f"{other.url}/api.yaml"},
            )
        )
        code, stderr, _ = run_cli(f"{spec_server.url}/api.yaml", "-o", tmp_path / "out", "--no-validate", cwd=tmp_path)
        assert code == 0 and not other.requests
        refused = [line for line in error_lines(stderr) if "redirects to another origin" in line]
        assert refused and "'schemas/pet.yaml'" in refused[0], stderr
        code, stderr, _ = run_cli(f"{spec_server.url}/moved.yaml", "-o", tmp_path / "out2", cwd=tmp_path)
        assert code == 1 and not other.requests and "redirects to another origin" in stderr, stderr


def test_same_origin_refs_of_a_url_spec_are_fetched_other_origins_not(tmp_path: Path) -> None:
    with recording_upstream() as spec_server, recording_upstream() as other:
        other.respond_with(lambda request: Reply(200, b"type: string\n"))
        spec_data = one_operation({"$ref": "schemas/pet.yaml"})
        spec_data["paths"]["/y"] = {
            "post": {
                "requestBody": {"content": {"application/json": {"schema": {"$ref": f"{other.url}/pet.yaml"}}}},
                "responses": {"204": {"description": "ok"}},
            }
        }
        spec_server.respond_with(
            serve_spec({"/api.yaml": yaml.safe_dump(spec_data).encode(), "/schemas/pet.yaml": b"type: integer\n"})
        )
        tools, errors = analyzed(f"{spec_server.url}/api.yaml")
        assert not other.requests and {"type": "integer"} in tools["post_x"]["$defs"].values()
        assert sorted(r.path for r in spec_server.requests) == ["/api.yaml", "/schemas/pet.yaml"]
        assert any("another origin than the spec" in line for line in errors), errors


def test_remote_body_limits(tmp_path: Path) -> None:
    bomb = gzip.compress(b" " * (3 * 1024 * 1024))  # a few KB that inflate to 3 MB
    with recording_upstream() as upstream:
        upstream.respond_with(
            lambda request: (
                Reply(200, bomb, (("Content-Encoding", "gzip"),))
                if request.path == "/zip.yaml"
                else Reply(200, b"x" * (2 * 1024 * 1024))
            )
        )
        policy = ReadPolicy(max_bytes=1024 * 1024)
        for path in ("/zip.yaml", "/big.yaml"):
            with pytest.raises(LoadError, match="larger than 1 MB"):
                read_url(upstream.url + path, policy)


def test_remote_read_has_one_deadline(tmp_path: Path) -> None:
    def slow(request: RecordedRequest) -> Reply:
        time.sleep(3)
        return Reply(200, b"openapi: 3.0.0\n")

    with recording_upstream() as upstream:
        upstream.respond_with(slow)
        started = time.monotonic()
        with pytest.raises(LoadError, match="no complete answer within 1 s"):
            read_url(upstream.url + "/api.yaml", ReadPolicy(timeout=1))
        assert time.monotonic() - started < 2.5


def test_document_count_is_bounded(tmp_path: Path) -> None:
    for index in range(5):
        (tmp_path / f"d{index}.yaml").write_text(f"$ref: d{index + 1}.yaml\n")
    spec = write_spec(tmp_path, one_operation({"$ref": "d0.yaml"}))
    documents, problems = load(str(spec), ReadPolicy(max_documents=3))
    assert documents is not None
    assert [p.message for p in problems] == ["$ref 'd3.yaml' not read: more than 3 documents are referenced, the limit"]
    assert problems[0].source.endswith("/d2.yaml") and problems[0].pointer == "/$ref"


# -- location-independent output --------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture, root", [("refs", "main.yaml"), ("swagger2-refs", "root.yaml")])
def test_output_does_not_depend_on_where_the_spec_is(
    tmp_path: Path, fixture: str, root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "one" / "deeper" / "place", tmp_path / "two"
    for folder in (first, second):
        shutil.copytree(FIXTURES / fixture, folder / fixture)
    monkeypatch.chdir(first)
    files = generate(Config(spec=f"{fixture}/{root}", output=tmp_path / "out", validate=False)).files
    assert files and not write(tmp_path / "out", files, force=False)
    monkeypatch.chdir(tmp_path)
    again = generate(Config(spec=str(second / fixture / root), output=tmp_path / "out", validate=False)).files
    assert not check(tmp_path / "out", again).stale  # what --check does


@pytest.mark.slow
def test_check_across_folders_through_the_cli(tmp_path: Path) -> None:
    first, second = tmp_path / "one" / "deeper", tmp_path / "two"
    for folder in (first, second):
        shutil.copytree(FIXTURES / "refs", folder / "refs")
    code, stderr, _ = run_cli("refs/main.yaml", "-o", tmp_path / "out", "-q", "--no-validate", cwd=first)
    assert code == 0, stderr
    code, stderr, _ = run_cli(
        second / "refs" / "main.yaml", "-o", tmp_path / "out", "--check", "--no-validate", cwd=tmp_path
    )
    assert code == 0, stderr


def test_names_inside_the_root_do_not_depend_on_its_path_or_file_name(tmp_path: Path) -> None:
    """`#/components/schemas/Thing/$defs/Dims` is not a plain component: its `$defs` name carries a digest."""
    specs = [tmp_path / "a" / "one.yaml", tmp_path / "b" / "c" / "two.yaml"]
    for spec in specs:
        spec.parent.mkdir(parents=True)
        shutil.copy(FIXTURES / "openapi31.yaml", spec)
    first, second = (analyzed(spec)[0] for spec in specs)
    assert first == second and any(name.startswith("Dims_") for name in first["create_thing"]["$defs"])
