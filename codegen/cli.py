"""The command line: parse flags, build the Config, run the pipeline, print problems, set the exit code.

Exit codes: 0 generated (or up to date with --check), 1 nothing usable / stale / write failed,
2 usage error.

No `from __future__ import annotations` here: typer reads the commands' annotations on every run, and as strings
it would compile each one again (~0.02 s of each generation).
"""

import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from collections.abc import Callable
from typing import Annotated, Any, Literal

import typer
from typer.core import TyperCommand, TyperGroup

from . import __version__, options
from .emit.clients import client_setup, format_snippets
from .emit.variables import environment_summary
from .config import Config
from .configfile import build_config, found_notice
from .options import CONFIG_HELP, OVERLAY_HELP, STRICT_HELP
from .surface.profiles.check import check_file, summarize
from .surface.results import pagination_lines
from .emit.escape import safe_url
from .pipeline import Result, analyze, generate
from .problems import Level, Problem, has_errors, sort_key
from .emit.render import describe_templates, slug
from .emit.write import check, remote_spec_change, write

MAX_WARNINGS = 30  # printed without --verbose


class _DefaultToGenerate(TyperGroup):
    """`mcp-codegen SPEC ...` is short for `mcp-codegen generate SPEC ...`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["generate", *args]
        options.defer_coercion(self.get_params(ctx))
        return super().parse_args(ctx, args)


class _Command(TyperCommand):
    """A command whose options build typer's converters only for values that need them (options.defer_coercion)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        options.defer_coercion(self.get_params(ctx))
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


@app.command("generate", cls=_Command)
def generate_command(
    spec: options.Spec,
    output: options.Output = None,
    name: options.Name = None,
    base_url: options.BaseUrl = None,
    timeout: options.Timeout = None,
    rules: options.Rules = None,
    deprecated: options.Deprecated = None,
    unmatched: options.Unmatched = None,
    config_file: options.ConfigFile = None,
    check_only: options.CheckOnly = False,
    force: options.Force = False,
    templates: options.Templates = None,
    validate: options.Validate = None,
    output_depth: options.OutputDepth = None,
    input_budget: options.InputBudget = None,
    compact: options.Compact = None,
    ref_root: options.RefRoot = None,
    allow_remote_refs: options.AllowRemoteRefs = False,
    max_spec_mb: options.MaxSpecMb = None,
    overlays: options.Overlays = None,
    strict: options.Strict = None,
    clients: options.Clients = None,
    surface: options.Surface = None,
    pins: options.Pins = None,
    quiet: options.Quiet = False,
    verbose: options.Verbose = False,
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
        "ref_root": ref_root,
        "allow_remote_refs": allow_remote_refs or None,
        "max_spec_mb": max_spec_mb,
        "overlays": tuple(overlays) if overlays else None,
        "strict": strict,
        "clients": tuple(clients) if clients else None,
        "surface": surface,
        "pin": tuple(pins) if pins else None,
    }
    config = _config(spec, flags, tuple(rules or ()), config_file)
    notice = found_notice(config, config_file)
    if notice is not None:  # also with --quiet: settings the user did not name, maybe templates (code)
        typer.echo(notice, err=True)
    elif config.config_file is not None and not quiet:
        typer.echo(f"… settings from {config.config_file}", err=True)
    result = generate(config, _progress(quiet, verbose))
    _strict(config, result.problems)
    _print_problems(result.problems, quiet=quiet, verbose=verbose)
    if verbose and not quiet:
        for line in pagination_lines(result.tools):
            typer.echo(line, err=True)
    if not result.files or result.project is None:
        typer.echo("error: nothing was generated", err=True)
        raise typer.Exit(1)
    out = config.output or Path(slug(result.api.title if result.api else result.project.dist))
    if config.check:
        raise typer.Exit(_check(out, result, config.clients))
    failures = write(out, result.files, config.force)
    if failures:
        _print_problems(failures, quiet=quiet, verbose=True)
        raise typer.Exit(1)
    if not quiet:
        _print_done(result, out, config)


def _progress(quiet: bool, verbose: bool) -> Callable[[str], None]:
    """Stage names on stderr as the pipeline reaches them (with -v, the time since the start)."""
    started = time.monotonic()

    def progress(stage: str) -> None:
        if not quiet:
            suffix = f" [{time.monotonic() - started:.1f}s]" if verbose else ""
            typer.echo(f"… {stage}{suffix}", err=True)

    return progress


def _check(out: Path, result: Result, clients: tuple[str, ...]) -> int:
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
    _print_problems([v.problem() for v in violations], quiet=False, verbose=False)
    if violations:
        counts = ", ".join(f"{client} {count}" for client, count in summarize(violations).items())
        typer.echo(f"{out}/{tools_file} breaks the rules of: {counts} (docs/clients.md)", err=True)
    return 1 if report.stale or violations else 0


def _config(spec: str, flags: dict[str, Any], rules: tuple[str, ...], explicit: Path | None) -> Config:
    """The one Config (flags > config file > defaults); a config problem ends the run with exit code 2."""
    config, problems = build_config(spec, flags, rules, explicit)
    if config is None:
        _print_problems(problems, quiet=False, verbose=True)
        typer.echo("error: fix the configuration (exit code 2)", err=True)
        raise typer.Exit(2)
    return config


def _strict(config: Config, problems: Any) -> None:
    """--strict: any warning stops the run with exit code 2, after listing every problem as an error."""
    warnings = sum(p.level is Level.WARNING for p in problems)
    if config.strict and warnings:
        _print_problems([replace(p, level=Level.ERROR) for p in problems], quiet=False, verbose=True)
        typer.echo(f"error: --strict: {warnings} warnings are errors (exit code 2)", err=True)
        raise typer.Exit(2)


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
    typer.echo(environment_summary(result), err=True)
    base_url = config.base_url or (safe_url(result.api.servers[0]) if result.api and result.api.servers else None)
    typer.echo("Client setup (also in the generated README.md):\n", err=True)
    typer.echo(format_snippets(client_setup(result.project, base_url)))


@app.command("diff", cls=_Command)
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
    overlays: Annotated[
        list[str] | None, typer.Option("--overlay", help=OVERLAY_HELP + " Both specs get them.")
    ] = None,
    strict: Annotated[bool | None, typer.Option("--strict/--no-strict", help=STRICT_HELP)] = None,
    ref_root: options.RefRoot = None,
    allow_remote_refs: options.AllowRemoteRefs = False,
    max_spec_mb: options.MaxSpecMb = None,
) -> None:
    """Report how the tools change from OLD to NEW: added, removed, renamed tools; arguments added,
    removed, retyped, enum values removed; annotations and output shape changed.

    Both specs go through the generator with the same settings (rules, overrides), so this is the change
    in what a generated server would serve. Exit codes: 0 no breaking change (or --no-fail), 1 breaking
    changes, 2 a spec could not be read or the configuration is invalid.
    """
    flags = {
        "deprecated": deprecated,
        "validate": False,
        "overlays": tuple(overlays) if overlays else None,
        "ref_root": ref_root,
        "allow_remote_refs": allow_remote_refs or None,
        "max_spec_mb": max_spec_mb,
    }
    config = _config(new, {**flags, "strict": strict}, tuple(rules or ()), config_file)
    notice = found_notice(config, config_file)
    if notice is not None:
        typer.echo(notice, err=True)
    surfaces = []
    for spec in (old, new):
        api, tools, problems = analyze(replace(config, spec=spec))
        _strict(config, problems)
        # a side with no tools left (all excluded, or none) is an empty surface, not a failure
        errors = [p for p in problems if p.level is Level.ERROR and p.pointer != "/paths"]
        if api is None:
            _print_problems(errors, quiet=True, verbose=True)
            typer.echo(f"error: cannot read the tools of {spec}", err=True)
            raise typer.Exit(2)
        if errors:
            typer.echo(f"note: {spec}: {len(errors)} operations skipped (run generate on it to see why)", err=True)
        surfaces.append(tools)
    from .surface.diff import diff_tools  # only this command uses them: not imported by every run
    from .surface.report import build_report

    report = diff_tools(surfaces[0], surfaces[1])
    if output_format == "json":
        typer.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    elif output_format == "markdown":
        typer.echo(build_report(surfaces[0], surfaces[1]).to_markdown(), nl=False)
    else:
        typer.echo(report.to_text(), nl=False)
    raise typer.Exit(1 if fail and report.breaking else 0)


@app.command("ci", cls=_Command)
def ci_command(
    spec: Annotated[
        str | None,
        typer.Option(
            "--spec",
            help="OpenAPI document (path or URL). Default: input `spec`, else the config file's `spec` / [[servers]].",
        ),
    ] = None,
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="The generated package's folder (input `output`).")
    ] = None,
    config_file: Annotated[str | None, typer.Option("--config", help="Config file (input `config`).")] = None,
    overlays: Annotated[
        list[str] | None, typer.Option("--overlay", help="Overlay file, repeatable (input `overlays`).")
    ] = None,
    args: Annotated[
        str | None,
        typer.Option(
            "--args", help="Extra generate flags, one string (input `args`): '--compact --rule \"exclude tag=admin\"'."
        ),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option("--mode", help="check (default: fail when the package is stale) or generate (write it)."),
    ] = None,
    base_ref: Annotated[
        str | None,
        typer.Option(
            "--base-ref",
            help="Compare the tool surface with the package at this commit. Default: the pull request's base.",
        ),
    ] = None,
    comment: Annotated[
        bool | None,
        typer.Option("--comment/--no-comment", help="Comment the report on the pull request. Default: yes."),
    ] = None,
) -> None:
    """Generate or check in CI, and report the tool-surface change (job summary, pull-request comment, outputs).

    Reads the GitHub Action's inputs from INPUT_<NAME> variables and the run from GITHUB_* variables; flags win.
    See docs/ci.md. Exit codes: 0 done, 1 stale (check mode) or nothing generated, 2 bad inputs or --strict.
    """
    import os

    from .ci.command import main as ci_main

    flags: dict[str, Any] = {"spec": spec, "output": output, "config": config_file, "args": args, "mode": mode}
    flags |= {"overlays": tuple(overlays or ()), "base_ref": base_ref, "comment": comment}
    raise typer.Exit(ci_main(flags, dict(os.environ), Path.cwd()))


@app.command("templates", cls=_Command)
def templates_command() -> None:
    """List the built-in templates (override any by file name with --templates DIR)."""
    for template, target in describe_templates().items():
        typer.echo(f"{template:28} -> {target}")


def main() -> None:
    """The `mcp-codegen` command. Its process ends as soon as the command is done: what it wrote is flushed and
    closed, nothing runs after it (no thread, no exit handler), and the heap a large API built is left for the
    system to reclaim rather than freed object by object (GitHub ~0.25 s, Microsoft Graph seconds)."""
    try:
        app()
        code = 0
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        code = 130
    except SystemExit as exc:
        code = _exit_code(exc.code)
    _end(code)


def _exit_code(code: object) -> int:
    """The status `sys.exit(code)` would end with (a message is written to stderr, as Python writes it)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


def _end(code: int) -> None:
    """Exit with `code` once stdout and stderr are flushed; a flush that fails (a closed pipe) is a failure."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # what Python exits with when it cannot flush its standard streams
    os._exit(code)
