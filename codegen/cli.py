"""The command line: parse flags, build the Config, run the pipeline, print problems, set the exit code.

Exit codes: 0 generated (or up to date with --check), 1 nothing usable / stale / write failed,
2 usage error.

No `from __future__ import annotations` here: typer reads the commands' annotations on every run, and as strings
it would compile each one again (~0.02 s of each generation).
"""

import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from typer.core import TyperCommand, TyperGroup

from . import __version__, forked, options
from .config import Config
from .configfile import build_config, found_notice
from .options import CONFIG_HELP, OVERLAY_HELP, STRICT_HELP
from .surface.results import pagination_lines
from .console import check_folder, print_done, print_problems, progress_printer, strict_stop
from .pipeline import analyze, generate
from .problems import Level
from .emit.render import describe_templates, slug
from .emit.write import write


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
    result = generate(config, progress_printer(quiet, verbose))
    strict_stop(config, result.problems)
    print_problems(result.problems, quiet=quiet, verbose=verbose)
    if verbose and not quiet:
        for line in pagination_lines(result.tools):
            typer.echo(line, err=True)
    if not result.files or result.project is None:
        typer.echo("error: nothing was generated", err=True)
        raise typer.Exit(1)
    out = config.output or Path(slug(result.api.title if result.api else result.project.dist))
    if config.check:
        raise typer.Exit(check_folder(out, result, config.clients))
    failures = write(out, result.files, config.force)
    if failures:
        print_problems(failures, quiet=quiet, verbose=True)
        raise typer.Exit(1)
    if not quiet:
        print_done(result, out, config)


def _config(spec: str, flags: dict[str, Any], rules: tuple[str, ...], explicit: Path | None) -> Config:
    """The one Config (flags > config file > defaults); a config problem ends the run with exit code 2."""
    config, problems = build_config(spec, flags, rules, explicit)
    if config is None:
        print_problems(problems, quiet=False, verbose=True)
        typer.echo("error: fix the configuration (exit code 2)", err=True)
        raise typer.Exit(2)
    return config


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
        strict_stop(config, problems)
        # a side with no tools left (all excluded, or none) is an empty surface, not a failure
        errors = [p for p in problems if p.level is Level.ERROR and p.pointer != "/paths"]
        if api is None:
            print_problems(errors, quiet=True, verbose=True)
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
    """Exit with `code` once stdout and stderr are flushed (a flush that fails, a closed pipe, is a failure) and the
    helper processes have exited (forked.reap)."""
    forked.reap()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # what Python exits with when it cannot flush its standard streams
    os._exit(code)
