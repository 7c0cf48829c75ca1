"""Calls against a Prism mock: does the generated server send requests that the spec accepts?

`call_spec(spec, out, package, options)` (used by `tools/corpus-run --calls`) starts Prism on the spec, puts a small
recording proxy between the generated server and Prism, starts the server over stdio with its base URL pointing at
the proxy, and for each tool (the first `max_tools` by name) calls it with up to `examples` argument sets built
deterministically from its inputSchema (`build_arguments`). Every request that reaches Prism is classified from
Prism's answer:

- accepted: Prism routed it and found nothing wrong with it (any 2xx/3xx, or a mocked 4xx/5xx the spec declares);
- rejected: Prism's own request errors — 422/400 UNPROCESSABLE_ENTITY (validation: path/query/header/body), 404
  NO_PATH_MATCHED_ERROR, 405 NO_METHOD_MATCHED_ERROR, 406 NOT_ACCEPTABLE, 415 INVALID_CONTENT_TYPE; the category is
  Prism's error type plus, for validation errors, where and what (e.g. `422 query: must match pattern`);
- security: Prism's 401/403 for a security requirement it found unmet, counted apart. The generated server is given
  no credentials; instead the proxy adds dummy ones for every security scheme the spec declares (`credentials`),
  because Prism answers 401 before it validates the rest of the request;
- unrelated: Prism's own 500s (no response or example defined, example generation failed), counted apart;
- unroutable: Prism's 404/405 for a tool whose path key carries a fragment or a query (`/#X-Amz-Target=S.Op`,
  `/#Action=List`, `/rest?method=x`), counted apart. Prism matches a request's path against the path keys literally,
  and no client sends a fragment, so no correct request can reach these operations in Prism; what the generated server
  sends instead (the key's path, the fixed parameter values, the key's query) is checked exactly against a recording
  upstream in tests/test_requests_e2e.py (fixtures/pathkeys.yaml).

Tools for which no valid argument set can be built (the builder's result fails the inputSchema) are counted as
`no-arguments`; a call the server refuses before sending anything is `not-sent`. A call that raises in the MCP client
(the client checks structuredContent against the tool's outputSchema, so a mocked example that breaks the spec's own
response schema raises there) is counted under `client_errors` by message; its request is still classified.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from example_arguments import NoExample, build_arguments, valid
from server_env import server_environment as upstream_environment

REPO = Path(__file__).resolve().parents[1]
PRISM_ERRORS = "https://stoplight.io/prism/errors#"
REJECTING = {
    "UNPROCESSABLE_ENTITY",
    "NO_PATH_MATCHED_ERROR",
    "NO_METHOD_MATCHED_ERROR",
    "NOT_ACCEPTABLE",
    "INVALID_CONTENT_TYPE",
}
SECURITY = {"UNAUTHORIZED", "FORBIDDEN"}
UNROUTABLE = "Prism cannot route this spec's path keys"  # keys with `#...` or `?...`: see the module docstring


# -- recording proxy ------------------------------------------------------------------------------------------
class Recorder:
    """A reverse proxy on 127.0.0.1 that forwards to `upstream` and records (method, path, status, Prism error)."""

    def __init__(self, upstream: str, inject: list[tuple[str, str, str]] = []) -> None:
        import httpx
        from urllib.parse import urlencode

        self.records: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        client = httpx.Client(base_url=upstream, timeout=60)
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = [(k, v) for k, v in self.headers.items() if k.lower() not in ("host", "content-length")]
                present = {k.lower() for k, _ in headers}
                path = self.path
                for where, name, value in inject:
                    if where == "header" and name.lower() not in present:
                        headers.append((name, value))
                    elif where == "query" and f"{name}=" not in path:
                        path += ("&" if "?" in path else "?") + urlencode({name: value})
                    elif where == "cookie":
                        headers.append(("Cookie", f"{name}={value}"))
                try:
                    response = client.request(self.command, path, headers=headers, content=body)
                    status, content, ctype = (
                        response.status_code,
                        response.content,
                        response.headers.get("content-type", ""),
                    )
                except Exception as exc:
                    status, content, ctype = 599, str(exc).encode(), "text/plain"
                error: dict[str, Any] = {}
                if "problem+json" in ctype or status >= 400:
                    try:
                        data = json.loads(content)
                        if isinstance(data, dict) and str(data.get("type", "")).startswith(PRISM_ERRORS):
                            error = data
                    except ValueError:
                        pass
                with recorder.lock:
                    recorder.records.append(
                        {"method": self.command, "path": self.path, "status": status, "error": error}
                    )
                self.send_response(status)
                self.send_header("Content-Type", ctype or "application/octet-stream")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_TRACE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Recorder:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def classify(record: Mapping[str, Any], path_key: str = "") -> tuple[str, str]:
    """(accepted | rejected | security | unrelated | unroutable, category) for one recorded Prism answer;
    `path_key`: the path key of the tool's operation, as in routes.json."""
    error = record.get("error") or {}
    status = record["status"]
    if not error:
        return ("unrelated", f"{status} proxy error") if status == 599 else ("accepted", "")
    kind = str(error.get("type", ""))[len(PRISM_ERRORS) :]
    if kind in ("NO_PATH_MATCHED_ERROR", "NO_METHOD_MATCHED_ERROR") and ("#" in path_key or "?" in path_key):
        return "unroutable", f"{status} {UNROUTABLE} ({'fragment' if '#' in path_key else 'query'} in the key)"
    if kind in SECURITY:
        return "security", f"{status} {kind}"
    if kind in REJECTING:
        details = error.get("validation") or []
        if details:
            first = details[0]
            where = "/".join(str(p) for p in first.get("location", [])[:1]) or "?"
            message = re.sub(r"'[^']*'|\"[^\"]*\"|\b\d+\b", "…", str(first.get("message", "")))[:80]
            return "rejected", f"{status} {where}: {message}"
        return "rejected", f"{status} {kind}"
    return "unrelated", f"{status} {kind}"


def credentials(spec: str) -> list[tuple[str, str, str]]:
    """Dummy credentials for the spec's security schemes: (header|query|cookie, name, value)."""
    import yaml

    text = Path(spec).read_text(encoding="utf-8")
    doc = json.loads(text) if spec.endswith(".json") else yaml.safe_load(text)
    if not isinstance(doc, dict):
        return []
    schemes = doc.get("securityDefinitions") or (doc.get("components") or {}).get("securitySchemes") or {}
    found: list[tuple[str, str, str]] = []
    authorization = ""
    for scheme in schemes.values() if isinstance(schemes, dict) else []:
        if not isinstance(scheme, dict):
            continue
        kind = str(scheme.get("type", "")).lower()
        if kind == "apikey" and scheme.get("in") in ("header", "query", "cookie") and scheme.get("name"):
            found.append((scheme["in"], str(scheme["name"]), "dummy-key"))
        elif (kind == "http" and str(scheme.get("scheme", "")).lower() == "basic") or kind == "basic":
            authorization = authorization or "Basic dXNlcjpwYXNz"
        elif kind in ("http", "oauth2", "openidconnect"):
            authorization = authorization or "Bearer dummy-token"
    if authorization:
        found.append(("header", "Authorization", authorization))
    return found


# -- one spec -------------------------------------------------------------------------------------------------
def server_environment(out: Path, package: str, base_url: str) -> dict[str, str]:
    """What the generated server is started with: its source folder, base URL and dummy credentials."""
    env = {"PYTHONPATH": str(out / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    return env | upstream_environment(out / "src", package, base_url, dummy="corpus-credential")


def call_spec(spec: str, out: Path, package: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Call the generated server's tools against Prism; returns counts, rejection categories and examples."""
    import anyio

    sys.path.insert(0, str(REPO / "tests"))
    from support.prism import prism_server

    tools = json.loads((out / "src" / package / "tools.json").read_text(encoding="utf-8"))
    tools = sorted(tools, key=lambda t: t["name"])[: int(options.get("max_tools", 60))]
    routes = json.loads((out / "src" / package / "routes.json").read_text(encoding="utf-8"))
    path_keys = {name: str(route.get("path", "")) for name, route in routes.items()}
    with prism_server(spec, timeout=120) as prism_url, Recorder(prism_url, credentials(spec)) as recorder:
        return anyio.run(_call_all, out, package, recorder, tools, int(options.get("examples", 2)), path_keys)


async def _call_all(
    out: Path,
    package: str,
    recorder: Recorder,
    tools: list[dict[str, Any]],
    examples: int,
    path_keys: Mapping[str, str] = {},
) -> dict[str, Any]:
    import anyio
    from mcp import Client, StdioServerParameters

    counts: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    unrelated: Counter[str] = Counter()
    client_errors: Counter[str] = Counter()  # the call raised in the MCP client (after the request was classified)
    samples: dict[str, str] = {}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", package],
        env=server_environment(out, package, recorder.url),
        cwd=str(out),
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        from mcp.client.stdio import stdio_client

        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            for tool in tools:
                sets: list[dict[str, Any]] = []
                for full in (True, False)[:examples]:
                    try:
                        args = build_arguments(tool.get("inputSchema", {}), full)
                    except (NoExample, KeyError, TypeError, RecursionError):
                        continue
                    if valid(tool.get("inputSchema", {}), args) and args not in sets:
                        sets.append(args)
                if not sets:
                    counts["no-arguments"] += 1
                    continue
                for args in sets:
                    before = len(recorder.records)
                    result = None
                    try:
                        with anyio.fail_after(90):
                            result = await client.call_tool(tool["name"], args)
                    except Exception as exc:  # e.g. the client's check of structuredContent against outputSchema
                        kind = re.sub(r"'[^']*'|\"[^\"]*\"|\b\d+\b", "…", str(exc).splitlines()[0] if str(exc) else "")
                        kind = type(exc).__name__ + ": " + re.sub(r"tool \S+:", "tool …:", kind)[:90]
                        client_errors[kind] += 1
                        samples.setdefault(kind, f"{tool['name']} {str(exc)[:300]}")
                    with recorder.lock:
                        new = recorder.records[before:]
                    if not new and result is not None:
                        counts["not-sent"] += 1
                        text = result.content[0].text if result.content and hasattr(result.content[0], "text") else ""
                        samples.setdefault(f"not-sent: {text[:60]}", f"{tool['name']} {json.dumps(args)[:200]}")
                        continue
                    for record in new:
                        outcome, category = classify(record, path_keys.get(tool["name"], ""))
                        counts[outcome] += 1
                        if outcome == "rejected":
                            categories[category] += 1
                            samples.setdefault(
                                category,
                                f"{tool['name']} {record['method']} {record['path'][:200]}"
                                f" {json.dumps(record['error'].get('validation', record['error'].get('detail', '')))[:300]}",
                            )
                        elif outcome in ("unrelated", "unroutable"):
                            unrelated[category] += 1
        errlog.seek(0)
        stderr = errlog.read()
    if "Traceback (most recent call last)" in stderr:
        counts["server-traceback"] += 1
        samples.setdefault("server-traceback", stderr[-1500:])
    return {
        "counts": dict(counts),
        "rejections": dict(categories),
        "unrelated": dict(unrelated),
        "client_errors": dict(client_errors),
        "samples": samples,
    }
