"""tools/corpus_run.py's work on one spec, in a worker process: generate the package into a temporary folder, start
its server over stdio, list its tools with the official MCP client and check them (corpus_checks.py); the outcome
of each spec."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from corpus_checks import Failure, check_tools

REPO = Path(__file__).resolve().parents[1]
BIG_BYTES = 1_500_000  # above this, openapi-spec-validator is skipped (it takes minutes on GitHub's 13 MB)
SWAGGER2 = "Swagger 2.0 documents are not supported"

OK, WARN, SPEC_ERROR, FAIL, NOT_RUN = "ok", "ok-with-warnings", "spec-error", "FAIL", "not-run"


@dataclass
class Outcome:
    spec: str
    outcome: str = NOT_RUN
    category: str = ""  # FAIL category, or the kind of spec-error
    detail: str = ""
    tools: int = 0
    warnings: int = 0
    errors: int = 0  # error-level problems (operations the spec breaks, skipped)
    problem_kinds: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, Any] = field(default_factory=dict)  # --calls mode
    unbuilt: int = 0  # --own-tests: tools the package's tests found no valid sample arguments for

    @property
    def label(self) -> str:
        return f"FAIL({self.category})" if self.outcome == FAIL else self.outcome


def generate_into(spec: str, out: Path, result: Outcome, validate: bool | None = None, name: str | None = None) -> Any:
    """Generate the package for `spec` into `out`; fills `result`; returns the pipeline Result or None."""
    from codegen.config import Config
    from codegen.pipeline import generate
    from codegen.problems import Level
    from codegen.emit.write import write

    if validate is None:
        validate = os.path.getsize(spec) <= BIG_BYTES
    started = time.perf_counter()
    try:
        generated = generate(Config(spec=spec, output=out, name=name, validate=validate))
    except Exception as exc:
        raise Failure("generator-exception", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-6)}")
    result.seconds["generate"] = round(time.perf_counter() - started, 2)
    problems = generated.problems
    result.warnings = sum(p.level is Level.WARNING for p in problems)
    errors = [p for p in problems if p.level is Level.ERROR]
    result.errors = len(errors)
    result.problem_kinds = dict(Counter(f"{p.level.value}: {problem_kind(p.message)}" for p in problems))
    if not generated.files:
        messages = [p.message for p in errors]
        if any(SWAGGER2 in m for m in messages):
            raise Failure("swagger-2.0-unsupported", messages[0])
        bad = [m for m in messages if m.startswith(("template ", "generated "))]
        if bad:
            raise Failure("render-or-format", bad[0])
        if not messages:
            raise Failure("no-output-without-error", "the generator produced nothing and reported no error")
        result.outcome, result.category = SPEC_ERROR, spec_error_kind(messages)
        result.detail = "; ".join(sorted(set(str(p) for p in errors)))[:500]
        return None
    problems_out = write(out, generated.files, force=True)
    if problems_out:
        raise Failure("write", str(problems_out[0]))
    return generated


def missing_dependencies(pyproject: Path) -> list[str]:
    """The generated package's [project] dependencies that this Python does not satisfy (name or version)."""
    import importlib.metadata
    import tomllib

    from packaging.requirements import Requirement

    missing = []
    for text in tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("dependencies", []):
        requirement = Requirement(text)
        try:
            version = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(text)
            continue
        if not requirement.specifier.contains(version, prereleases=True):
            missing.append(f"{text} (have {version})")
    return missing


def problem_kind(message: str) -> str:
    """A message with its specifics (quoted names, numbers, pointers) removed, for counting kinds."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "…", message)
    text = re.sub(r"#/\S*|\b\d+\b", "…", text)
    return text[:120]


def spec_error_kind(messages: Sequence[str]) -> str:
    joined = " ".join(messages)
    if "not an OpenAPI 3.x document" in joined:
        return "not-openapi"
    if "no operations" in joined:
        return "no-operations"
    if "not a JSON/YAML object" in joined or "cannot" in joined or "parse" in joined.lower():
        return "unreadable"
    return "other"


async def list_over_stdio(out: Path, package: str, timeout: float) -> tuple[list[dict[str, Any]], str]:
    """Start the generated server with this Python over stdio; list every page of tools; return (tools, stderr)."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", package],
        # every tool listed, also from a package whose default is the discovery surface
        env={"PYTHONPATH": str(out / "src"), "PYTHONDONTWRITEBYTECODE": "1", f"{package.upper()}_SURFACE": "tools"},
        cwd=str(out),
    )
    tools: list[dict[str, Any]] = []
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            with anyio.fail_after(timeout):
                async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                    cursor: str | None = None
                    for _ in range(10_000):  # bounded pagination
                        page = await client.list_tools(cursor=cursor)
                        tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
                        cursor = page.next_cursor
                        if cursor is None:
                            break
        except TimeoutError:
            errlog.seek(0)
            raise Failure(
                "server-timeout", f"tools/list did not finish in {timeout:g} s; stderr: {errlog.read()[-800:]}"
            )
        except Exception as exc:
            errlog.seek(0)
            raise Failure("list-failed", f"{type(exc).__name__}: {exc}; stderr: {errlog.read()[-1500:]}")
        errlog.seek(0)
        stderr = errlog.read()
    return tools, stderr


def run_one(spec: str, options: Mapping[str, Any]) -> Outcome:
    import anyio

    result = Outcome(spec=spec)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="corpus-") as tmp:
            out = Path(tmp) / "server"
            generated = generate_into(spec, out, result, validate=options.get("validate"))
            if generated is not None:
                result.tools = len(generated.tools)
                package = generated.project.package
                missing = missing_dependencies(out / "pyproject.toml")
                if missing:
                    raise Failure("runtime-dependency-missing", f"not installed in {sys.executable}: {missing}")
                expected = json.loads((out / "src" / package / "tools.json").read_text(encoding="utf-8"))
                t0 = time.perf_counter()
                listed, stderr = anyio.run(list_over_stdio, out, package, float(options.get("list_timeout", 120)))
                result.seconds["list"] = round(time.perf_counter() - t0, 2)
                if "Traceback (most recent call last)" in stderr:
                    raise Failure("server-traceback", stderr[-1500:])
                failures = check_tools(listed, expected)
                if failures:
                    raise Failure(failures[0].category, "; ".join(f.detail for f in failures[:3])[:1500])
                if options.get("own_tests"):
                    from corpus_own_tests import OwnTestsFailed, run_own_tests  # tools/corpus_own_tests.py

                    t0 = time.perf_counter()
                    try:
                        result.unbuilt = run_own_tests(
                            out, options["own_tests"], float(options.get("list_timeout", 120))
                        )
                    except OwnTestsFailed as exc:
                        raise Failure("own-tests-failed", str(exc)) from None
                    result.seconds["own_tests"] = round(time.perf_counter() - t0, 2)
                if options.get("calls"):
                    from corpus_calls import call_spec  # tools/corpus_calls.py

                    try:
                        result.calls = call_spec(spec, out, package, options)
                    except Exception as exc:  # Prism refusing the document, a hung server: reported, not a listing FAIL
                        kind = f"{type(exc).__name__}: {str(exc).splitlines()[0][:100] if str(exc) else ''}"
                        result.calls = {
                            "counts": {"calls-crashed": 1},
                            "crashes": {kind: 1},
                            "samples": {kind: traceback.format_exc(limit=-3)[-1500:]},
                        }
                result.outcome = WARN if (result.warnings or result.errors) else OK
    except Failure as exc:
        result.outcome, result.category, result.detail = FAIL, exc.category, exc.detail
    except Exception as exc:  # the runner's own checks must not take the run down
        result.outcome, result.category = FAIL, "runner-exception"
        result.detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-4)}"
    result.seconds["total"] = round(time.perf_counter() - started, 2)
    return result
