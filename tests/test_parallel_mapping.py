"""surface/parallel.py (with codegen/forked.py): on a large API a forked helper maps the last operations; the tools and problems are those
one process finds, and whatever the helper does not deliver (or could have mapped differently) is mapped here."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from codegen import forked
from codegen.config import Config
from codegen.pipeline import analyze, generate
from codegen.problems import Problem
from codegen.surface import parallel
from codegen.surface.plans import ToolSpec

from conftest import PETSTORE, mini_spec, write_spec


def _spec(paths: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    return mini_spec(paths, components={"schemas": schemas})


def _resource(name: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Paths for one resource: a paginated list, a create, a get and an update; their schemas are shared."""
    item = {"$ref": f"#/components/schemas/{name}"}
    page = {"type": "object", "properties": {"items": {"type": "array", "items": item}, "next": {"type": "string"}}}
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": item}}}}
    return {
        f"/{name.lower()}s": {
            "get": {
                "operationId": f"list{name}s",
                "summary": f"List {name}s",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    {"name": "cursor", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": page}}}},
            },
            "post": {  # no operationId: named after method and path (a warning)
                "requestBody": {"content": {"application/json": {"schema": item}}},
                "responses": ok,
                **(extra or {}),
            },
        },
        f"/{name.lower()}s/{{id}}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {"operationId": f"get{name}", "responses": ok},
            "patch": {
                "operationId": f"update{name}",
                "requestBody": {"content": {"application/json": {"schema": item}}},
                "responses": ok,
            },
        },
    }


def _schemas() -> dict[str, Any]:
    """Shared definitions: nested references, an allOf merged by value, and some the converter reports on."""
    return {
        "Base": {"type": "object", "properties": {"id": {"type": "string", "readOnly": True}, "kind": {"type": "x"}}},
        "Owner": {"type": "object", "properties": {"name": {"type": "string", "pattern": "\\p{L}+"}}},
        "Pet": {
            "allOf": [
                {"$ref": "#/components/schemas/Base"},
                {"properties": {"owner": {"$ref": "#/components/schemas/Owner"}}},
            ]
        },
        "Toy": {"type": "object", "properties": {"pet": {"$ref": "#/components/schemas/Pet"}, "n": {"type": "y"}}},
        "Shop": {
            "type": "object",
            "properties": {"toys": {"type": "array", "items": {"$ref": "#/components/schemas/Toy"}}},
        },
        "Owner2": {"allOf": [{"$ref": "#/components/schemas/Owner"}, {"required": ["name"]}]},
    }


def _large(tmp_path: Path) -> Path:
    paths: dict[str, Any] = {}
    for name in ("Pet", "Toy", "Shop", "Owner", "Owner2", "Base"):
        paths.update(_resource(name, {"x-mcp-result-tokens": "many"} if name == "Shop" else None))
    return write_spec(tmp_path, _spec(paths, _schemas()))


@pytest.fixture
def sharing(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """A helper for any API with 2+ operations, whatever the machine's load; the list records, for each helper
    run that came back, whether it was used (True) or mapped here again (False)."""
    monkeypatch.setattr(parallel, "SHARE_OPERATIONS", 2)
    monkeypatch.setattr(forked, "spare_cpu", lambda: True)
    monkeypatch.delenv(forked.SWITCH, raising=False)
    used: list[bool] = []
    consistent = parallel._consistent

    def spy(here: Any, part: Any) -> bool:
        used.append(consistent(here, part))
        return used[-1]

    monkeypatch.setattr(parallel, "_consistent", spy)
    return used


def _in_one_process(spec: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> tuple[list[Any], list[Problem]]:
    with monkeypatch.context() as patched:
        patched.setattr(parallel, "SHARE_OPERATIONS", 10**9)
        return _analyzed(spec, **options)


def _analyzed(spec: Path, **options: Any) -> tuple[list[Any], list[Problem]]:
    api, tools, problems = analyze(Config(spec=str(spec), **options))
    assert api is not None
    assert all(tool.operation is op for tool, op in zip(tools, api.operations))  # this process's operations
    return [_seen(tool) for tool in tools], problems


def _seen(tool: ToolSpec) -> Any:
    return tool.to_json(), tool.plan.to_json(), tool.described_output, tool.operation.path, tool.operation.method


@pytest.mark.parametrize("options", [{}, {"compact": True}, {"output_depth": -1, "input_budget": 300}])
def test_helper_maps_its_share_with_the_same_tools_and_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool], options: dict[str, Any]
) -> None:
    spec = _large(tmp_path)
    expected = _in_one_process(spec, monkeypatch, **options)
    assert len(expected[0]) == 24 and len(expected[1]) > 6  # names, the converter's and the results' problems
    assert _analyzed(spec, **options) == expected
    assert sharing == [True]


def test_the_generated_package_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool]
) -> None:
    one = _generated(PETSTORE, tmp_path / "one", monkeypatch, helper=False)
    assert _generated(PETSTORE, tmp_path / "two", monkeypatch, helper=True) == one
    assert sharing == [True]


def _generated(spec: Path, out: Path, monkeypatch: pytest.MonkeyPatch, helper: bool) -> Any:
    with monkeypatch.context() as patched:
        if not helper:
            patched.setattr(parallel, "SHARE_OPERATIONS", 10**9)
        result = generate(Config(spec=str(spec), output=out.parent / "pkg"))
    return dict(result.files), result.problems


def test_helper_that_dies_is_made_up_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool]) -> None:
    spec = _large(tmp_path)
    expected = _in_one_process(spec, monkeypatch)
    monkeypatch.setattr(parallel, "_run", lambda *args: os._exit(3))  # the helper dies without a word
    assert _analyzed(spec) == expected
    assert sharing == []


def test_helper_that_fails_is_made_up_for_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool], capfd: pytest.CaptureFixture[str]
) -> None:
    spec = _large(tmp_path)
    expected = _in_one_process(spec, monkeypatch)
    capfd.readouterr()

    def fail(*args: Any) -> None:
        raise RuntimeError("a bug in the helper's mapping")

    monkeypatch.setattr(parallel, "_run", fail)
    assert _analyzed(spec) == expected
    assert sharing == []
    assert capfd.readouterr().err == ""  # no traceback from the helper


def test_helper_that_cannot_start_is_made_up_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool]
) -> None:
    spec = _large(tmp_path)
    expected = _in_one_process(spec, monkeypatch)
    monkeypatch.setattr(forked, "_start", lambda work: (None, None))  # none can start
    assert _analyzed(spec) == expected


def test_helper_too_slow_is_made_up_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool]) -> None:
    spec = _large(tmp_path)
    expected = _in_one_process(spec, monkeypatch)
    monkeypatch.setattr(parallel, "HELPER_TIMEOUT", 0.0)
    run = parallel._run

    def slow(*args: Any) -> Any:
        time.sleep(5)  # not waited for: it is ended when this process has mapped its run again
        return run(*args)

    monkeypatch.setattr(parallel, "_run", slow)
    started = time.monotonic()
    assert _analyzed(spec) == expected
    assert sharing == [] and time.monotonic() - started < 4


def _cycle(tmp_path: Path) -> Path:
    """A definition whose allOf reaches a definition that refers back to it: the one converted first decides the
    other (A is merged with B when A comes first, else A keeps its allOf). This process meets A first, the helper
    B (and A inside it)."""
    schemas = {
        "A": {"allOf": [{"$ref": "#/components/schemas/B"}, {"properties": {"a": {"type": "string"}}}]},
        "B": {
            "type": "object",
            "properties": {
                "b": {"type": "string"},
                "child": {"allOf": [{"$ref": "#/components/schemas/A"}, {"properties": {"c": {}}}]},
            },
        },
    }
    paths: dict[str, Any] = {}
    for i, name in enumerate(["A", "A", "B", "B"]):
        content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}
        paths[f"/p{i}"] = {
            "post": {
                "operationId": f"op{i}",
                "requestBody": {"content": content},
                "responses": {"204": {"description": "ok"}},
            }
        }
    return write_spec(tmp_path, _spec(paths, schemas))


def test_an_allof_cycle_is_mapped_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool]
) -> None:
    spec = _cycle(tmp_path)
    expected = _in_one_process(spec, monkeypatch)
    assert _analyzed(spec) == expected
    assert sharing == []  # the helper's run was not used
    monkeypatch.setattr(parallel._Watched, "order_dependent", lambda self: False)  # were it used, it would differ
    assert _analyzed(spec) != expected


LONG = "VeryLongDefinitionNameThatGoesOnAndOnForMoreThanSixtyCharactersOfText"  # its first 60 name the two below


def _named_alike(tmp_path: Path, uses: list[str]) -> Path:
    """Operations each taking one of two definitions given the same `$defs` name (or another one)."""
    schemas = {LONG + "A": {"type": "string"}, LONG + "B": {"type": "integer"}, "Plain": {"type": "boolean"}}
    paths: dict[str, Any] = {}
    for i, name in enumerate(uses):
        content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}
        paths[f"/p{i}"] = {"post": {"operationId": f"op{i}", "requestBody": {"content": content}, "responses": {}}}
    return write_spec(tmp_path, _spec(paths, schemas))


@pytest.mark.parametrize(
    "uses, used",
    [
        # a name cut to 60 characters carries its location's digest: the same whichever process meets it first
        ([LONG + "A", LONG + "A", LONG + "B", LONG + "B"], True),
        (["Plain"] * 4 + [LONG + "B", LONG + "A"], True),
    ],
)
def test_one_defs_name_for_two_definitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool], uses: list[str], used: bool
) -> None:
    spec = _named_alike(tmp_path, uses)
    expected = _in_one_process(spec, monkeypatch)
    assert _analyzed(spec) == expected
    assert sharing == [used]


def test_a_defs_name_given_to_another_definition_by_the_helper_is_not_used(tmp_path: Path) -> None:
    """Should two definitions ever get one `$defs` name (a digest taken already), the first one met keeps it: the
    helper's run is used only when each name it gave is given to the same definition here."""
    spec = _named_alike(tmp_path, ["Plain"])
    api, _, _ = analyze(Config(spec=str(spec)))
    assert api is not None
    from codegen.spec.load import open_documents
    from codegen.spec.policy import ReadPolicy
    from codegen.spec.refs import Resolver

    documents, _ = open_documents(str(spec), ReadPolicy(None, False, 1 << 20))
    assert documents is not None
    resolver = Resolver(documents)
    here = parallel._Watched(resolver, api.dialect)
    a, b = (resolver.root.child("components", "schemas", LONG + end) for end in "AB")
    here._named["Shared"] = a
    part = parallel.Part([], [], [], [], {}, {"Shared": b})
    assert not parallel._consistent(here, part)
    assert parallel._consistent(here, parallel.Part([], [], [], [], {}, {"Shared": a, "Other": b}))


def test_a_document_the_helper_reads_is_read_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool]
) -> None:
    (tmp_path / "other.yaml").write_text("Thing: {type: object, properties: {x: {type: string}}}\n", encoding="utf-8")
    content = {"application/json": {"schema": {"$ref": "other.yaml#/Thing"}}}
    paths = {
        f"/p{i}": {"post": {"operationId": f"op{i}", "requestBody": {"content": content}, "responses": {"204": {}}}}
        for i in range(4)
    }
    spec = write_spec(tmp_path, mini_spec(paths))
    expected = _in_one_process(spec, monkeypatch)
    assert _analyzed(spec) == expected
    assert sharing == []  # the helper read other.yaml: its run was not used


def test_no_helper_for_few_operations_or_a_busy_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _large(tmp_path)
    started: list[int] = []
    monkeypatch.setattr(forked, "Helper", lambda work: started.append(1))  # fails the run if called
    monkeypatch.setattr(forked, "spare_cpu", lambda: True)
    monkeypatch.delenv(forked.SWITCH, raising=False)
    _in_one_process(spec, monkeypatch)  # below SHARE_OPERATIONS
    monkeypatch.setattr(parallel, "SHARE_OPERATIONS", 2)
    monkeypatch.setattr(forked, "spare_cpu", lambda: False)  # one CPU, or a busy machine
    _analyzed(spec)
    assert started == []


def test_a_spec_in_several_documents_is_mapped_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool]
) -> None:
    """The helper starts before the operations are read, so before another document is: once reading them here
    read one, the helper is stopped and everything is mapped here, the documents read in one order."""
    (tmp_path / "other.yaml").write_text("Q: {name: q, in: query, schema: {type: string}}\n", encoding="utf-8")
    paths = {
        f"/p{i}": {"get": {"operationId": f"op{i}", "responses": {"204": {"description": "ok"}}}} for i in range(4)
    }
    paths["/p0"]["get"]["parameters"] = [{"$ref": "other.yaml#/Q"}]
    spec = write_spec(tmp_path, mini_spec(paths), "multi.yaml")
    expected = _in_one_process(spec, monkeypatch)
    assert _analyzed(spec) == expected
    assert sharing == []


def test_a_tool_name_the_helper_gives_differently_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharing: list[bool]
) -> None:
    """The helper names its operations' tools as if they were all the API's: an operationId used before the cut as
    well is `listThings` there, `list_things_2` here. Its run is then mapped here, with this process's names."""
    paths: dict[str, Any] = {}
    for i, operation_id in enumerate(["listThings", "getA", "getB", "listThings", "getC", "getD"]):
        paths[f"/p{i}"] = {"get": {"operationId": operation_id, "responses": {"204": {"description": "ok"}}}}
    spec = write_spec(tmp_path, mini_spec(paths))
    expected = _in_one_process(spec, monkeypatch)
    assert [tool[0]["name"] for tool in expected[0]] == [
        "list_things",
        "get_a",
        "get_b",
        "list_things_2",
        "get_c",
        "get_d",
    ]
    same: list[bool] = []
    real = parallel._same_tools
    monkeypatch.setattr(parallel, "_same_tools", lambda *args: same.append(real(*args)) or same[-1])
    assert _analyzed(spec) == expected
    assert same == [False]
    paths["/p3"]["get"]["operationId"] = "listOthers"  # no name used twice: the helper's run is used
    spec = write_spec(tmp_path, mini_spec(paths))
    assert _analyzed(spec) == _in_one_process(spec, monkeypatch)
    assert same == [False, True]
