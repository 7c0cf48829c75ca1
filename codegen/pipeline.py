"""generate(config) -> (files, problems): the stages in order, and nothing else.

load -> validate -> normalize -> map to tools -> render -> format. Writing (or checking) is left to
the caller, so nothing touches the output folder until everything has been produced in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import __version__
from .emit.clients import client_setup
from .config import Config
from .emit.escape import safe_url
from .emit.format import format_files
from .spec.load import load
from .spec.model import Api
from .spec.normalize import normalize
from .problems import Problem, error, has_errors
from .spec.refs import Resolver
from .emit.render import Project, render, slug
from .surface.select import apply_overrides, select_operations
from .surface.plans import ToolSpec
from .surface.results import config_result_tokens
from .surface.tools import map_tools
from .spec.upgrade import PointerMap, is_swagger2, upgrade
from .spec.validate import validate
from .emit.write import with_manifest


@dataclass(frozen=True)
class Result:
    files: Mapping[str, str] = field(default_factory=dict)  # empty when nothing usable was produced
    problems: tuple[Problem, ...] = ()
    api: Api | None = None
    tools: tuple[ToolSpec, ...] = ()
    project: Project | None = None


Progress = Callable[[str], None]
# openapi-spec-validator needs ~15-50 s on GitHub's 1,200 operations; above this it runs only when asked.
# Nothing generated depends on it (its findings are warnings; normalize reports what it cannot use).
VALIDATE_MAX_OPERATIONS = 400
METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def _operation_count(document: Any) -> int:
    paths = document.get("paths") if isinstance(document, dict) else None
    if not isinstance(paths, dict):
        return 0
    return sum(len(METHODS.intersection(item)) for item in paths.values() if isinstance(item, dict))


def _quiet(_: str) -> None:
    pass


def analyze(config: Config, progress: Progress = _quiet) -> tuple[Api | None, list[ToolSpec], list[Problem]]:
    """The spec's tools, without rendering: load, validate, normalize, select, map, override."""
    progress(f"loading {config.spec}")
    documents, problems = load(config.spec)
    if documents is None:
        return None, [], problems
    document: Any = documents.root
    if config.validate or (config.validate is None and _operation_count(document) <= VALIDATE_MAX_OPERATIONS):
        progress("validating with openapi-spec-validator")
        problems += validate(document, documents.root_uri)
    elif config.validate is None:
        progress(f"not validating: more than {VALIDATE_MAX_OPERATIONS} operations (--validate forces it)")
    pointers: PointerMap | None = None
    if is_swagger2(document):
        progress("upgrading Swagger 2.0 to the OpenAPI 3.0 shape")
        documents, pointers, found = upgrade(documents)
        document = documents.root
        problems += found
    resolver = Resolver(documents)

    def here(found: list[Problem]) -> list[Problem]:
        """Problems found in the upgraded document, pointed back into the Swagger 2.0 one."""
        return pointers.remap_all(found) if pointers else found

    progress("reading operations")
    api, found = normalize(document, resolver)
    problems += here(found)
    if api is None:
        return None, [], problems
    found_operations = len(api.operations)
    api, found = select_operations(api, config, resolver)
    problems += here(found)
    progress(f"mapping {len(api.operations)} operations to tools")
    tools, found = map_tools(
        api,
        resolver,
        None if config.output_depth < 0 else config.output_depth,
        config.compact,
        config.input_budget or None,
    )
    problems += here(found)
    tools, found = apply_overrides(tools, config, resolver)
    problems += here(found)
    tools = config_result_tokens(tools, config)
    if not tools and found_operations and not api.operations:
        problems.append(
            error(
                f"all {found_operations} operations were excluded (rules, deprecated = false or x-mcp-exclude)",
                "/paths",
            )
        )
    elif not tools:
        problems.append(error("the spec has no operations that can be served as tools", "/paths"))
    return api, tools, problems


def generate(config: Config, progress: Progress = _quiet) -> Result:
    api, tools, problems = analyze(config, progress)
    if api is None or not tools:
        return Result(problems=tuple(problems), api=api)
    output_name = config.output.name if config.output is not None else slug(api.title)
    project = Project.from_name(config.name or output_name)
    base_url = config.base_url or (safe_url(api.servers[0]) if api.servers else None)
    progress(f"rendering {project.dist}")
    extra = {"default_timeout": config.timeout, "clients": client_setup(project, base_url)}
    files, found = render(api, tools, project, base_url, config.templates, extra)
    problems += found
    if not has_errors(found):
        progress("formatting with black")
        files, found = format_files(files)
        problems += found
    if has_errors(found):
        return Result(problems=tuple(problems), api=api, tools=tuple(tools), project=project)
    return Result(with_manifest(files, __version__), tuple(problems), api, tuple(tools), project)
