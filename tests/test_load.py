"""The load stage: files and URLs, YAML and JSON, and the documents that $refs point to."""

from __future__ import annotations

import http.server
from collections.abc import Iterator
from pathlib import Path

import pytest

from codegen.spec.load import load, to_uri
from support.servers import http_server


def test_yaml_keeps_dates_as_strings_and_int_keys_as_text(tmp_path: Path) -> None:
    spec = tmp_path / "api.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: T, version: 2024-01-02}\npaths:\n  /a:\n    get:\n      responses:\n        200: {description: ok}\n"
    )
    documents, problems = load(str(spec))
    assert problems == [] and documents is not None
    assert documents.root["info"]["version"] == "2024-01-02"
    assert list(documents.root["paths"]["/a"]["get"]["responses"]) == ["200"]


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("openapi: 3.0.0\ninfo:\n  title: [unclosed\n")
    documents, problems = load(str(spec))
    assert documents is None
    assert len(problems) == 1 and "invalid YAML at line" in problems[0].message


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    spec = tmp_path / "bad.json"
    spec.write_text('{"openapi": "3.0.0",\n "info": }')
    documents, problems = load(str(spec))
    assert documents is None and "invalid JSON at line 2, column 10" in problems[0].message


def test_missing_file_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    documents, problems = load(str(tmp_path / "nope.yaml"))
    assert documents is None and "no such file" in problems[0].message


def test_not_a_mapping(tmp_path: Path) -> None:
    spec = tmp_path / "list.yaml"
    spec.write_text("- a\n- b\n")
    documents, problems = load(str(spec))
    assert documents is None and "not a JSON/YAML object" in problems[0].message


def test_external_refs_are_bundled(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "pet.yaml").write_text("type: object\nproperties:\n  owner: {$ref: 'owner.json'}\n")
    (tmp_path / "schemas" / "owner.json").write_text('{"type": "string"}')
    spec = tmp_path / "api.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: T, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    Pet: {$ref: 'schemas/pet.yaml'}\n"
    )
    documents, problems = load(str(spec))
    assert problems == [] and documents is not None
    assert set(documents.by_uri) == {
        to_uri(str(p)) for p in (spec, tmp_path / "schemas/pet.yaml", tmp_path / "schemas/owner.json")
    }


def test_unreadable_external_ref_is_reported(tmp_path: Path) -> None:
    spec = tmp_path / "api.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: T, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    Pet: {$ref: 'missing.yaml'}\n"
    )
    documents, problems = load(str(spec))
    assert documents is not None
    assert [p.level.value for p in problems] == ["error"] and "missing.yaml" in problems[0].message


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 serving tmp_path."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    with http_server(Quiet) as url:
        yield url


def test_spec_from_url_with_relative_ref(tmp_path: Path, served: str) -> None:
    (tmp_path / "api.json").write_text(
        '{"openapi": "3.0.0", "info": {"title": "T", "version": "1"}, "paths": {},'
        ' "components": {"schemas": {"Pet": {"$ref": "pet.json"}}}}'
    )
    (tmp_path / "pet.json").write_text('{"type": "object"}')
    documents, problems = load(f"{served}/api.json")
    assert problems == [] and documents is not None
    assert documents.by_uri[f"{served}/pet.json"] == {"type": "object"}


def test_url_that_fails_is_a_problem(served: str) -> None:
    documents, problems = load(f"{served}/missing.json")
    assert documents is None and "HTTP 404" in problems[0].message
