"""The command line: parse flags, build the Config, run the pipeline, print problems, set the exit code.

Exit codes: 0 generated (or up to date with --check), 1 nothing usable / stale / write failed,
2 usage error.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from . import __version__
from .config import Config
from .pipeline import Result, generate
from .problems import Level, Problem, has_errors, sort_key
from .render import describe_templates, slug
from .write import check, write

MAX_WARNINGS = 30  # printed without --verbose


class _DefaultToGenerate(TyperGroup):
    """`mcp-codegen SPEC ...` is short for `mcp-codegen generate SPEC ...`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["generate", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_DefaultToGenerate,
    add_completion=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=(
        "Generate a typed Python MCP server package from an OpenAPI document "
        "(Swagger 2.0, OpenAPI 3.0 or 3.1; YAML or JSON; file or URL).\n\n"
        "  mcp-codegen openapi.yaml -o myserver      (short for: mcp-codegen generate ...)"
    ),
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mcp-codegen {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Generate MCP servers from OpenAPI documents."""


@app.command("generate")
def generate_command(
    spec: Annotated[str, typer.Argument(help="OpenAPI document: a file path or an http(s) URL, YAML or JSON.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", help="Folder to write the package into. Default: a folder named after the API title."
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="Distribution and console-script name (its import package has '-' as '_'). Default: the output folder's name.",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", help="Default upstream base URL for the server. Default: the spec's first server URL."
        ),
    ] = None,
    check_only: Annotated[
        bool,
        typer.Option(
            "--check", help="Write nothing; exit 1 and show a diff if the folder is not what would be generated."
        ),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Write into a non-empty folder that mcp-codegen did not generate.")
    ] = False,
    templates: Annotated[
        Path | None,
        typer.Option(
            "--templates",
            help="Folder of Jinja templates that override the built-in ones by file name (list them with: mcp-codegen templates).",
            exists=True,
            file_okay=False,
        ),
    ] = None,
    no_validate: Annotated[
        bool, typer.Option("--no-validate", help="Skip openapi-spec-validator (faster on very large specs).")
    ] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print errors only.")] = False,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Print every warning and the time of each stage.")
    ] = False,
) -> None:
    """Generate an MCP server package from an OpenAPI document.

    Every operation becomes a tool. Problems in the spec are printed with a JSON pointer to where they
    are; an operation that cannot be used is skipped, and the rest is still generated.
    """
    config = Config(
        spec=spec,
        output=output,
        name=name,
        force=force,
        check=check_only,
        templates=templates,
        base_url=base_url,
        validate=not no_validate,
    )
    started = time.monotonic()

    def progress(stage: str) -> None:
        if not quiet:
            suffix = f" [{time.monotonic() - started:.1f}s]" if verbose else ""
            typer.echo(f"… {stage}{suffix}", err=True)

    result = generate(config, progress)
    _print_problems(result.problems, quiet=quiet, verbose=verbose)
    if not result.files or result.project is None:
        typer.echo("error: nothing was generated", err=True)
        raise typer.Exit(1)
    out = config.output or Path(slug(result.api.title if result.api else result.project.dist))
    if config.check:
        report = check(out, result.files)
        typer.echo(f"{out}: {report.summary()}", err=report.stale)
        raise typer.Exit(1 if report.stale else 0)
    failures = write(out, result.files, config.force)
    if failures:
        _print_problems(failures, quiet=quiet, verbose=True)
        raise typer.Exit(1)
    if not quiet:
        _print_done(result, out)


def _print_problems(problems: Any, *, quiet: bool, verbose: bool) -> None:
    ordered: list[Problem] = sorted(problems, key=lambda p: (p.level is not Level.ERROR, *sort_key(p)))
    warnings = 0
    for problem in ordered:
        if problem.level is Level.WARNING:
            if quiet:
                continue
            warnings += 1
            if warnings > MAX_WARNINGS and not verbose:
                continue
        typer.echo(str(problem), err=True)
    if warnings > MAX_WARNINGS and not verbose:
        typer.echo(f"... and {warnings - MAX_WARNINGS} more warnings (use --verbose to see all)", err=True)


def _print_done(result: Result, out: Path) -> None:
    errors = sum(p.level is Level.ERROR for p in result.problems)
    warnings = len(result.problems) - errors
    assert result.project is not None
    skipped = f", {errors} skipped" if has_errors(result.problems) else ""
    typer.echo(
        f"generated {len(result.tools)} tools{skipped} into {out}/ ({warnings} warnings)\n"
        f"  install: pip install {out if out.is_absolute() else f'./{out}'}\n"
        f"  run:     {result.project.dist}   (stdio; --transport http for streamable HTTP)",
        err=True,
    )


@app.command("templates")
def templates_command() -> None:
    """List the built-in templates (override any by file name with --templates DIR)."""
    for template, target in describe_templates().items():
        typer.echo(f"{template:28} -> {target}")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
