"""generate(config) -> (files, problems): the stages in order, and nothing else.

load -> validate -> normalize -> map to tools -> render -> format. Writing (or checking) is left to
the caller, so nothing touches the output folder until everything has been produced in memory.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from . import __version__
from .ahead import Ahead
from .emit.clients import client_setup
from .config import Config
from .emit.escape import safe_url
from .emit.files import Content, characters
from .emit.format import format_files
from .spec.load import open_documents
from .spec.policy import MB, ReadPolicy
from .spec.model import Api
from .spec.normalize import normalize
from .problems import Problem, error, has_errors
from .spec.refs import Resolver
from .emit.render import Project, render, slug
from .surface.listing import fitted_listing
from .surface.select import apply_overrides, select_operations
from .surface.plans import ToolSpec
from .surface.results import config_result_tokens
from .surface.parallel import Part, share_early
from .surface.tools import map_early, map_tools
from .surface.profiles import apply_profiles, tool_cap
from .surface.profiles.check import check_tools
from .spec.upgrade import PointerMap, is_swagger2, upgrade
from .spec.validate import validate
from .emit.write import with_manifest
from .spec.declared_security import overlay as overlay_security
from .spec.overlay import apply_overlays
from .surface.discovery import Surface, choose
from .emit.wire import MAX_LIST_BYTES
from .surface.tokens import keep_counts, wire


@dataclass(frozen=True)
class Result:
    files: Mapping[str, Content] = field(default_factory=dict)  # empty when nothing usable was produced
    problems: tuple[Problem, ...] = ()
    api: Api | None = None
    tools: tuple[ToolSpec, ...] = ()
    project: Project | None = None
    surface: Surface = Surface("tools", 0, 0)  # what the package lists, and what that costs


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


def analyze(
    config: Config, progress: Progress = _quiet, source: dict[str, str] | None = None, fit: bool = True
) -> tuple[Api | None, list[ToolSpec], list[Problem]]:
    """The spec's tools, without rendering: load, validate, normalize, select, map, override, and fit the listing
    (listing.fitted_listing). With `fit=False`, the tools as they are before that fit, which is what the discovery
    surface's search index reads of them (the fit's problems are then not reported).

    `source`, when given, receives the URL and SHA-256 of a spec fetched from a URL (for the manifest)."""
    api, tools, problems, _, _ = _analyze(config, progress, source, fit=fit)
    return api, tools, problems


def _analyze(
    config: Config,
    progress: Progress,
    source: dict[str, str] | None,
    ready: Callable[[Api, list[ToolSpec]], None] | None = None,
    mapped: Callable[[list[ToolSpec]], None] | None = None,
    fit: bool = True,
    waiting: Callable[[int], None] | None = None,
) -> tuple[Api | None, list[ToolSpec], list[Problem], bytes | None, int | None]:
    """analyze, and tools.json's content (the tools' listing and a newline, UTF-8) when fitting the listing serialized
    it, and the listing's tokens (listing.listing_tokens) when it counted them. `ready` is given the API and the
    tools returned as soon as they are known (listing.fitted_listing's); `mapped`, the tools once they are mapped (and
    overridden), before the listing is fitted: what the search index reads of them (Ahead.warm). `fit=False`: the
    tools returned as they are then (analyze's). `waiting`: given the number of operations, work to do while a
    helper sends the tools it mapped (Ahead.prepare)."""
    progress(f"loading {config.spec}")
    policy = ReadPolicy(config.ref_root, config.allow_remote_refs, int(config.max_spec_mb * MB))
    documents, problems = open_documents(config.spec, policy)
    if documents is None:
        return None, [], problems, None, None
    if source is not None and documents.root_sha256:
        source.update(url=config.spec, sha256=documents.root_sha256)
    if config.overlays:
        progress(f"applying {len(config.overlays)} overlay(s)")
        overlaid, found = apply_overlays(documents, config.overlays, policy)
        problems += found
        if overlaid is None:
            return None, [], problems, None, None
        documents = overlaid
    original = documents

    def validated() -> list[Problem]:
        """Run last, so that the validator sees only the documents generation read (it reads none itself)."""
        if config.validate or (config.validate is None and _operation_count(original.root) <= VALIDATE_MAX_OPERATIONS):
            progress("validating with openapi-spec-validator")
            so_far = original.store.docs if original.store is not None else None  # the cache key names them
            return validate(original.root, original.root_uri, original.loaded, so_far)
        if config.validate is None:
            progress(f"not validating: more than {VALIDATE_MAX_OPERATIONS} operations (--validate forces it)")
        return []

    document: Any = documents.root
    pointers: PointerMap | None = None
    if is_swagger2(document):
        progress("upgrading Swagger 2.0 to the OpenAPI 3.0 shape")
        documents, pointers, found = upgrade(documents)
        document = documents.root
        problems += found
    resolver = Resolver(documents)
    document, found = overlay_security(document, config)
    problems += found

    def here(found: list[Problem]) -> list[Problem]:
        """Problems found in the upgraded document, pointed back into the Swagger 2.0 one."""
        return pointers.remap_all(found) if pointers else found

    progress("reading operations")
    paths = document.get("paths") if isinstance(document, dict) else None
    early = share_early(paths, resolver, lambda theirs: _map_early(document, theirs, resolver, config))
    try:
        api, found = normalize(document, resolver)
        problems += here(found)
        if api is None:
            return None, [], problems + documents.problems() + validated(), None, None
        found_operations = len(api.operations)
        api, found = select_operations(api, config, resolver)
        problems += here(found)
        progress(f"mapping {len(api.operations)} operations to tools")
        idle = partial(waiting, len(api.operations)) if waiting is not None else None
        tools, found = map_tools(api, resolver, *_settings(config), early=early, waiting=idle)
        problems += here(found)
    finally:
        if early is not None:
            early.helper.end()
    tools, found = apply_overrides(tools, config, resolver)
    problems += here(found)
    tools = config_result_tokens(tools, config)
    if tools:  # client profiles (surface/profiles): names and schemas every named client accepts, then checked
        tools, found = apply_profiles(tools, config.clients, project_for(config, api).dist)
        problems += found
    read = documents.problems() + validated()  # the $refs that could not be read, each at its site
    del documents, original, document, resolver, pointers  # the spec is freed before the listing is serialized
    _give_back(len(tools))
    if mapped is not None:  # after the spec is freed: a helper forked now does not count it in its memory
        mapped(tools)
    final = api  # not None here (the name the function below keeps)
    known = (lambda fitted: ready(final, fitted)) if ready is not None else None
    listing: bytes | None = None
    counted: int | None = None
    if fit:
        tools, found, listing, counted = fitted_listing(tools, end="\n", ready=known)  # tools.json's text and tokens
    else:
        found = []
    problems += found + read
    if not tools and found_operations and not api.operations:
        problems.append(
            error(
                f"all {found_operations} operations were excluded (rules, deprecated = false or x-mcp-exclude)",
                "/paths",
            )
        )
    elif not tools:
        problems.append(error("the spec has no operations that can be served as tools", "/paths"))
    return api, tools, problems, listing, counted


def _map_early(document: dict[str, Any], paths: list[str], resolver: Resolver, config: Config) -> Part | None:
    """An early helper's work (surface/parallel.share_early): the operations of these paths read, selected and
    mapped, as they are here."""
    api, _ = normalize({**document, "paths": {path: document["paths"][path] for path in paths}}, resolver)
    if api is None:
        return None
    api, _ = select_operations(api, config, resolver)
    return map_early(api, resolver, *_settings(config))


def _settings(config: Config) -> tuple[int | None, bool, int | None]:
    """map_tools' settings: output depth (None: whole), compact, input budget (None: no limit)."""
    return None if config.output_depth < 0 else config.output_depth, config.compact, config.input_budget or None


LARGE = 1000  # tools: an API this large gives freed memory back to the system between stages


def _give_back(tools: int) -> None:
    """For a large API, the heap's free pages returned to the system: the C library (glibc) keeps what a stage
    freed (the parsed spec, a listing's pieces) in the process otherwise, and the next stage's peak comes on top
    of it. Does nothing where the C library has no malloc_trim."""
    if tools < LARGE:
        return
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim
    except (ImportError, OSError, AttributeError):
        return
    trim(0)


@contextmanager
def _no_collection() -> Iterator[None]:
    """The cyclic garbage collector paused while the stages build their (large, long-lived, acyclic) data:
    on a large spec it otherwise re-scans the growing heap again and again for nothing to free (a fifth of
    the run). Everything still reachable is freed by reference counting; the collector runs again after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():  # what was built joins the oldest generation without being scanned:
                gc.freeze()  # the collector's first pass after a pause would otherwise walk all of it (~0.4 s on
                gc.unfreeze()  # a large API) to free nothing; it is still collected with the oldest generation
            gc.enable()


def project_for(config: Config, api: Api) -> Project:
    """The generated package's names: --name, else the output folder's name, else the API title's slug."""
    output_name = config.output.name if config.output is not None else slug(api.title)
    return Project.from_name(config.name or output_name)


def generate(config: Config, progress: Progress = _quiet) -> Result:
    cap = tool_cap(config.clients)
    with Ahead(config.surface, cap, lambda api: project_for(config, api)) as ahead:
        result = _generate(config, progress, cap, ahead)
    keep_counts()  # the token counts this run made, for the next (surface/token_cache.py)
    return result


def _generate(config: Config, progress: Progress, cap: int | None, ahead: Ahead) -> Result:
    source: dict[str, str] = {}
    with _no_collection():
        api, tools, problems, listing, counted = _analyze(
            config, progress, source, ahead.start, ahead.warm, waiting=ahead.prepare
        )
    _give_back(len(tools))
    if api is None or not tools:
        return Result(problems=tuple(problems), api=api)
    project = project_for(config, api)
    base_url = config.base_url or (safe_url(api.servers[0]) if api.servers else None)
    progress(f"rendering {project.dist}")
    progress(f"choosing the surface ({config.surface})")
    surface, found = choose(tools, config.surface, config.pin, api.title, cap, counted)
    problems += found
    if cap is not None and surface.listed > cap:  # only `--surface tools` can get here: auto switches
        listed = [tool.to_json() for tool in tools]
        problems += [v.problem() for v in check_tools(listed, config.clients, project.dist) if not v.pointer]
    extra = {
        "default_timeout": config.timeout,
        "clients": client_setup(project, base_url),
        "discovery": _discovery_context(surface, config.surface, tools, ahead),
    }
    handshake = ahead.handshake_jsonl(tools, project, api)  # made by a helper for a listing pre-serialized whole
    if handshake is not None and listing is not None and characters(listing) - 1 <= MAX_LIST_BYTES:
        extra["handshake_jsonl"] = handshake
    with _no_collection():  # not around black, whose syntax trees are cyclic garbage
        handed: list[Content] | None = [listing] if listing is not None else None
        del listing  # render holds it once: as tools.json
        files, found = render(api, tools, project, base_url, config.templates, extra, handed)
    problems += found
    if not has_errors(found):
        progress("formatting with black")
        files, found = format_files(files)
        problems += found
    if has_errors(found):
        return Result(problems=tuple(problems), api=api, tools=tuple(tools), project=project, surface=surface)
    files = with_manifest(files, __version__, source or None)
    return Result(files, tuple(problems), api, tuple(tools), project, surface)


def _discovery_context(surface: Surface, requested: str, tools: list[ToolSpec], ahead: Ahead) -> dict[str, Any] | None:
    """The templates' `discovery` variable: None for a package that serves only its tools. `outputs_json`: the
    output schemas a large listing left out, which describe_tool still shows (read on the first describe).
    `search_json` is made (or waited for) when the first file needs it: render writes search.json last."""
    if surface.name != "discovery":
        return None
    why = "generated with surface discovery" if requested == "discovery" else "auto, over 40 tools or 20k tokens"
    return {
        "surface": surface.name,
        "why": why,
        "search_json": ahead.search_json(),
        "discovery_json": wire(surface.discovery_json()),
        "outputs_json": wire({t.name: t.described_output for t in tools if t.described_output is not None}),
        "pinned": surface.pinned,
    }
