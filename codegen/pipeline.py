"""generate(config) -> (files, problems): the stages in order, and nothing else.

load -> validate -> normalize -> map to tools -> render -> format. Writing (or checking) is left to
the caller, so nothing touches the output folder until everything has been produced in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import __version__
from .config import Config
from .format import format_files
from .load import load
from .model import Api
from .normalize import normalize
from .problems import Problem, error, has_errors
from .refs import Resolver
from .render import Project, render, slug
from .tools import ToolSpec, map_tools
from .validate import validate
from .write import with_manifest


@dataclass(frozen=True)
class Result:
    files: Mapping[str, str] = field(default_factory=dict)  # empty when nothing usable was produced
    problems: tuple[Problem, ...] = ()
    api: Api | None = None
    tools: tuple[ToolSpec, ...] = ()
    project: Project | None = None


Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def analyze(config: Config, progress: Progress = _quiet) -> tuple[Api | None, list[ToolSpec], list[Problem]]:
    """The spec's tools, without rendering: load, validate, normalize, map."""
    progress(f"loading {config.spec}")
    documents, problems = load(config.spec)
    if documents is None:
        return None, [], problems
    document: Any = documents.root
    if config.validate:
        progress("validating with openapi-spec-validator")
        problems += validate(document, documents.root_uri)
    if str(document.get("swagger", "")).startswith("2"):
        problems.append(
            error("Swagger 2.0 documents are not supported yet; convert the spec to OpenAPI 3 first", "/swagger")
        )
        return None, [], problems
    resolver = Resolver(documents)
    progress("reading operations")
    api, found = normalize(document, resolver)
    problems += found
    if api is None:
        return None, [], problems
    progress(f"mapping {len(api.operations)} operations to tools")
    tools, found = map_tools(api, resolver)
    problems += found
    if not tools:
        problems.append(error("the spec has no operations that can be served as tools", "/paths"))
    return api, tools, problems


def generate(config: Config, progress: Progress = _quiet) -> Result:
    api, tools, problems = analyze(config, progress)
    if api is None or not tools:
        return Result(problems=tuple(problems), api=api)
    output_name = config.output.name if config.output is not None else slug(api.title)
    project = Project.from_name(config.name or output_name)
    base_url = config.base_url or (api.servers[0] if api.servers else None)
    progress(f"rendering {project.dist}")
    files, found = render(api, tools, project, base_url, config.templates)
    problems += found
    if not has_errors(found):
        progress("formatting with black")
        files, found = format_files(files)
        problems += found
    if has_errors(found):
        return Result(problems=tuple(problems), api=api, tools=tuple(tools), project=project)
    return Result(with_manifest(files, __version__), tuple(problems), api, tuple(tools), project)
