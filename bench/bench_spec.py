"""What the benchmark calls, and what it counts of a listing: a spec's GET operations that need no argument (to
match with each server's tools), and the cl100k tokens of a tools array."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def load_spec(path: str) -> dict[str, Any]:
    text = Path(path).read_text(encoding="utf-8")
    if path.endswith((".yaml", ".yml")):
        import yaml  # optional

        return yaml.safe_load(text)
    return json.loads(text)


def _deref(spec: dict[str, Any], obj: Any) -> Any:
    for _ in range(20):
        if not (isinstance(obj, dict) and isinstance(obj.get("$ref"), str) and obj["$ref"].startswith("#/")):
            return obj
        cur: Any = spec
        for part in obj["$ref"][2:].split("/"):
            cur = cur.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(cur, dict) else {}
        obj = cur
    return obj


def simple_get_operations(spec: dict[str, Any]) -> list[str]:
    """operationIds of GETs with no required parameters/body, JSON-returning ones first, in spec order."""
    json_ops: list[str] = []
    other_ops: list[str] = []
    for path, item in (spec.get("paths") or {}).items():
        item = _deref(spec, item)
        op = item.get("get") if isinstance(item, dict) else None
        if not isinstance(op, dict) or not op.get("operationId") or "{" in path:
            continue
        params = [_deref(spec, p) for p in [*(item.get("parameters") or []), *(op.get("parameters") or [])]]
        if any(isinstance(p, dict) and (p.get("required") or p.get("in") == "path") for p in params):
            continue
        if _deref(spec, op.get("requestBody") or {}).get("required"):
            continue
        ok = [_deref(spec, r) for c, r in (op.get("responses") or {}).items() if str(c).startswith("2")]
        is_json = any("json" in ct for r in ok if isinstance(r, dict) for ct in (r.get("content") or {}))
        (json_ops if is_json else other_ops).append(op["operationId"])
    return json_ops + other_ops


def comparable(name: str) -> str:
    """An operationId or tool name as they are compared: lower-case letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def no_required(tool: Any) -> bool:
    """A tool (the SDK's) that can be called without arguments."""
    schema = tool.input_schema or {}
    return not schema.get("required")


def count_tokens(tools: list[Any]) -> int | None:
    """cl100k_base tokens of the tools array as compact JSON (bpe-openai; None when it is not installed).

    The tokenizer takes at most 1,000,000 characters per call, so a longer list is counted in chunks of
    whole tools, split between `}` and `,{` (a boundary costs at most a token or two of difference)."""
    try:
        import bpe_openai
    except ImportError:
        return None
    encoding = bpe_openai.get_encoding("cl100k_base")
    parts = [json.dumps(t, separators=(",", ":"), ensure_ascii=False) for t in tools]
    total, chunk, size = 0, [], 0
    for part in parts + [None]:
        if part is None or (chunk and size + len(part) > 900_000):
            text = ",".join(chunk)
            total += len(encoding.encode_ordinary(("[" if total == 0 else ",") + text + ("]" if part is None else "")))
            chunk, size = [], 0
        if part is not None:
            if len(part) > 900_000:
                return None
            chunk.append(part)
            size += len(part) + 1
    return total
