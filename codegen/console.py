"""What the command line prints on stderr: stage names as the pipeline reaches them, problems (errors first, a
bounded number of warnings), --strict's stop, --check's report on a generated folder, and the summary after
generating (surface, install and run commands, client setup snippets)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import typer

from .config import Config
from .emit.clients import client_setup, format_snippets
from .emit.escape import safe_url
from .emit.variables import environment_summary
from .emit.write import check, remote_spec_change
from .pipeline import Result
from .problems import Level, Problem, has_errors, sort_key
from .surface.profiles.check import check_file, summarize

MAX_WARNINGS = 30  # printed without --verbose


def progress_printer(quiet: bool, verbose: bool) -> Callable[[str], None]:
    """Stage names on stderr as the pipeline reaches them (with -v, the time since the start)."""
    started = time.monotonic()

    def progress(stage: str) -> None:
        if not quiet:
            suffix = f" [{time.monotonic() - started:.1f}s]" if verbose else ""
            typer.echo(f"… {stage}{suffix}", err=True)

    return progress


def check_folder(out: Path, result: Result, clients: tuple[str, ...]) -> int:
    """--check: compare the folder with what would be generated, and its tools.json with the named clients'
    rules; the exit code (1: stale or breaking a client's rules)."""
    assert result.project is not None
    report = check(out, result.files)
    typer.echo(f"{out}: {report.summary()}", err=report.stale)
    tools_file = f"src/{result.project.package}/tools.json"
    if tools_file in report.changed:
        from .surface.diff import tool_summary

        typer.echo(tool_summary(out / tools_file, result.files[tools_file]), err=True)
    remote = remote_spec_change(out, result.files) if report.stale else None
    if remote:
        typer.echo(remote, err=True)
    if report.stale:
        typer.echo(f"{out} is stale: regenerate it (the same command without --check) and commit the result", err=True)
    violations = check_file(out / tools_file, clients, result.project.dist)
    print_problems([v.problem() for v in violations], quiet=False, verbose=False)
    if violations:
        counts = ", ".join(f"{client} {count}" for client, count in summarize(violations).items())
        typer.echo(f"{out}/{tools_file} breaks the rules of: {counts} (docs/clients.md)", err=True)
    return 1 if report.stale or violations else 0


def strict_stop(config: Config, problems: Any) -> None:
    """--strict: any warning stops the run with exit code 2, after listing every problem as an error."""
    warnings = sum(p.level is Level.WARNING for p in problems)
    if config.strict and warnings:
        print_problems([replace(p, level=Level.ERROR) for p in problems], quiet=False, verbose=True)
        typer.echo(f"error: --strict: {warnings} warnings are errors (exit code 2)", err=True)
        raise typer.Exit(2)


def print_problems(problems: Any, *, quiet: bool, verbose: bool) -> None:
    """Errors first, then warnings (at most MAX_WARNINGS without --verbose), in spec order. A problem met more
    than once at the same place (a shared parameter or schema, found again by each operation that uses it) is
    printed once, with its count."""
    counts = Counter[Problem](problems)
    ordered: list[Problem] = sorted(counts, key=lambda p: (p.level is not Level.ERROR, *sort_key(p)))
    warnings = 0
    for problem in ordered:
        if problem.level is Level.WARNING:
            if quiet:
                continue
            warnings += 1
            if warnings > MAX_WARNINGS and not verbose:
                continue
        times = counts[problem]
        typer.echo(f"{problem} (×{times:,})" if times > 1 else str(problem), err=True)
    if warnings > MAX_WARNINGS and not verbose:
        typer.echo(f"... and {warnings - MAX_WARNINGS:,} more warnings (use --verbose to see all)", err=True)


def print_done(result: Result, out: Path, config: Config) -> None:
    errors = sum(p.level is Level.ERROR for p in result.problems)
    warnings = len(result.problems) - errors
    distinct = len({p for p in result.problems if p.level is Level.WARNING})
    warned = f"{warnings:,} warnings" + (f", {distinct:,} distinct" if distinct < warnings else "")
    assert result.project is not None
    skipped = f", {errors} skipped" if has_errors(result.problems) else ""
    typer.echo(
        f"generated {len(result.tools)} tools{skipped} into {out}/ ({warned})\n"
        f"  surface: {result.surface.name}: tools/list has {result.surface.listed} tools, "
        f"{result.surface.tokens:,} tokens (cl100k)\n"
        f"  install: pip install {out if out.is_absolute() else f'./{out}'}\n"
        f"  run:     {result.project.dist}   (stdio; --transport http for streamable HTTP)\n"
        f"  docker:  docker build -t {result.project.dist} {out}  (serves HTTP on port 8000)\n",
        err=True,
    )
    typer.echo(environment_summary(result), err=True)
    base_url = config.base_url or (safe_url(result.api.servers[0]) if result.api and result.api.servers else None)
    typer.echo("Client setup (also in the generated README.md):\n", err=True)
    typer.echo(format_snippets(client_setup(result.project, base_url)))
