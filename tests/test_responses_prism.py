"""Next pages against the Prism mock, from the real GitHub and Stripe documents: GitHub's issue list (with the Link
header its spec declares, which Prism sends from the header's example) and Stripe's customer list (`has_more`, with
`starting_after`). Each operation is cut out of the corpus document with everything it references (Stripe's
customer schema keeps its scalar members only: Prism does not start on Stripe's whole schema graph).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import jsonschema
import mcp.types as types
import pytest
from mcp import Client

from conftest import generate_into
from support.prism import prism_server

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:The logging capability is deprecated")]
ROOT = Path(__file__).resolve().parents[1]


def named(name: str) -> Path:
    subprocess.run([str(ROOT / "tools" / "fetch-corpus")], check=True, capture_output=True, timeout=600)
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "list-specs"), "--named", "--tsv"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return Path(dict(line.split("\t")[:2] for line in out.splitlines())[name])


def cut_out(document: dict[str, Any], path: str) -> dict[str, Any]:
    """`path`'s GET operation with every component it references (transitively), its 200 response only."""
    operation = dict(document["paths"][path]["get"])
    operation["responses"] = {"200": operation["responses"]["200"]}
    out: dict[str, Any] = {
        "openapi": document["openapi"],
        "info": document["info"],
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {path: {"get": operation}},
        "components": {},
    }
    todo: list[Any] = [operation]
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/") and ref not in seen:
                seen.add(ref)
                _, _, kind, name = ref.split("/", 3)
                target = document["components"][kind][name]
                out["components"].setdefault(kind, {})[name] = target
                todo.append(target)
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return out


def github_issues() -> dict[str, Any]:
    document = json.loads(named("github").read_text(encoding="utf-8"))
    return cut_out(document, "/repos/{owner}/{repo}/issues")


def stripe_customers() -> dict[str, Any]:
    document = json.loads(named("stripe").read_text(encoding="utf-8"))
    customer = document["components"]["schemas"]["customer"]
    scalar = {k: v for k, v in customer["properties"].items() if "$ref" not in json.dumps(v)}
    small = {k: v for k, v in customer.items() if k not in ("properties", "required", "x-expandableFields")}
    small.update(properties=scalar, required=[r for r in customer["required"] if r in scalar])
    document = {**document, "components": {**document["components"], "schemas": {"customer": small}}}
    return cut_out(document, "/v1/customers")


Served = tuple[ModuleType, ModuleType, dict[str, Any], str]


@pytest.fixture(scope="module", params=["github", "stripe"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    name = f"prism{request.param}"
    root = tmp_path_factory.mktemp(name)
    spec = root / "spec.json"
    spec.write_text(json.dumps(github_issues() if request.param == "github" else stripe_customers()), encoding="utf-8")
    generate_into(spec, root / name)
    sys.path.insert(0, str(root / name / "src"))
    try:
        tools = {t["name"]: t for t in json.loads((root / name / "src" / name / "tools.json").read_text())}
        with prism_server(spec) as url:
            yield importlib.import_module(f"{name}.server"), importlib.import_module(f"{name}.settings"), tools, url
    finally:
        sys.path.remove(str(root / name / "src"))
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


def calls(served: Served, mode: str, *wanted: tuple[str, dict[str, Any]]) -> list[types.CallToolResult]:
    server, settings, _, url = served
    prefix = settings.ENV_PREFIX
    app = server.build_server(settings.Settings.from_env({f"{prefix}_BASE_URL": url}))

    async def go() -> list[types.CallToolResult]:
        async with Client(app, mode="legacy") if mode == "legacy" else Client(app) as client:
            return [await client.call_tool(tool, arguments) for tool, arguments in wanted]

    return anyio.run(go)


def checked(served: Served, tool: str, result: types.CallToolResult) -> dict[str, Any]:
    text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
    assert not result.is_error and isinstance(result.structured_content, dict), text
    jsonschema.Draft202012Validator(served[2][tool]["outputSchema"]).validate(result.structured_content)
    return result.structured_content


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_next_arguments_from_prism(served: Served, mode: str) -> None:
    if "issues_list_for_repo" in served[2]:
        args = {"owner": "octocat", "repo": "hello", "per_page": 2}
        one, bounded = calls(
            served,
            mode,
            ("issues_list_for_repo", args),
            ("issues_list_for_repo", {**args, "max_pages": 5, "fields": ["number", "title", "user.login"]}),
        )
        # Prism sends the Link header's example: <https://api.github.com/resource?page=2>; rel="next", ...
        assert checked(served, "issues_list_for_repo", one)["next"] == {"arguments": {**args, "page": 2}}
        merged = checked(served, "issues_list_for_repo", bounded)
        # page 2's Link names page 2 again: following it would not move, so collecting stops there, with no next
        assert "next" not in merged and all(set(item) <= {"number", "title", "user"} for item in merged["result"])
        assert len(merged["result"]) == 2 * len(checked(served, "issues_list_for_repo", one)["result"])
    else:
        one, bounded = calls(
            served, mode, ("get_customers", {"limit": 2}), ("get_customers", {"limit": 2, "max_items": 3})
        )
        first = checked(served, "get_customers", one)
        assert first["has_more"] is True
        assert first["next"] == {"arguments": {"limit": 2, "starting_after": first["data"][-1]["id"]}}
        merged = checked(served, "get_customers", bounded)
        assert len(merged["data"]) == 3 and merged["next"]["arguments"]["max_items"] == 3  # Prism always has_more
