#!/usr/bin/env python3
"""Audit the operation -> tool mapping on real specs: invariants between each spec and the tools made of it.

Nothing here is part of the generator: it runs `codegen.pipeline.analyze` and checks what came out against the spec,
re-reading the spec on its own (parameters merged from path item and operation, bodies, responses). Findings that a
documented rule explains (Accept/Content-Type/Authorization headers, fixed values, readOnly/writeOnly, budgets,
renamed arguments) are not reported.

Run it with the worktree's venv, from the repository root:
  .venv/bin/python tools/audit_mapping.py SPEC [SPEC ...]
  tools/list-specs --named | .venv/bin/python tools/audit_mapping.py -
  tools/list-specs --set directory --sample 300 --seed audit | .venv/bin/python tools/audit_mapping.py - --jobs 2
  .venv/bin/python tools/audit_mapping.py SPEC --client gemini     # the tools as a client profile reshapes them
Set AUDIT_CODEGEN_ROOT to a checkout (e.g. an older commit's worktree) to audit that code instead of this one's.
Each spec runs in its own process (skipped after --timeout seconds). Prints one line per finding
(CHECK <tab> spec <tab> tool <tab> detail) and a count per check at the end; --json writes the findings as JSON lines.
Exit status 1 when anything was found or a spec was skipped (tests/test_corpus.py runs it on CI's sample).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(os.environ.get("AUDIT_CODEGEN_ROOT") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

from audit_operations import RESULT_ARGS, OperationChecks  # noqa: E402

TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
ARG_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
HINTS = {  # method -> (readOnlyHint, destructiveHint, idempotentHint), surface/annotations.py
    "GET": (True, False, True),
    "HEAD": (True, False, True),
    "OPTIONS": (True, False, True),
    "TRACE": (True, False, True),
    "PUT": (False, True, True),
    "DELETE": (False, True, True),
    "POST": (False, None, False),  # destructive when its name says so
    "PATCH": (False, False, False),
}


class Audit(OperationChecks):
    """The checks for one spec; `found` collects (check, tool, detail). The schema checks are in
    audit_schemas.py, those of parameters, bodies and outputs in audit_operations.py."""

    def __init__(self, path: str, clients: tuple[str, ...] = ("portable",)) -> None:
        self.path = path
        self.clients = clients
        self.found: list[tuple[str, str, str]] = []
        self.checked: Counter[str] = (
            Counter()
        )  # how many times each kind of check ran (a check that never runs finds nothing)

    def report(self, check: str, tool: str, detail: str) -> None:
        self.found.append((check, tool, detail))

    def run(self) -> None:
        from codegen.config import Config
        from codegen.pipeline import analyze
        from codegen.spec.load import open_documents
        from codegen.spec.refs import Resolver
        from codegen.spec.upgrade import is_swagger2, upgrade
        from codegen.surface import schemas

        converters: list[Any] = []
        original_init = schemas.SchemaConverter.__init__

        def hooked(self_: Any, *args: Any, **kwargs: Any) -> None:
            original_init(self_, *args, **kwargs)
            converters.append(self_)

        schemas.SchemaConverter.__init__ = hooked  # type: ignore[method-assign]
        try:
            api, tools, problems = analyze(Config(spec=self.path, validate=False, clients=self.clients))
        finally:
            schemas.SchemaConverter.__init__ = original_init  # type: ignore[method-assign]
        if api is None:
            return
        documents, _ = open_documents(self.path)
        assert documents is not None
        swagger2 = is_swagger2(documents.root)
        raw2 = documents.root if swagger2 else None
        if swagger2:
            documents, _, _ = upgrade(documents)
        self.resolver = Resolver(documents)
        self.doc = documents.root
        self.warnings = [p.message for p in problems]
        self.named: dict[str, Any] = {}
        for converter in converters:
            self.check_names(converter)
            self.named.update(converter._named)
        names = Counter(t.name for t in tools)
        for name, count in names.items():
            if count > 1:
                self.report("TOOL_NAME_DUP", name, f"{count} tools")
        for tool in tools:
            try:
                self.check_tool(tool, raw2)
            except Exception as exc:  # a checker bug must not hide the other tools
                self.report("CHECKER_ERROR", tool.name, f"{type(exc).__name__}: {exc}")

    # -- $defs names --------------------------------------------------------------------------------
    def check_names(self, converter: Any) -> None:
        by_name: dict[str, list[Any]] = {}
        for ref, name in converter._names.items():
            by_name.setdefault(name, []).append(ref)
        for name, refs in by_name.items():
            if len(refs) > 1:
                self.report("DEF_NAME_SHARED", name, ", ".join(f"{r.uri.rsplit('/', 1)[-1]}#{r.pointer}" for r in refs))
            elif converter._named.get(name) != refs[0]:
                self.report("DEF_NAME_REVERSE", name, f"{refs[0].pointer} vs {converter._named.get(name)}")

    # -- one tool -----------------------------------------------------------------------------------
    def check_tool(self, tool: Any, raw2: Any) -> None:
        name = tool.name
        op = tool.operation
        if not TOOL_NAME.match(name):
            self.report("TOOL_NAME_RULE", name, name)
        schema = tool.input_schema
        props = schema.get("properties", {})
        required = schema.get("required", [])
        for key in props:
            if not ARG_NAME.match(key):
                self.report("ARG_NAME_RULE", name, key)
        for key in required:
            if key not in props:
                self.report("REQUIRED_NOT_ARG", name, key)
        if len(set(required)) != len(required):
            self.report("REQUIRED_DUP", name, str(required))
        self.check_refs(name, "input", schema)
        self.check_required(name, "input", schema, tool)
        self.check_definitions(name, "input", schema)
        for output in (tool.output_schema, tool.described_output):
            if output is not None:
                self.check_refs(name, "output", output)
                self.check_required(name, "output", output, tool)
                self.check_definitions(name, "output", output)
        plan = tool.plan
        keys = [a.arg for a in plan.args] + ([plan.body.arg] if plan.body and plan.body.arg else [])
        for key, count in Counter(keys).items():
            if count > 1:
                self.report("PLAN_ARG_DUP", name, key)
        for key in keys:
            if key not in props:
                self.report("PLAN_ARG_NOT_IN_SCHEMA", name, key)
        wires = Counter((a.name, a.location) for a in plan.args)
        for wire, count in wires.items():
            if count > 1:
                self.report("PLAN_WIRE_DUP", name, str(wire))
        unplanned = set(props) - set(keys) - RESULT_ARGS
        for key in sorted(unplanned):
            self.report("ARG_NOT_PLANNED", name, key)
        results = plan.results
        if results is not None:  # the arguments next pages, projection and auto-pagination use are the tool's
            pages = results.pages
            used = [results.fields, results.max_items, results.max_pages]
            if pages is not None:
                used += [pages.param, pages.size] + [arg for _, arg, _ in pages.query]
            for key in used:
                if key is not None and key not in props:
                    self.report("RESULT_PLAN_KEY", name, key)
        if plan.method != op.method or plan.path != op.path:
            self.report("PLAN_ROUTE", name, f"{plan.method} {plan.path} vs {op.method} {op.path}")
        self.check_annotations(tool)
        item = self.doc.get("paths", {}).get(op.path)
        item, item_at = self.resolver.resolve(item, self.resolver.root.child("paths", op.path))
        raw_op = item.get(op.method.lower()) if isinstance(item, dict) else None
        if not isinstance(raw_op, dict):
            self.report("NO_SPEC_OPERATION", name, f"{op.method} {op.path}")
            return
        self.check_parameters(tool, item, raw_op, item_at)
        self.check_body(tool, raw_op, item_at.child(op.method.lower()))
        self.check_output(tool, raw_op, item_at.child(op.method.lower()))
        if raw2 is not None:
            self.check_swagger2(tool, raw2)

    def check_annotations(self, tool: Any) -> None:
        if any(k == "x-mcp-annotations" for k, _ in tool.operation.extensions):
            return
        hints = HINTS.get(tool.plan.method)
        if hints is None:
            return
        got = (tool.annotations.get("readOnlyHint"), tool.annotations.get("destructiveHint"))
        got += (tool.annotations.get("idempotentHint"),)
        for label, want, have in zip(("readOnly", "destructive", "idempotent"), hints, got):
            if want is not None and want != have:
                self.report("ANNOTATION", tool.name, f"{tool.plan.method}: {label}Hint {have}")


def audit_one(path: str, clients: tuple[str, ...]) -> int:
    audit = Audit(path, clients)
    audit.run()
    for check, tool, detail in audit.found:
        print(json.dumps({"check": check, "spec": path, "tool": tool, "detail": detail}))
    print(json.dumps({"checked": audit.checked}))
    return 0


def _path_of(line: str) -> str:
    """The path in a line of tools/list-specs output (plain, --named or --tsv)."""
    fields = line.split("\t")
    return next((f for f in fields if f.startswith("/")), fields[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("specs", nargs="*", help="spec paths; - reads them from stdin (first column)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", help="write the findings here as JSON lines")
    parser.add_argument("--client", action="append", help="client profiles to generate for (default: portable)")
    args = parser.parse_args()
    clients = tuple(args.client or ["portable"])
    if args.one:
        return audit_one(args.one, clients)
    specs: list[str] = []
    for spec in args.specs:
        specs += [_path_of(line) for line in sys.stdin.read().splitlines() if line.strip()] if spec == "-" else [spec]

    def run(spec: str) -> tuple[str, str, list[dict[str, Any]]]:
        try:
            done = subprocess.run(
                [sys.executable, __file__, "--one", spec, *(f"--client={c}" for c in clients)],
                capture_output=True,
                text=True,
                timeout=args.timeout,
            )
        except subprocess.TimeoutExpired:
            return spec, "timeout", []
        if done.returncode != 0:
            return spec, "crash: " + done.stderr.strip().splitlines()[-1:][0] if done.stderr.strip() else "crash", []
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        for line in lines:
            checked.update(line.get("checked", {}))
        return spec, "ok", [line for line in lines if "check" in line]

    counts: Counter[str] = Counter()
    checked: Counter[str] = Counter()
    skipped = 0
    specs_per_check: dict[str, set[str]] = {}
    out = open(args.json, "w") if args.json else None
    with ThreadPoolExecutor(args.jobs) as pool:
        for spec, status, found in pool.map(run, specs):
            if status != "ok":
                skipped += 1
                print(f"SKIPPED\t{spec}\t{status}", flush=True)
            for f in found:
                counts[f["check"]] += 1
                specs_per_check.setdefault(f["check"], set()).add(spec)
                print(
                    f"{f['check']}\t{os.path.relpath(spec, os.path.expanduser('~/.cache/mcp-codegen-corpus'))}\t{f['tool']}\t{f['detail']}",
                    flush=True,
                )
                if out:
                    out.write(json.dumps(f) + "\n")
    if out:
        out.close()
    print(f"# {len(specs)} specs; checks run: {dict(checked)}")
    for check, count in counts.most_common():
        print(f"# {check}: {count} findings in {len(specs_per_check[check])} specs")
    return 1 if counts or skipped else 0


if __name__ == "__main__":
    sys.exit(main())
