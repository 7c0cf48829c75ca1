"""ToolSpecs + config -> the generated package, as {relative path: text}, with Jinja.

One template per generated file. A user's template folder overrides any built-in template by its file
name. The environment is created per call (no global state) with StrictUndefined, so a template that
uses a variable it was not given fails loudly instead of writing an empty string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from .. import __version__
from ..spec.model import Api
from ..problems import Problem, error, warning
from ..surface.plans import RequestPlan, ToolSpec
from .cache import cache_root
from .escape import FILTERS
from .variables import all_variables, scheme_base
from .files import Content, Deferred, as_text, characters
from .wire import MAX_LIST_BYTES, handshake_lines

# template file name -> generated path ({package} is the import package)
FILES: tuple[tuple[str, str], ...] = (
    ("pyproject.toml.jinja", "pyproject.toml"),
    ("README.md.jinja", "README.md"),
    ("Dockerfile.jinja", "Dockerfile"),
    ("dockerignore.jinja", ".dockerignore"),
    ("env.example.jinja", ".env.example"),
    ("__init__.py.jinja", "src/{package}/__init__.py"),
    ("__main__.py.jinja", "src/{package}/__main__.py"),
    ("server.py.jinja", "src/{package}/server.py"),
    ("calls.py.jinja", "src/{package}/calls.py"),
    ("catalog.py.jinja", "src/{package}/catalog.py"),
    ("datafiles.py.jinja", "src/{package}/datafiles.py"),
    ("cli.py.jinja", "src/{package}/cli.py"),
    ("web.py.jinja", "src/{package}/web.py"),
    ("settings.py.jinja", "src/{package}/settings.py"),
    ("requests.py.jinja", "src/{package}/requests.py"),
    ("plans.py.jinja", "src/{package}/plans.py"),
    ("styles.py.jinja", "src/{package}/styles.py"),
    ("bodies.py.jinja", "src/{package}/bodies.py"),
    ("restore.py.jinja", "src/{package}/restore.py"),
    ("responses.py.jinja", "src/{package}/responses.py"),
    ("paging.py.jinja", "src/{package}/paging.py"),
    ("shaping.py.jinja", "src/{package}/shaping.py"),
    ("fitting.py.jinja", "src/{package}/fitting.py"),
    ("links.py.jinja", "src/{package}/links.py"),
    ("auth.py.jinja", "src/{package}/auth.py"),
    ("oauth.py.jinja", "src/{package}/oauth.py"),
    ("exchange.py.jinja", "src/{package}/exchange.py"),
    ("resource.py.jinja", "src/{package}/resource.py"),
    ("validation.py.jinja", "src/{package}/validation.py"),
    ("upstream.py.jinja", "src/{package}/upstream.py"),
    ("retries.py.jinja", "src/{package}/retries.py"),
    ("pool.py.jinja", "src/{package}/pool.py"),
    ("decoding.py.jinja", "src/{package}/decoding.py"),
    ("stdio.py.jinja", "src/{package}/stdio.py"),
    ("tools.json.jinja", "src/{package}/tools.json"),
    ("handshake.jsonl.jinja", "src/{package}/handshake.jsonl"),
    ("handshake.py.jinja", "src/{package}/handshake.py"),
    ("greeting.py.jinja", "src/{package}/greeting.py"),
    ("routes.json.jinja", "src/{package}/routes.json"),
    ("py.typed.jinja", "src/{package}/py.typed"),
    ("conftest.py.jinja", "tests/conftest.py"),
    ("support.py.jinja", "tests/support.py"),
    ("samples.py.jinja", "tests/samples.py"),
    ("sample_values.py.jinja", "tests/sample_values.py"),
    ("test_server.py.jinja", "tests/test_server.py"),
    ("test_injection.py.jinja", "tests/test_injection.py"),
    ("test_security.py.jinja", "tests/test_security.py"),
    ("test_oauth.py.jinja", "tests/test_oauth.py"),
    ("test_limits.py.jinja", "tests/test_limits.py"),
    ("test_responses.py.jinja", "tests/test_responses.py"),
    ("test_hostile.py.jinja", "tests/test_hostile.py"),
    ("test_hostile_input.py.jinja", "tests/test_hostile_input.py"),
    ("test_results.py.jinja", "tests/test_results.py"),
)
# written only for a package that can serve the discovery surface (the `discovery` template variable)
DISCOVERY_FILES: tuple[tuple[str, str], ...] = (
    ("discovery.py.jinja", "src/{package}/discovery.py"),
    ("search.py.jinja", "src/{package}/search.py"),
    ("query.py.jinja", "src/{package}/query.py"),
    ("search.json.jinja", "src/{package}/search.json"),
    ("discovery.json.jinja", "src/{package}/discovery.json"),
    ("outputs.json.jinja", "src/{package}/outputs.json"),
    ("test_discovery.py.jinja", "tests/test_discovery.py"),
)


# templates of earlier versions -> what renders their part now (a user's override under an old name would be ignored)
RENAMED: Mapping[str, str] = {
    "server/catalog.py.jinja": "catalog.py.jinja",
    "server/cli.py.jinja": "cli.py.jinja",
    "server/dispatch.py.jinja": "server.py.jinja and calls.py.jinja",
    "server/http.py.jinja": "web.py.jinja",
    "server/discovery.py.jinja": "discovery.py.jinja",
    "tests/discovery.py.jinja": "test_discovery.py.jinja",
}


def renamed_templates(templates: Path | None) -> list[Problem]:
    """A warning for each template in the user's folder under a name no template has any longer."""
    if templates is None:
        return []
    return [
        warning(f"templates: {old} is no longer a template (now {new}); it is not used: move its changes there")
        for old, new in sorted(RENAMED.items())
        if (templates / old).is_file()
    ]


def builtin_templates() -> Path:
    """The templates shipped in the wheel (codegen/templates) or, from a source tree, ./templates."""
    package = Path(__file__).resolve().parents[1]
    packaged = package / "templates"
    return packaged if packaged.is_dir() else package.parent / "templates"


@dataclass(frozen=True, slots=True)
class Project:
    """The names of the generated package, all derived from one name."""

    dist: str  # distribution and console script: my-server
    package: str  # import package: my_server
    env_prefix: str  # environment variables: MY_SERVER_...

    @classmethod
    def from_name(cls, name: str) -> Project:
        dist = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "mcp-server"
        if not dist[0].isalpha():
            dist = "mcp-" + dist
        package = dist.replace("-", "_")
        return cls(dist, package, package.upper())


def slug(title: str) -> str:
    """A folder name for an API title: 'Swagger Petstore' -> 'swagger-petstore'."""
    return Project.from_name(title).dist


def render(
    api: Api,
    tools: Sequence[ToolSpec],
    project: Project,
    default_base_url: str | None,
    templates: Path | None,
    extra: Mapping[str, Any] | None = None,
    tools_file: Content | list[Content] | None = None,
) -> tuple[dict[str, Content], list[Problem]]:
    """`tools_file`: tools.json's content (the tools' listing, compact with sorted keys, and a newline; text or UTF-8)
    when it was serialized already; handed over in a list, which render empties, so that it is held once. Data files
    are the values they are given (tools.json: `tools_file` itself); the other files are text."""
    if isinstance(tools_file, list):
        tools_file = tools_file.pop() if tools_file else None
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(builtin_templates()))]
    if templates is not None:
        loaders.insert(0, jinja2.FileSystemLoader(str(templates)))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        bytecode_cache=_bytecode_cache(),
    )
    env.filters["json"] = lambda value: json.dumps(value, ensure_ascii=False)
    env.filters.update(FILTERS)  # the one escaping path for spec text: see emit/escape.py
    targets = FILES + (DISCOVERY_FILES if (extra or {}).get("discovery") else ())
    passed = {name: _passthrough(env, name) for name, _ in targets}
    listing: str | None = None  # the listing without tools.json's newline: a copy, made only for a template using it
    if tools_file is not None:
        listing = as_text(tools_file)[:-1] if _uses(env, "tools_json", passed) else ""
    size = characters(tools_file) - 1 if tools_file is not None else None
    entries = [tool.to_json() for tool in tools] if size is None or size <= MAX_LIST_BYTES else None
    context = {**_context(api, tools, project, default_base_url, entries, listing), **(extra or {})}
    del listing
    if "handshake_jsonl" not in context:  # else made already (ahead.py)
        context["handshake_jsonl"] = _handshake(entries, context, project, api, tools, size)
    del entries
    files: dict[str, Content] = {target.format(package=project.package): "" for _, target in targets}
    problems: list[Problem] = renamed_templates(templates)
    for template_name, target in sorted(targets, key=lambda item: passed[item[0]] is not None):  # those last
        path = target.format(package=project.package)
        try:
            variable = passed[template_name]
            later = variable is not None and sum(1 for name, _ in targets if passed[name] == variable) > 1
            passed[template_name] = None
            text: Content | None
            if variable == "tools_json" and tools_file is not None:
                text, tools_file = tools_file, (tools_file if later else None)
            else:
                text = _take(context, variable, keep=later) if variable is not None else None
            # the data files: the value itself, which no later template needs (freed once written)
            files[path] = env.get_template(template_name).render(context) if text is None else text
            del text
        except jinja2.TemplateError as exc:
            del files[path]
            where = f" (line {exc.lineno})" if isinstance(exc, jinja2.TemplateSyntaxError) else ""
            problems.append(error(f"template {template_name}{where}: {exc}"))
    return files, problems


def _uses(env: jinja2.Environment, variable: str, passed: Mapping[str, str | None]) -> bool:
    """Whether a template other than those writing `variable` alone names it (a user's templates may)."""
    loader = env.loader
    if loader is None:
        return True
    for name in loader.list_templates():
        if passed.get(name) == variable:
            continue
        try:
            if variable in loader.get_source(env, name)[0]:
                return True
        except jinja2.TemplateError:
            continue
    return False


_PASSTHROUGH = re.compile(r"\{\{ ([a-z_]+(?:\.[a-z_]+)?) \}\}\n")


def _passthrough(env: jinja2.Environment, name: str) -> str | None:
    """The variable (`tools_json`, `discovery.search_json`) a template writes alone, followed by a newline; None for
    any other template. Such a file is its variable's text (a large API's listing is tens of megabytes): written
    without Jinja's copy of it, which is what Jinja would write."""
    try:
        source = env.loader.get_source(env, name)[0] if env.loader is not None else ""
    except jinja2.TemplateError:
        return None
    found = _PASSTHROUGH.fullmatch(source)
    return found.group(1) if found else None


def _take(context: dict[str, Any], variable: str, keep: bool) -> str | None:
    """A passthrough template's text: the variable's string value and a newline, the value taken out of the context
    unless `keep` (None when it is not a string: Jinja renders the template then)."""
    *parents, last = variable.split(".")
    holder: Any = context
    for part in parents:
        holder = holder.get(part) if isinstance(holder, dict) else None
    if isinstance(holder, dict) and isinstance(holder.get(last), Deferred):
        holder[last] = holder[last]()  # made (or waited for) now that a file needs it
    if not isinstance(holder, dict) or type(holder.get(last)) is not str:
        return None
    text: str = holder[last] if keep else holder.pop(last)
    return text + "\n"


def _context(
    api: Api,
    tools: Sequence[ToolSpec],
    project: Project,
    default_base_url: str | None,
    entries: Sequence[Mapping[str, Any]] | None = None,
    tools_json: str | None = None,
) -> dict[str, Any]:
    if entries is None and tools_json is None:
        entries = [tool.to_json() for tool in tools]
    schemes = security_schemes(api, tools, project)
    return {
        "generator_version": __version__,
        "project": project,
        "api": api,
        "default_base_url": default_base_url,
        "tools": tools,
        "tools_json": _dump(entries) if tools_json is None else tools_json,
        "routes_json": _routes(tools),
        "security_schemes": schemes,
        "environment": all_variables(project.env_prefix, schemes),
        "discovery": None,  # the pipeline sets it when the package serves the discovery surface
    }


def tools_handshake(tools: Sequence[ToolSpec], project: Project, api: Api) -> str:
    """handshake.jsonl of a package serving the tools surface whose listing is at most MAX_LIST_BYTES (as render
    makes it)."""
    return handshake_lines([tool.to_json() for tool in tools], project.dist, api.version)


def _handshake(
    entries: Sequence[Mapping[str, Any]] | None,
    context: Mapping[str, Any],
    project: Project,
    api: Api,
    tools: Sequence[ToolSpec] = (),
    size: int | None = None,
) -> str:
    """handshake.jsonl: the handshake answers as the SDK serializes them for the surface the package serves
    by default. tools: tools.json as served (keys sorted); discovery: discovery.json's four tools (in its
    key order, as the server reads them) and the pinned tools from tools.json. `entries`: the tools' entries,
    None when tools.json is too large to be pre-serialized (then `tools` gives the pinned ones). `size`: the
    listing's length (default: context["tools_json"]'s)."""
    discovery = context["discovery"]
    if not discovery:
        return handshake_lines(
            entries or [], project.dist, api.version, size=len(context["tools_json"]) if size is None else size
        )
    meta = json.loads(discovery["discovery_json"])["tools"]
    pinned_names = set(discovery["pinned"])
    listed = entries if entries is not None else [tool.to_json() for tool in tools if tool.name in pinned_names]
    by_name = {entry["name"]: entry for entry in listed}
    pinned = [json.loads(_dump(by_name[name])) for name in discovery["pinned"] if name in by_name]
    return handshake_lines([*meta, *pinned], project.dist, api.version, discovery["surface"], sort_keys=False)


def security_schemes(api: Api, tools: Sequence[ToolSpec], project: Project) -> list[dict[str, Any]]:
    """The security schemes some tool uses, with the environment variables that hold their credentials."""
    used = {key for tool in tools for alternative in tool.plan.security for key, _ in alternative}
    schemes = []
    taken: set[str] = set()
    for scheme in api.security_schemes:
        if scheme.key not in used:
            continue
        base = scheme_base(project.env_prefix, scheme.key, taken)  # never one of the server's own variables
        if scheme.type == "http" and scheme.scheme == "basic":
            kind, env = "basic", {"username": f"{base}_USERNAME", "password": f"{base}_PASSWORD"}
        elif scheme.type == "apiKey":
            kind, env = "apiKey", {"token": base}
        elif scheme.type == "http":
            kind, env = "http", {"token": base}
        elif scheme.type in ("oauth2", "openIdConnect"):
            kind, env = "oauth2", {"token": base}
            if scheme.type == "oauth2" and scheme.token_url:
                env.update(client_id=f"{base}_CLIENT_ID", client_secret=f"{base}_CLIENT_SECRET")
        else:
            kind, env = "unsupported", {}
        schemes.append(
            {
                "key": scheme.key,
                "type": scheme.type,
                "kind": kind,
                "scheme": scheme.scheme,
                "name": scheme.name,
                "in": scheme.location,
                "token_url": scheme.token_url,
                "env": env,
            }
        )
    return schemes


def _routes(tools: Sequence[ToolSpec]) -> str:
    """routes.json: `_dump` of {tool name: request plan}, each plan built and written in turn (not all at once).

    A plan is written key by key in sorted order, as `_dump` writes it; its arguments' plans are shared objects (a
    large API's tools repeat the same parameters thousands of times), each written once."""
    plans = {tool.name: tool.plan for tool in tools}
    written: dict[int, tuple[Any, str]] = {}  # id of an argument's plan -> (it, kept alive; its text)

    def arg_text(arg: Any) -> str:
        found = written.get(id(arg))
        if found is None:
            found = written[id(arg)] = (arg, _dump(arg.to_json()))
        return found[1]

    def route(plan: RequestPlan) -> str:
        data = plan.to_json(args=False)
        parts = []
        for key in sorted(data):
            text = "[" + ",".join(map(arg_text, plan.args)) + "]" if key == "args" else _dump(data[key])
            parts.append(_key(key) + ":" + text)
        return "{" + ",".join(parts) + "}"

    return "{" + ",".join(_key(name) + ":" + route(plans[name]) for name in sorted(plans)) + "}"


_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))  # made once, not per call
_key = json.encoder.encode_basestring  # a key as _dump writes it


def _dump(data: Any) -> str:
    """Compact, key-sorted JSON: byte-identical whatever the key order of the input spec."""
    return _ENCODER.encode(data)


def describe_templates() -> Mapping[str, str]:
    """Template file name -> generated path, for --help and the README."""
    return dict(FILES + tuple((name, f"{path} (discovery surface)") for name, path in DISCOVERY_FILES))


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs (keyed by each template's source, so an edited or a user's
    template is compiled afresh); None when the disk cache is off or its folder cannot be made."""
    root = cache_root()
    if root is None:
        return None
    folder = root / "jinja"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(folder))
