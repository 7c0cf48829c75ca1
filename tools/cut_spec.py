"""Cut one operation out of a large OpenAPI document, with every component it references (transitively).

Shared by the Prism tests of result shaping (tests/test_responses_prism.py) and the result benchmark
(bench/responses_bench.py): Prism starts in seconds on such a cut-out, and a benchmark can serve just one list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from named_specs import named_spec  # tools/named_specs.py

MAX_NODES = 2_000_000  # nodes walked at most (a document's size bounds it anyway)


def named_document(name: str) -> dict[str, Any]:
    """A named spec of the corpus (tools/list-specs --named), parsed; the corpus installed first if needed."""
    document: dict[str, Any] = json.loads(Path(named_spec(name, install=True)).read_text(encoding="utf-8"))
    return document


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
    document = named_document("github")
    return cut_out(document, "/repos/{owner}/{repo}/issues")


def stripe_customers() -> dict[str, Any]:
    """Stripe's `GetCustomers`; the customer schema keeps its members that reference nothing (Prism does not
    start on Stripe's whole schema graph)."""
    document = named_document("stripe")
    customer = document["components"]["schemas"]["customer"]
    scalar = {k: v for k, v in customer["properties"].items() if "$ref" not in json.dumps(v)}
    small = {k: v for k, v in customer.items() if k not in ("properties", "required", "x-expandableFields")}
    small.update(properties=scalar, required=[r for r in customer["required"] if r in scalar])
    document = {**document, "components": {**document["components"], "schemas": {"customer": small}}}
    return cut_out(document, "/v1/customers")
