"""The options of `mcp-codegen generate`, declared once: type, flag names, help text.

The command (cli.py) only collects their values into the flags that `configfile.build_config` merges with
the config file into the one Config.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typer

CONFIG_HELP = "Config file: a pyproject.toml (\\[tool.mcp-codegen]) or a mcp-codegen.toml. Default: mcp-codegen.toml next to the spec, else ./pyproject.toml if it has \\[tool.mcp-codegen]."
OVERLAY_HELP = "OpenAPI Overlay (1.0/1.1) file or URL, repeatable, applied in order after the config file's `overlays`."
STRICT_HELP = "Every warning is an error: list them all and exit 2. Default: off (config key `strict`)."

Spec = Annotated[str, typer.Argument(help="OpenAPI document: a file path or an http(s) URL, YAML or JSON.")]
Output = Annotated[
    Path | None,
    typer.Option(
        "-o", "--output", help="Folder to write the package into. Default: a folder named after the API title."
    ),
]
Name = Annotated[
    str | None,
    typer.Option(
        "--name",
        help="Distribution and console-script name (its import package has '-' as '_'). Default: the output folder's name.",
    ),
]
BaseUrl = Annotated[
    str | None,
    typer.Option("--base-url", help="Default upstream base URL for the server. Default: the spec's first server URL."),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.001,
        help="The generated server's default timeout per call in seconds (connect, send, the whole answer,"
        " retries and their waits). Default: 30.",
    ),
]
Rules = Annotated[
    list[str] | None,
    typer.Option(
        "--rule",
        help="Include/exclude rule, repeatable, tried in order before the config file's rules (first match wins): "
        "'exclude tag=admin', 'include path=/pets/* method=GET,POST', 'exclude op=delete*'.",
    ),
]
Deprecated = Annotated[
    bool | None,
    typer.Option("--deprecated/--no-deprecated", help="Serve deprecated operations as tools. Default: yes."),
]
Unmatched = Annotated[
    Literal["include", "exclude"] | None,
    typer.Option(
        "--unmatched",
        help="What happens to an operation no rule matches. Default: include.",
    ),
]
ConfigFile = Annotated[Path | None, typer.Option("--config", help=CONFIG_HELP, dir_okay=False)]
CheckOnly = Annotated[
    bool,
    typer.Option("--check", help="Write nothing; exit 1 and show a diff if the folder is not what would be generated."),
]
Force = Annotated[
    bool, typer.Option("--force", help="Write into a non-empty folder that mcp-codegen did not generate.")
]
Templates = Annotated[
    Path | None,
    typer.Option(
        "--templates",
        help="Folder of Jinja templates that override the built-in ones by file name (list them with: mcp-codegen templates).",
        exists=True,
        file_okay=False,
    ),
]
Validate = Annotated[
    bool | None,
    typer.Option(
        "--validate/--no-validate",
        help="Run openapi-spec-validator (warnings only). Default: on up to 400 operations.",
    ),
]
OutputDepth = Annotated[
    int | None,
    typer.Option(
        "--output-depth",
        min=-1,
        help="$ref levels kept in output schemas; deeper ones are loosened to their type (-1: keep all). "
        "Default: 0.",
    ),
]
InputBudget = Annotated[
    int | None,
    typer.Option(
        "--input-budget",
        min=0,
        help="Characters of $ref definitions an input schema keeps whole; beyond, deeper levels are "
        "loosened to their type (0: no limit). Default: 64000.",
    ),
]
Compact = Annotated[
    bool | None,
    typer.Option(
        "--compact/--no-compact",
        help="Smallest tools/list: no output schemas, short tool descriptions. Default: off.",
    ),
]
RefRoot = Annotated[
    Path | None,
    typer.Option(
        "--ref-root",
        help="Folder local $refs may read below. Default: the spec's folder (a config file cannot widen it).",
        exists=True,
        file_okay=False,
    ),
]
AllowRemoteRefs = Annotated[
    bool,
    typer.Option(
        "--allow-remote-refs",
        help="Fetch http(s) $refs on any origin. Default: only refs on the origin of a spec loaded from a URL.",
    ),
]
MaxSpecMb = Annotated[
    float | None,
    typer.Option("--max-spec-mb", min=0.001, help="Largest spec document read, in MB. Default: 50."),
]
Overlays = Annotated[list[str] | None, typer.Option("--overlay", help=OVERLAY_HELP)]
Strict = Annotated[bool | None, typer.Option("--strict/--no-strict", help=STRICT_HELP)]
Clients = Annotated[
    list[str] | None,
    typer.Option(
        "--client",
        help="Make the tools fit this client, repeatable (several: all of their rules): claude, openai, gemini, "
        "cursor, vscode or portable (names and schemas every client takes, losing nothing). Lossy changes "
        "(OpenAI strict mode, Gemini's schema subset, Cursor's name length) apply only to the clients named. "
        "The result is checked against each client's rules. Default: portable. See docs/clients.md.",
    ),
]
Surface = Annotated[
    Literal["tools", "discovery", "auto"] | None,
    typer.Option(
        "--surface",
        help="tools: one tool per operation; discovery: search_tools, describe_tool, call_tool, "
        "call_read_only_tool (the server can switch with --surface); auto: tools when the API has at most "
        "40 tools and a tools/list of at most 20k tokens, else discovery. Default: auto.",
    ),
]
Pins = Annotated[
    list[str] | None,
    typer.Option(
        "--pin",
        help="Discovery surface: also list these tools directly (glob on tool name, operationId or "
        "'METHOD /path'; repeatable; the spec's x-mcp-pin: true does the same).",
    ),
]
Quiet = Annotated[bool, typer.Option("-q", "--quiet", help="Print errors only.")]
Verbose = Annotated[bool, typer.Option("-v", "--verbose", help="Print every warning and the time of each stage.")]


# Reading the values. Typer (0.2x) converts every parameter's value with a pydantic TypeAdapter that it builds
# on first use, also for a value that was not given (None): the first one imports pydantic (a tenth of a
# second), on every run. `defer_coercion` gives each parameter a converter that builds typer's own only for a
# value that needs it: not for an option left out (typer's own rule: None, or () when repeatable), nor for a
# plain string, strings of a repeatable option, or a path that typer's path checks accept (run on the same
# Path object typer would make); anything else, and any path typer refuses (for its exact message), goes to
# typer's converter. Without these typer internals (another typer), it does nothing.
try:
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
    from typer._param_types import coerce_cli_path

    DEFERRABLE = True
except ImportError:  # pragma: no cover - a typer without pydantic
    DEFERRABLE = False


def defer_coercion(params: Iterable[Any]) -> None:
    """Give each typer parameter that has not converted a value yet the deferring converter."""
    if not DEFERRABLE:
        return  # pragma: no cover
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is not None and getattr(param, "_runtime_param", False) is None:
            try:  # the internals _Deferred reads, as this typer has them; another typer keeps its own converters
                deferred = _Deferred(descriptor.parameter_info, descriptor.annotation, descriptor)
                _ = (deferred.parameter_info.parser, deferred.parameter_info.path_type, descriptor.file_annotation)
            except Exception:  # noqa: BLE001 - any mismatch: typer converts as it always does
                return
            param._runtime_param = deferred


if DEFERRABLE:

    @dataclass(frozen=True)
    class _Deferred(RuntimeParam):
        descriptor: TypeDescriptor

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            info, annotation = self.parameter_info, self.annotation
            if info.parser is None and self.descriptor.file_annotation is None:
                if annotation is str and type(value) is str:
                    return value
                if annotation == list[str] and isinstance(value, (list, tuple)):
                    if all(type(item) is str for item in value):
                        return list(value)
                if type(value) is str and value in _choices(annotation):  # a Literal's string: typer gives it back
                    return value
                if annotation is Path and info.path_type is None and type(value) is str:
                    try:  # typer's adapter makes Path(value), then checks it with this same function
                        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
                    except Exception:  # noqa: BLE001 - refused: typer's converter says why, with the path as given
                        pass
            return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)


def _choices(annotation: Any) -> frozenset[str]:
    """The strings a `Literal` of strings (or such a Literal or None) allows; none for any other annotation."""
    origin = get_origin(annotation)
    if origin is Literal:
        values = get_args(annotation)
        return frozenset(values) if all(type(value) is str for value in values) else frozenset()
    if origin is Union or origin is UnionType:
        members = [member for member in get_args(annotation) if member is not type(None)]
        if len(members) == 1:
            return _choices(members[0])
    return frozenset()
