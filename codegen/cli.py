"""The command line: parse flags, build the Config, run the pipeline, print problems, set the exit code.

Exit codes: 0 generated (or up to date with --check), 1 nothing usable / stale / write failed,
2 usage error.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from typer.core import TyperGroup

from . import __version__
from .clients import client_setup, format_snippets
from .config import Config
from .configfile import build_config
from .diff import diff_tools, tool_summary
from .pipeline import Result, analyze, generate
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


CONFIG_HELP = "Config file: a pyproject.toml (\\[tool.mcp-codegen]) or a mcp-codegen.toml. Default: mcp-codegen.toml next to the spec, else ./pyproject.toml if it has \\[tool.mcp-codegen]."


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
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", min=0.001, help="The generated server's default request timeout in seconds. Default: 30."
        ),
    ] = None,
    rules: Annotated[
        list[str] | None,
        typer.Option(
            "--rule",
            help="Include/exclude rule, repeatable, tried in order before the config file's rules (first match wins): "
            "'exclude tag=admin', 'include path=/pets/* method=GET,POST', 'exclude op=delete*'.",
        ),
    ] = None,
    deprecated: Annotated[
        bool | None,
        typer.Option("--deprecated/--no-deprecated", help="Serve deprecated operations as tools. Default: yes."),
    ] = None,
    unmatched: Annotated[
        Literal["include", "exclude"] | None,
        typer.Option(
            "--unmatched",
            help="What happens to an operation no rule matches. Default: include.",
        ),
    ] = None,
    config_file: Annotated[Path | None, typer.Option("--config", help=CONFIG_HELP, dir_okay=False)] = None,
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
    validate: Annotated[
        bool | None,
        typer.Option(
            "--validate/--no-validate",
            help="Run openapi-spec-validator (warnings only). Default: on up to 400 operations.",
        ),
    ] = None,
    output_depth: Annotated[
        int | None,
        typer.Option(
            "--output-depth",
            min=-1,
            help="$ref levels kept in output schemas; deeper ones are loosened to their type (-1: keep all). "
            "Default: 0.",
        ),
    ] = None,
    input_budget: Annotated[
        int | None,
        typer.Option(
            "--input-budget",
            min=0,
            help="Characters of $ref definitions an input schema keeps whole; beyond, deeper levels are "
            "loosened to their type (0: no limit). Default: 64000.",
        ),
    ] = None,
    compact: Annotated[
        bool | None,
        typer.Option(
            "--compact/--no-compact",
            help="Smallest tools/list: no output schemas, short tool descriptions, no link URLs. Default: off.",
        ),
    ] = None,
    surface: Annotated[
        Literal["tools", "discovery", "auto"] | None,
        typer.Option(
            "--surface",
            help="tools: one tool per operation; discovery: search_tools, describe_tool, call_tool, "
            "call_read_only_tool (the server can switch with --surface); auto: tools when the API has at most "
            "40 tools and a tools/list of at most 20k tokens, else discovery. Default: auto.",
        ),
    ] = None,
    pins: Annotated[
        list[str] | None,
        typer.Option(
            "--pin",
            help="Discovery surface: also list these tools directly (glob on tool name, operationId or "
            "'METHOD /path'; repeatable; the spec's x-mcp-pin: true does the same).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print errors only.")] = False,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Print every warning and the time of each stage.")
    ] = False,
) -> None:
    """Generate an MCP server package from an OpenAPI document.

    Every operation becomes a tool. Problems in the spec are printed with a JSON pointer to where they
    are; an operation that cannot be used is skipped, and the rest is still generated.
    """
    flags = {
        "output": output,
        "name": name,
        "force": force or None,
        "check": check_only or None,
        "templates": templates,
        "base_url": base_url,
        "validate": validate,
        "timeout": timeout,
        "deprecated": deprecated,
        "unmatched": unmatched,
        "output_depth": output_depth,
        "input_budget": input_budget,
        "compact": compact,
        "surface": surface,
        "pin": tuple(pins) if pins else None,
    }
    config = _config(spec, flags, tuple(rules or ()), config_file)
    started = time.monotonic()

    def progress(stage: str) -> None:
        if not quiet:
            suffix = f" [{time.monotonic() - started:.1f}s]" if verbose else ""
            typer.echo(f"… {stage}{suffix}", err=True)

    if config.config_file is not None and not quiet:
        typer.echo(f"… settings from {config.config_file}", err=True)
    result = generate(config, progress)
    _print_problems(result.problems, quiet=quiet, verbose=verbose)
    if not result.files or result.project is None:
        typer.echo("error: nothing was generated", err=True)
        raise typer.Exit(1)
    out = config.output or Path(slug(result.api.title if result.api else result.project.dist))
    if config.check:
        report = check(out, result.files)
        typer.echo(f"{out}: {report.summary()}", err=report.stale)
        tools_file = f"src/{result.project.package}/tools.json"
        if tools_file in report.changed:
            typer.echo(tool_summary(out / tools_file, result.files[tools_file]), err=True)
        if report.stale:
            typer.echo(
                f"{out} is stale: regenerate it (the same command without --check) and commit the result", err=True
            )
        raise typer.Exit(1 if report.stale else 0)
    failures = write(out, result.files, config.force)
    if failures:
        _print_problems(failures, quiet=quiet, verbose=True)
        raise typer.Exit(1)
    if not quiet:
        _print_done(result, out, config)


def _config(spec: str, flags: dict[str, Any], rules: tuple[str, ...], explicit: Path | None) -> Config:
    """The one Config (flags > config file > defaults); a config problem ends the run with exit code 2."""
    config, problems = build_config(spec, flags, rules, explicit)
    if config is None:
        _print_problems(problems, quiet=False, verbose=True)
        typer.echo("error: fix the configuration (exit code 2)", err=True)
        raise typer.Exit(2)
    return config


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


def _print_done(result: Result, out: Path, config: Config) -> None:
    errors = sum(p.level is Level.ERROR for p in result.problems)
    warnings = len(result.problems) - errors
    assert result.project is not None
    skipped = f", {errors} skipped" if has_errors(result.problems) else ""
    typer.echo(
        f"generated {len(result.tools)} tools{skipped} into {out}/ ({warnings} warnings)\n"
        f"  surface: {result.surface.name}: tools/list has {result.surface.listed} tools, "
        f"{result.surface.tokens:,} tokens (cl100k)\n"
        f"  install: pip install {out if out.is_absolute() else f'./{out}'}\n"
        f"  run:     {result.project.dist}   (stdio; --transport http for streamable HTTP)\n"
        f"  docker:  docker build -t {result.project.dist} {out}  (serves HTTP on port 8000)\n",
        err=True,
    )
    base_url = config.base_url or (result.api.servers[0] if result.api and result.api.servers else None)
    typer.echo("Client setup (also in the generated README.md):\n", err=True)
    typer.echo(format_snippets(client_setup(result.project, base_url)))


@app.command("diff")
def diff_command(
    old: Annotated[str, typer.Argument(help="The old OpenAPI document (path or URL).")],
    new: Annotated[str, typer.Argument(help="The new OpenAPI document (path or URL).")],
    output_format: Annotated[
        Literal["text", "markdown", "json"],
        typer.Option("--format", help="text (terminal), markdown (a PR comment) or json (machines)."),
    ] = "text",
    fail: Annotated[
        bool, typer.Option("--fail/--no-fail", help="Exit 1 when a change is breaking. Default: yes.")
    ] = True,
    rules: Annotated[list[str] | None, typer.Option("--rule", help="Include/exclude rule, as for generate.")] = None,
    deprecated: Annotated[bool | None, typer.Option("--deprecated/--no-deprecated", help="As for generate.")] = None,
    config_file: Annotated[
        Path | None, typer.Option("--config", help=CONFIG_HELP + " Found next to NEW.", dir_okay=False)
    ] = None,
) -> None:
    """Report how the tools change from OLD to NEW: added, removed, renamed tools; arguments added,
    removed, retyped, enum values removed; annotations and output shape changed.

    Both specs go through the generator with the same settings (rules, overrides), so this is the change
    in what a generated server would serve. Exit codes: 0 no breaking change (or --no-fail), 1 breaking
    changes, 2 a spec could not be read or the configuration is invalid.
    """
    config = _config(new, {"deprecated": deprecated, "validate": False}, tuple(rules or ()), config_file)
    surfaces = []
    for spec in (old, new):
        api, tools, problems = analyze(replace(config, spec=spec))
        # a side with no tools left (all excluded, or none) is an empty surface, not a failure
        errors = [p for p in problems if p.level is Level.ERROR and p.pointer != "/paths"]
        if api is None:
            _print_problems(errors, quiet=True, verbose=True)
            typer.echo(f"error: cannot read the tools of {spec}", err=True)
            raise typer.Exit(2)
        if errors:
            typer.echo(f"note: {spec}: {len(errors)} operations skipped (run generate on it to see why)", err=True)
        surfaces.append(tools)
    report = diff_tools(surfaces[0], surfaces[1])
    if output_format == "json":
        typer.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    elif output_format == "markdown":
        typer.echo(report.to_markdown(), nl=False)
    else:
        typer.echo(report.to_text(), nl=False)
    raise typer.Exit(1 if fail and report.breaking else 0)


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
