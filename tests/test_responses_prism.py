"""Next pages against the Prism mock, from the real GitHub and Stripe documents: GitHub's issue list (with the Link
header its spec declares, which Prism sends from the header's example) and Stripe's customer list (`has_more`, with
`starting_after`). Each operation is cut out of the corpus document with everything it references (Stripe's
customer schema keeps its scalar members only: Prism does not start on Stripe's whole schema graph).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import anyio
import jsonschema
import mcp.types as types
import pytest
from mcp import Client

from conftest import generate_into
from cut_spec import github_issues, stripe_customers  # tools/cut_spec.py
from support.generated import on_path
from support.prism import prism_server

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:The logging capability is deprecated")]


Served = tuple[ModuleType, ModuleType, dict[str, Any], str]


@pytest.fixture(scope="module", params=["github", "stripe"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    name = f"prism{request.param}"
    root = tmp_path_factory.mktemp(name)
    spec = root / "spec.json"
    spec.write_text(json.dumps(github_issues() if request.param == "github" else stripe_customers()), encoding="utf-8")
    generate_into(spec, root / name)
    with on_path(root / name):
        tools = {t["name"]: t for t in json.loads((root / name / "src" / name / "tools.json").read_text())}
        with prism_server(spec) as url:
            yield importlib.import_module(f"{name}.server"), importlib.import_module(f"{name}.settings"), tools, url


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
