"""`mcp-codegen ci`: generate (or check) every configured server, report what changes for agents, and tell CI.

For each server: run the pipeline; `check` mode compares with the committed folder (stale fails the job),
`generate` mode writes it. The tool-surface report compares the package at the base (the pull request's base
commit, the commit before a push, `base-ref`, else the working tree before writing) with the new tools. The
report goes to stdout, to the job summary, and on pull requests to one comment found again by a hidden marker.
Outputs: stale, breaking, tools-added, tools-removed, tools-changed, and report (the path of a Markdown file with
the report, e.g. for a pull request's body). Exit codes: 0 done, 1 stale (check mode) or nothing generated,
2 bad inputs or configuration, or a warning under --strict.
"""

from __future__ import annotations

import re
import secrets
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..pipeline import generate
from ..problems import Level, Problem, error, sort_key
from ..emit.files import as_text
from ..emit.render import slug
from ..surface.report import SurfaceReport, build_report
from ..emit.write import check, remote_spec_change, write
from .base import read_base, resolve
from .github import MAX_COMMENT, ApiFailure, GitHub
from .inputs import MARKER, CiInputs, GitHubContext

Echo = Callable[[str], None]


@dataclass(frozen=True)
class ServerRun:
    out: str
    report: SurfaceReport | None
    stale: bool
    exit_code: int


def run(inputs: CiInputs, context: GitHubContext, configs: Sequence[Config], cwd: Path, log: Echo) -> int:
    base_ref = inputs.base_ref or context.base_sha
    commit = resolve(base_ref, cwd) if base_ref else None
    notes = []
    if base_ref and commit is None:
        notes.append(f"Base `{base_ref}` is not in this clone (use `fetch-depth: 0`); compared with the working tree.")
    label = (base_ref or "")[:12] if re.fullmatch(r"[0-9a-f]{40}", base_ref or "") else (base_ref or "")
    runs = [_one(config, inputs, commit, label, cwd, log, notes) for config in configs]
    marker = f"{MARKER} {_marker_id([r.out for r in runs])} -->"
    body = _compose(marker, runs, inputs.mode, context)
    token = context.token
    if token:
        body = body.replace(token, "***")
    _print_report(body, context, log)
    if context.step_summary is not None:
        _append(context.step_summary, body + "\n", log)
    report_file = Path(context.runner_temp or tempfile.gettempdir()) / "mcp-codegen-report.md"
    report_file.unlink(missing_ok=True)
    _append(report_file, body + "\n", log)
    outputs = {**_outputs(runs), "report": str(report_file)}
    if context.output is not None:
        _append(context.output, "".join(f"{key}={value}\n" for key, value in outputs.items()), log)
    log("outputs: " + ", ".join(f"{key}={value}" for key, value in outputs.items()))
    if inputs.comment:
        _comment(context, marker, body, log)
    return max((r.exit_code for r in runs), default=0)


def _one(
    config: Config, inputs: CiInputs, commit: str | None, label: str, cwd: Path, log: Echo, notes: list[str]
) -> ServerRun:
    log(f"… {config.spec}: generating")
    result = generate(config)
    problems = sorted(result.problems, key=lambda p: (p.level is not Level.ERROR, *sort_key(p)))
    warnings = [p for p in problems if p.level is Level.WARNING]
    for problem in problems:
        log(str(problem) if not config.strict else str(error(problem.message, problem.pointer, problem.source)))
    out_path = config.output or Path(slug(result.api.title if result.api else "server"))
    out = _shown(out_path, cwd)
    if config.strict and warnings:
        log(f"error: {config.spec}: --strict: {len(warnings)} warnings are errors")
        return ServerRun(out, None, False, 2)
    if not result.files or result.project is None:
        log(f"error: {config.spec}: nothing was generated")
        return ServerRun(out, None, False, 1)
    base = read_base(out_path, commit, label[:60], cwd)
    report = check(out_path, result.files)
    tools_file = f"src/{result.project.package}/tools.json"
    if inputs.mode == "generate":
        failures = write(out_path, result.files, config.force)
        for failure in failures:
            log(str(failure))
        if failures:
            return ServerRun(out, None, report.stale, 1)
        status = (
            f"🔄 Regenerated `{out}/`: {len(report.added)} files added, {len(report.changed)} changed, "
            f"{len(report.removed)} removed."
            if report.stale
            else f"✅ `{out}/` was already up to date."
        )
    elif report.stale:
        remote = remote_spec_change(out_path, result.files)
        status = (
            f"❌ `--check`: `{out}/` is stale ({len(report.added)} files to add, {len(report.changed)} changed, "
            f"{len(report.removed)} to remove): regenerate it (`mcp-codegen ci --mode generate`) and commit."
            + (f" {remote[0].upper()}{remote[1:]}." if remote else "")
        )
    else:
        status = f"✅ `--check`: `{out}/` is up to date."
    log(status)
    surface = build_report(
        base.tools,
        result.tools,
        title=f"MCP tool surface of `{out}/`",
        check=status,
        notes=(*notes, base.note),
        old_text=base.text,
        new_text=as_text(result.files[tools_file]) if tools_file in result.files else None,
    )
    code = 1 if inputs.mode == "check" and report.stale else 0
    return ServerRun(out, surface, report.stale, code)


def _shown(path: Path, cwd: Path) -> str:
    try:
        return path.resolve().relative_to(cwd.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _marker_id(outs: Sequence[str]) -> str:
    return re.sub(r"[^A-Za-z0-9._/,-]", "_", ",".join(sorted(outs)))[:200]


def _compose(marker: str, runs: Sequence[ServerRun], mode: str, context: GitHubContext, limit: int = 0) -> str:
    """The comment/summary body; reports shrink (fewer items per section) until the body fits a comment."""
    for items in (100, 30, 10, 3):
        parts = [marker]
        for server in runs:
            if server.report is None:
                parts.append(f"## MCP tool surface of `{server.out}/`\n\n❌ Generation failed: see the job log.\n")
            else:
                parts.append(server.report.to_markdown(max_items=items))
        parts.append(f"<sub>mcp-codegen ci · mode `{mode}`{_run_link(context)}</sub>\n")
        body = "\n".join(parts)
        if len(body) <= (limit or MAX_COMMENT):
            return body
    return body[: (limit or MAX_COMMENT) - 200] + "\n\n… (cut: the full report is in the job summary)\n"


def _run_link(context: GitHubContext) -> str:
    return f" · `{context.repository}`" if context.repository else ""


def _outputs(runs: Sequence[ServerRun]) -> dict[str, str]:
    totals = {"tools-added": 0, "tools-removed": 0, "tools-changed": 0}
    breaking = False
    for server in runs:
        if server.report is not None:
            values = server.report.outputs()
            breaking = breaking or values["breaking"] == "true"
            for key in totals:
                totals[key] += int(values[key])
    return {
        "stale": "true" if any(r.stale for r in runs) else "false",
        "breaking": "true" if breaking else "false",
        **{key: str(value) for key, value in totals.items()},
    }


def _append(path: Path, text: str, log: Echo) -> None:
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        log(f"warning: cannot write {path}: {exc.strerror}")


def _print_report(body: str, context: GitHubContext, log: Echo) -> None:
    """On GitHub, between stop-commands markers: nothing in a spec can become a workflow command."""
    if context.actions:
        token = secrets.token_hex(16)
        sys.stdout.write(f"::stop-commands::{token}\n{body}\n::{token}::\n")
    else:
        sys.stdout.write(body + "\n")
    sys.stdout.flush()


def annotate(context: GitHubContext, level: str, message: str, log: Echo) -> None:
    """One warning or notice: a workflow annotation on GitHub, a plain line elsewhere."""
    if context.actions:
        data = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        sys.stdout.write(f"::{level} title=mcp-codegen::{data}\n")
        sys.stdout.flush()
    else:
        log(f"{level}: {message}")


def _comment(context: GitHubContext, marker: str, body: str, log: Echo) -> None:
    number = context.pr_number
    if number is None:
        event = context.event_name or "a local run"
        annotate(context, "notice", f"not a pull request ({event}): the tool-surface report is in the job summary", log)
        return
    if context.event_name == "pull_request" and context.from_fork:
        annotate(
            context,
            "warning",
            f"pull request #{number} comes from a fork, whose workflows get a read-only token: no comment was "
            "posted; the tool-surface report is in the job summary. (Commenting on fork pull requests needs a "
            "separate workflow on `pull_request_target` or `workflow_run` with `pull-requests: write`.)",
            log,
        )
        return
    if not context.token or not context.repository:
        annotate(
            context,
            "warning",
            "no GITHUB_TOKEN (or GITHUB_REPOSITORY): no comment was posted; pass `github-token` "
            "(default `${{ github.token }}`). The tool-surface report is in the job summary.",
            log,
        )
        return
    client = GitHub(context.api_url, context.repository, context.token)
    outcome = client.upsert_comment(number, marker, body)
    if isinstance(outcome, ApiFailure):
        annotate(context, "warning", _failure_text(number, outcome), log)
        return
    log(f"comment on pull request #{number}: {outcome}")


def _failure_text(number: int, failure: ApiFailure) -> str:
    if failure.status in (401, 403, 404):
        return (
            f"could not comment on pull request #{number} ({failure.message}): the workflow's token needs "
            "`pull-requests: write`; add to the job `permissions: {contents: read, pull-requests: write}`. "
            "The tool-surface report is in the job summary."
        )
    return f"could not comment on pull request #{number} ({failure.message}); the report is in the job summary."


def flags_from_args(args: Sequence[str]) -> tuple[dict[str, Any], tuple[str, ...], list[Problem]]:
    """Extra `generate` flags (the Action's `args`), parsed by the generate command's own definitions."""
    import typer  # typer ships its own copy of click: its classes are reached through the objects, by duck typing

    from ..cli import app

    allowed = {
        "name": "name",
        "base_url": "base_url",
        "timeout": "timeout",
        "deprecated": "deprecated",
        "unmatched": "unmatched",
        "templates": "templates",
        "validate": "validate",
        "output_depth": "output_depth",
        "input_budget": "input_budget",
        "compact": "compact",
        "overlays": "overlays",
        "strict": "strict",
        "force": "force",
    }
    command = getattr(typer.main.get_command(app), "commands", {}).get("generate")
    if command is None or not args:
        return {}, (), []
    try:
        ctx = command.make_context("generate", ["SPEC", *args])
    except Exception as exc:  # click's UsageError / BadParameter: the message says what is wrong
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return {}, (), [error(f"args: {message}")]
    flags: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, value in ctx.params.items():
        source = ctx.get_parameter_source(key)
        if getattr(source, "name", "") != "COMMANDLINE" or key in ("spec", "rules"):
            continue
        if key not in allowed:
            flag = next((p.opts[-1] for p in command.params if p.name == key and p.opts), key)
            problems.append(error(f"args: {flag} is set by the ci command itself (an input or flag of its own)"))
            continue
        flags[allowed[key]] = tuple(value) if isinstance(value, list) else value
    return flags, tuple(ctx.params.get("rules") or ()), problems
