"""Cut one operation out of a large OpenAPI document, with every component it references (transitively).

Shared by the Prism tests of result shaping (tests/test_responses_prism.py) and the result benchmark
(bench/responses_bench.py): Prism starts in seconds on such a cut-out, and a benchmark can serve just one list.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MAX_NODES = 2_000_000  # nodes walked at most (a document's size bounds it anyway)


def named_spec(name: str) -> Path:
    """The corpus file of a named spec (tools/list-specs --named), the corpus installed first if needed."""
    subprocess.run([str(ROOT / "tools" / "fetch-corpus")], check=True, capture_output=True, timeout=600)
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "list-specs"), "--named", "--tsv"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    return Path(dict(line.split("\t")[:2] for line in out.splitlines() if "\t" in line)[name])


def cut_out(document: dict[str, Any], path: str, method: str = "get") -> dict[str, Any]:
    """`path`'s `method` operation (its 200 response only) and the components it references; no security."""
    operation = dict(document["paths"][path][method])
    operation["responses"] = {"200": operation["responses"]["200"]}
    operation.pop("security", None)
    out: dict[str, Any] = {
        "openapi": document["openapi"],
        "info": document["info"],
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {path: {method: operation}},
        "components": {},
    }
    todo: list[Any] = [operation]
    seen: set[str] = set()
    for _ in range(MAX_NODES):
        if not todo:
            break
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
    """GitHub's `issues/list-for-repo` (its Link header declared, with an example)."""
    document = json.loads(named_spec("github").read_text(encoding="utf-8"))
    return cut_out(document, "/repos/{owner}/{repo}/issues")


def stripe_customers() -> dict[str, Any]:
    """Stripe's `GetCustomers`; the customer schema keeps its members that reference nothing (Prism does not
    start on Stripe's whole schema graph)."""
    document = json.loads(named_spec("stripe").read_text(encoding="utf-8"))
    customer = document["components"]["schemas"]["customer"]
    scalar = {k: v for k, v in customer["properties"].items() if "$ref" not in json.dumps(v)}
    small = {k: v for k, v in customer.items() if k not in ("properties", "required", "x-expandableFields")}
    small.update(properties=scalar, required=[r for r in customer["required"] if r in scalar])
    document = {**document, "components": {**document["components"], "schemas": {"customer": small}}}
    return cut_out(document, "/v1/customers")
