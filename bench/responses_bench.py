"""Tokens per typical list result, before and after result shaping, and the calls an agent needs for 500 items.

    .venv/bin/python bench/responses_bench.py                  # prints the Markdown report
    .venv/bin/python bench/responses_bench.py --out bench/results/responses.md

GitHub's `issues/list-for-repo` and Stripe's `GetCustomers` are cut out of the corpus documents (tools/cut_spec.py)
and generated as packages; each is driven in-process with the official MCP client against a local upstream on
127.0.0.1 that pages through 600 items: GitHub's issue example from its spec (number and title varied), sent with
Link headers; a Stripe customer object as Stripe's API reference shows it, sent with `has_more`.

"Before" is what a call returned without shaping: the API's page as text (the generated server's earlier
behaviour; also what `<PREFIX>_RESULT_TOKENS=0` gives). Tokens are characters / 4 (what the server budgets with)
and, when the `bpe-openai` package is installed, o200k_base tokens counted by it.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import anyio
import mcp.types as types
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))
from codegen.config import Config  # noqa: E402
from codegen.emit.write import write  # noqa: E402
from codegen.pipeline import generate  # noqa: E402
from cut_spec import github_issues, named_document, stripe_customers  # noqa: E402
from support.recorder import RecordedRequest, Reply, recording_upstream  # noqa: E402

ITEMS = 600  # in each collection
WANTED = 500  # items the agent collects
JSON = (("Content-Type", "application/json"),)
CUSTOMER = {  # Stripe's customer object, as its API reference shows one
    "id": "cus_NffrFeUfNV2Hib",
    "object": "customer",
    "address": None,
    "balance": 0,
    "created": 1680893993,
    "currency": None,
    "default_source": None,
    "delinquent": False,
    "description": None,
    "discount": None,
    "email": "jennyrosen@example.com",
    "invoice_prefix": "0759376C",
    "invoice_settings": {
        "custom_fields": None,
        "default_payment_method": None,
        "footer": None,
        "rendering_options": None,
    },
    "livemode": False,
    "metadata": {},
    "name": "Jenny Rosen",
    "next_invoice_sequence": 1,
    "phone": None,
    "preferred_locales": [],
    "shipping": None,
    "tax_exempt": "none",
    "test_clock": None,
}


def count_tokens() -> Callable[[str], int] | None:
    try:
        import bpe_openai  # type: ignore[import-not-found]
    except ImportError:
        return None
    encoding = bpe_openai.get_encoding("o200k_base")
    return lambda text: len(encoding.encode(text))


class Api:
    def __init__(self, url: str, issue: dict[str, Any]) -> None:
        self.url, self.issue = url, issue

    def handle(self, request: RecordedRequest) -> Reply:
        query = {k: v[-1] for k, v in parse_qs(request.query).items()}
        if request.path == "/v1/customers":
            size = int(query.get("limit", "10"))
            start = int(query["starting_after"].rsplit("_", 1)[1]) + 1 if "starting_after" in query else 0
            data = [{**CUSTOMER, "id": f"cus_{n:06d}"} for n in range(start, min(start + size, ITEMS))]
            body = {"object": "list", "data": data, "has_more": start + size < ITEMS, "url": "/v1/customers"}
            return Reply(200, json.dumps(body).encode(), JSON)
        page, size = int(query.get("page", "1")), int(query.get("per_page", "30"))
        items = []
        for n in range((page - 1) * size, min(page * size, ITEMS)):
            item = copy.deepcopy(self.issue)
            item.update(number=n + 1, id=1000 + n, title=f"{self.issue['title']} ({n + 1})")
            items.append(item)
        headers = JSON
        if page * size < ITEMS:
            link = f'<{self.url}/repositories/1296269/issues?per_page={size}&page={page + 1}>; rel="next"'
            headers = JSON + (("Link", link),)
        return Reply(200, json.dumps(items).encode(), headers)


def build(spec: dict[str, Any], name: str, work: Path) -> tuple[Any, Any]:
    path = work / f"{name}.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    result = generate(Config(spec=str(path), output=work / name, name=name))
    assert result.files, [str(p) for p in result.problems]
    assert write(work / name, result.files, force=True) == []
    sys.path.insert(0, str(work / name / "src"))
    return importlib.import_module(f"{name}.server"), importlib.import_module(f"{name}.settings")


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="write the Markdown report here (default: print it)")
    args = parser.parse_args()
    tokens = count_tokens()
    github = github_issues()
    issue = named_document("github")["components"]["examples"]["issue-items"]
    issue = issue["value"][0]
    rows: list[str] = []
    collect: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, recording_upstream() as upstream:
        upstream.respond_with(Api(upstream.url, issue).handle)
        gh_server, gh_settings = build(github, "bench_github", Path(tmp))
        st_server, st_settings = build(stripe_customers(), "bench_stripe", Path(tmp))

        def calls(server: Any, settings: Any, tool: str, *arguments: dict[str, Any], budget: str = "") -> list[Any]:
            environ = {f"{settings.ENV_PREFIX}_BASE_URL": upstream.url}
            if budget:
                environ[f"{settings.ENV_PREFIX}_RESULT_TOKENS"] = budget
            app = server.build_server(settings.Settings.from_env(environ))

            async def go() -> list[types.CallToolResult]:
                async with Client(app, mode="legacy") as client:
                    return [await client.call_tool(tool, a) for a in arguments]

            return anyio.run(go)

        def size(text: str) -> str:
            cell = f"{len(text) // 4:,}"
            return cell + (f" ({tokens(text):,})" if tokens else "")

        gh_fields = ["number", "title", "state", "user.login", "labels.name", "updated_at"]
        st_fields = ["id", "email", "name", "created"]
        cases = [
            (
                "GitHub issues, per_page=30 (default)",
                gh_server,
                gh_settings,
                "issues_list_for_repo",
                {"owner": "octocat", "repo": "Hello-World"},
                gh_fields,
                30,
            ),
            (
                "GitHub issues, per_page=100 (largest)",
                gh_server,
                gh_settings,
                "issues_list_for_repo",
                {"owner": "octocat", "repo": "Hello-World", "per_page": 100},
                gh_fields,
                100,
            ),
            ("Stripe customers, limit=10 (default)", st_server, st_settings, "get_customers", {}, st_fields, 10),
            (
                "Stripe customers, limit=100 (largest)",
                st_server,
                st_settings,
                "get_customers",
                {"limit": 100},
                st_fields,
                100,
            ),
        ]
        raw: dict[str, str] = {}
        for label, server, settings, tool, arguments, fields, page in cases:
            (before,) = calls(server, settings, tool, arguments, budget="0")
            after, projected = calls(server, settings, tool, arguments, {**arguments, "fields": fields})
            shown = _shown(after)
            trimmed = (
                f"{shown} of {page} items, the rest by `fields` or a smaller page"
                if shown != str(page)
                else f"all {page}, fits"
            )
            raw[label] = size(text_of(before))
            rows.append(
                f"| {label} | {raw[label]} | {size(text_of(after))} ({trimmed}) | {size(text_of(projected))} (all {page}) |"
            )
        for label, server, settings, tool, arguments, fields, page in (cases[1], cases[3]):
            started = time.monotonic()
            (one,) = calls(server, settings, tool, {**arguments, "fields": fields, "max_items": WANTED})
            elapsed = time.monotonic() - started
            value = one.structured_content or {}
            got = len(value.get("result") or value.get("data") or [])
            collect.append(
                f"| {label.split(',')[0]} | {-(-WANTED // page)} calls of {page} items, {raw[label]} each | "
                f"1 call (`max_items={WANTED}`, `fields`): {got} items, {size(text_of(one))}, {elapsed:.2f} s |"
            )
    unit = "chars/4 (o200k_base tokens)" if tokens else "chars/4"
    report = "\n".join(
        [
            "# Result shaping: tokens per list result, calls for 500 items",
            "",
            "```sh",
            ".venv/bin/python bench/responses_bench.py --out bench/results/responses.md",
            "```",
            "",
            f"Tokens: {unit}. Default result budget: 20,000 tokens (characters / 4). Data: GitHub's issue example",
            "from its spec (about 6.6 KB of JSON per issue) and Stripe's customer object (about 0.6 KB).",
            "",
            "| one call | before: the API's page as text | after: default budget | after: with `fields` |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Collecting {WANTED} of {ITEMS} items (the largest page size):",
            "",
            "| API | before: page by page | after |",
            "|---|---|---|",
            *collect,
            "",
            "GitHub fields: "
            + ", ".join(f"`{f}`" for f in gh_fields)
            + "; Stripe fields: "
            + ", ".join(f"`{f}`" for f in st_fields)
            + ".",
            "",
            "Before, a GitHub page of 30 issues already passes the 25,000-token cut some hosts apply, and the agent",
            "had no sign that more pages exist (the Link header was dropped). After, every page says how to get the",
            "next one, a page that does not fit is cut to whole items with a note, and `fields` with `max_items`",
            "collects 500 items in one call. Counted as characters / 4, compact JSON with short values is",
            "undercounted: o200k_base gives up to about 1.35 times as many tokens (third column, last table).",
            "",
        ]
    )
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    print(report)


def _shown(result: types.CallToolResult) -> str:
    value = result.structured_content or {}
    items = value.get("result") if "result" in value else value.get("data")
    return str(len(items)) if isinstance(items, list) else "?"


if __name__ == "__main__":
    main()
