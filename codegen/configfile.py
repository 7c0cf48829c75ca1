"""Find and read the config file, parse `--rule` flags, and merge everything once into a Config.

Where the settings come from (the first that exists is used; files are never merged):
1. `--config FILE`: a pyproject.toml (its `[tool.mcp-codegen]` table) or any other TOML file (its top level);
2. `mcp-codegen.toml` next to the spec (local specs only);
3. `pyproject.toml` in the current directory, if it has a `[tool.mcp-codegen]` table.
Command-line flags override the file. Every problem is a Problem naming the file and a JSON pointer to
the key (`pyproject.toml#/tool/mcp-codegen/rules/0/tags`); unknown keys are errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlparse

from .config import ANNOTATION_KEYS, Action, Config, Override, Rule
from .spec.model import METHODS, Security
from .surface.profiles.rules import CLIENTS
from .problems import Problem, error, join
from .spec.declared_security import requirement_problems, scheme_problems, to_security

CONFIG_NAME = "mcp-codegen.toml"
TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
TOP_KEYS = (
    "output",
    "name",
    "base-url",
    "timeout",
    "templates",
    "validate",
    "deprecated",
    "unmatched",
    "output-depth",
    "input-budget",
    "compact",
    "client",
    "surface",
    "pin",
    "rules",
    "overrides",
    "security-schemes",
    "security",
    "overlays",
    "strict",
    "spec",  # read by `mcp-codegen ci` (codegen/ci/servers.py), with `servers`
    "servers",
)
RULE_KEYS = ("action", "tags", "paths", "methods", "operations")
OVERRIDE_KEYS = ("name", "title", "description", "annotations", "exclude", "security", "result_tokens")
RULE_FLAG_KEYS = {"tag": "tags", "path": "paths", "method": "methods", "op": "operations"} | {
    key: key for key in RULE_KEYS[1:]
}  # the file's plural keys work in --rule too


def find_config(spec: str, explicit: Path | None, cwd: Path) -> Path | None:
    if explicit is not None:
        return explicit
    if urlparse(spec).scheme not in ("http", "https"):
        beside = Path(spec).resolve().parent / CONFIG_NAME
        if beside.is_file():
            return beside
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        import tomllib  # imported only when there is TOML to read

        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return pyproject  # reading it again reports the problem
        if isinstance(data.get("tool"), dict) and "mcp-codegen" in data["tool"]:
            return pyproject
    return None


def build_config(
    spec: str,
    flags: Mapping[str, Any],
    rule_flags: tuple[str, ...] = (),
    explicit: Path | None = None,
    cwd: Path | None = None,
) -> tuple[Config | None, list[Problem]]:
    """The one Config: defaults < config file < flags. `flags` holds Config fields; None means "not given".

    `rule_flags` are `--rule` values; they are tried before the file's rules. None when a problem is an error.
    """
    path = find_config(spec, explicit, cwd or Path.cwd())
    values: dict[str, Any] = {}
    problems: list[Problem] = []
    if path is not None:
        values, problems = read_config(path)
        values["config_file"] = path
    cli_rules: list[Rule] = []
    for text in rule_flags:
        rule, problem = parse_rule(text)
        if problem is not None:
            problems.append(problem)
        elif rule is not None:
            cli_rules.append(rule)
    for client in flags.get("clients") or ():
        if client not in CLIENTS:
            problems.append(error(f"--client {client!r}: must be one of {', '.join(CLIENTS)}"))
    if problems:
        return None, problems
    file_overlays = values.get("overlays", ())
    values.update({key: value for key, value in flags.items() if value is not None})
    values["rules"] = (*cli_rules, *values.get("rules", ()))
    if flags.get("overlays"):  # the file's overlays apply first, then --overlay flags (later ones win)
        values["overlays"] = (*file_overlays, *flags["overlays"])
    return Config(spec=spec, **values), []


def found_notice(config: Config, explicit: Path | None) -> str | None:
    """What to tell on stderr about a config file picked up without `--config`: which file, and whether it
    sets `templates` (templates are code: they write the generated package). None when there is nothing
    to tell."""
    path = config.config_file
    if path is None or explicit is not None:
        return None
    notice = f"note: using settings from {path} (found without --config)"
    values, _ = read_config(path)
    if "templates" in values:
        notice += (
            f"; it sets templates = {values['templates']}: those templates are code that writes the generated "
            "package, review them if you did not write them"
        )
    return notice


def read_config(path: Path) -> tuple[dict[str, Any], list[Problem]]:
    """Config fields from a TOML file (relative paths in it are relative to the file)."""
    import tomllib

    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, [error("config file not found", source=source)]
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [error(f"cannot read config file: {exc}", source=source)]
    except tomllib.TOMLDecodeError as exc:
        return {}, [error(f"invalid TOML: {exc}", source=source)]
    base = ""
    if path.name == "pyproject.toml":
        tool = data.get("tool")
        if not isinstance(tool, dict) or "mcp-codegen" not in tool:
            return {}, [error("no [tool.mcp-codegen] table", source=source)]
        data, base = tool["mcp-codegen"], "/tool/mcp-codegen"
    reader = _Reader(source, path.parent)
    values = reader.top(data, base)
    return values, reader.problems


class _Reader:
    def __init__(self, source: str, folder: Path) -> None:
        self.source = source
        self.folder = folder
        self.problems: list[Problem] = []

    def fail(self, message: str, pointer: str) -> None:
        self.problems.append(error(message, pointer, self.source))

    def keys(self, table: Mapping[str, Any], allowed: tuple[str, ...], pointer: str) -> None:
        for key in table:
            if key not in allowed:
                self.fail(f"unknown key {key!r} (allowed: {', '.join(allowed)})", join(pointer, key))

    def typed(self, table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str, pointer: str) -> Any:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, kind) or (
            isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,))
        ):
            self.fail(f"{key!r} must be {what}, got {type(value).__name__} {value!r}", join(pointer, key))
            return None
        return value

    def strings(self, table: Mapping[str, Any], key: str, pointer: str) -> tuple[str, ...]:
        value = table.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return tuple(value)
        self.fail(f"{key!r} must be a string or a non-empty list of strings", join(pointer, key))
        return ()

    def top(self, data: Any, pointer: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            self.fail("the mcp-codegen settings must be a table", pointer)
            return {}
        self.keys(data, TOP_KEYS, pointer)
        values: dict[str, Any] = {}
        for key, field in (("output", "output"), ("templates", "templates")):
            text = self.typed(data, key, str, "a path", pointer)
            if text is not None:
                values[field] = self.folder / text
        for key, field in (("name", "name"), ("base-url", "base_url")):
            text = self.typed(data, key, str, "a string", pointer)
            if text is not None:
                values[field] = text
        overlays = self.strings(data, "overlays", pointer)
        if overlays:
            values["overlays"] = tuple(str(self.folder / o) if "://" not in o else o for o in overlays)
        for key in ("validate", "deprecated", "compact", "strict"):
            flag = self.typed(data, key, bool, "true or false", pointer)
            if flag is not None:
                values[key] = flag
        for key, lowest, meaning in (("output-depth", -1, "-1 keeps all"), ("input-budget", 0, "0 is no limit")):
            number = self.typed(data, key, int, "an integer", pointer)
            if number is None:
                continue
            if number < lowest:
                self.fail(f"'{key}' must be an integer >= {lowest} ({meaning}), got {number!r}", join(pointer, key))
            else:
                values[key.replace("-", "_")] = number
        timeout = self.typed(data, "timeout", (int, float), "a number of seconds", pointer)
        if timeout is not None:
            if timeout > 0:
                values["timeout"] = float(timeout)
            else:
                self.fail(f"'timeout' must be positive, got {timeout!r}", join(pointer, "timeout"))
        surface = self.typed(data, "surface", str, "'tools', 'discovery' or 'auto'", pointer)
        if surface is not None:
            if surface in ("tools", "discovery", "auto"):
                values["surface"] = surface
            else:
                self.fail(
                    f"'surface' must be 'tools', 'discovery' or 'auto', got {surface!r}", join(pointer, "surface")
                )
        if "pin" in data:
            values["pin"] = self.strings(data, "pin", pointer)
        unmatched = self.typed(data, "unmatched", str, "'include' or 'exclude'", pointer)
        if unmatched is not None:
            if unmatched in ("include", "exclude"):
                values["unmatched"] = unmatched
            else:
                self.fail(f"'unmatched' must be 'include' or 'exclude', got {unmatched!r}", join(pointer, "unmatched"))
        clients = self.strings(data, "client", pointer)
        for client in clients:
            if client not in CLIENTS:
                self.fail(f"'client' {client!r} must be one of {', '.join(CLIENTS)}", join(pointer, "client"))
        if clients:
            values["clients"] = tuple(dict.fromkeys(clients))
        rules = self.typed(data, "rules", list, "an array of tables ([[tool.mcp-codegen.rules]])", pointer)
        if rules is not None:
            values["rules"] = tuple(
                r for i, node in enumerate(rules) if (r := self.rule(node, join(pointer, "rules", i)))
            )
        overrides = self.typed(data, "overrides", dict, "a table of operationId (or 'METHOD /path') -> table", pointer)
        if overrides is not None:
            found = (
                self.override(key, node, join(pointer, "overrides", key)) for key, node in sorted(overrides.items())
            )
            values["overrides"] = tuple(o for o in found if o is not None)
        values.update(self.security(data, pointer))
        return values

    def security(self, data: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        """`security-schemes` and `security` (checked like the spec's x-mcp-security-schemes / x-mcp-security)."""
        values: dict[str, Any] = {}
        schemes = self.typed(data, "security-schemes", dict, "a table of scheme key -> scheme table", pointer)
        if schemes is not None:
            found = [
                p
                for key in sorted(schemes)
                for p in scheme_problems(schemes[key], join(pointer, "security-schemes", key))
            ]
            for message, where in found:
                self.fail(message, where)
            if not found:
                values["security_schemes"] = tuple(
                    (key, json.dumps(schemes[key], sort_keys=True)) for key in sorted(schemes)
                )
        if "security" in data:
            requirements = self.requirements(data["security"], join(pointer, "security"))
            if requirements is not None:
                values["security"] = requirements
        return values

    def requirements(self, node: Any, pointer: str) -> Security | None:
        found = requirement_problems(node, pointer)
        for message, where in found:
            self.fail(message, where)
        return None if found else to_security(node)

    def rule(self, node: Any, pointer: str) -> Rule | None:
        if not isinstance(node, dict):
            self.fail("a rule must be a table", pointer)
            return None
        errors = len(self.problems)
        self.keys(node, RULE_KEYS, pointer)
        action = node.get("action")
        if action not in ("include", "exclude"):
            self.fail(f"'action' must be 'include' or 'exclude', got {action!r}", join(pointer, "action"))
        criteria = {key: self.strings(node, key, pointer) for key in RULE_KEYS[1:]}
        methods = tuple(m.upper() for m in criteria["methods"])
        for method in methods:
            if method.lower() not in METHODS:
                self.fail(f"unknown HTTP method {method!r}", join(pointer, "methods"))
        if not any(criteria.values()) and len(self.problems) == errors:
            self.fail("a rule needs at least one of: tags, paths, methods, operations", pointer)
        if len(self.problems) > errors:
            return None
        return Rule(
            cast(Action, action),
            criteria["tags"],
            criteria["paths"],
            methods,
            criteria["operations"],
            f"{self.source}#{pointer}",
        )

    def override(self, key: str, node: Any, pointer: str) -> Override | None:
        if not isinstance(node, dict):
            self.fail(f"override {key!r} must be a table", pointer)
            return None
        errors = len(self.problems)
        self.keys(node, OVERRIDE_KEYS, pointer)
        name = self.typed(node, "name", str, "a string", pointer)
        if name is not None and not TOOL_NAME.fullmatch(name):
            self.fail(f"tool name {name!r} must match {TOOL_NAME.pattern}", join(pointer, "name"))
        title = self.typed(node, "title", str, "a string", pointer)
        description = self.typed(node, "description", str, "a string", pointer)
        exclude = self.typed(node, "exclude", bool, "true or false", pointer)
        tokens = self.typed(node, "result_tokens", int, "a whole number of tokens", pointer)
        if tokens is not None and tokens < 0:
            self.fail("result_tokens must be a whole number of tokens (0: no budget)", join(pointer, "result_tokens"))
        annotations = self.typed(node, "annotations", dict, "a table", pointer) or {}
        self.keys(annotations, ANNOTATION_KEYS, join(pointer, "annotations"))
        for hint, value in annotations.items():
            expected = str if hint == "title" else bool
            if hint in ANNOTATION_KEYS and not isinstance(value, expected):
                self.fail(
                    f"annotation {hint!r} must be {'a string' if expected is str else 'true or false'}",
                    join(pointer, "annotations", hint),
                )
        security = self.requirements(node["security"], join(pointer, "security")) if "security" in node else None
        if len(self.problems) > errors:
            return None
        return Override(
            key,
            name,
            title,
            description,
            tuple(sorted(annotations.items())),
            exclude,
            f"{self.source}#{pointer}",
            security,
            tokens,
        )


def parse_rule(text: str) -> tuple[Rule | None, Problem | None]:
    """`--rule "exclude tag=admin method=DELETE,PUT"`: an action, then key=value criteria (values comma-separated)."""
    words = text.split()
    source = f"--rule {text!r}"
    if not words or words[0] not in ("include", "exclude"):
        return None, error(f"{source}: must start with 'include' or 'exclude'")
    criteria: dict[str, tuple[str, ...]] = {}
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if not sep or key not in RULE_FLAG_KEYS or not value:
            return None, error(f"{source}: {word!r} is not one of tag=..., path=..., method=..., op=...")
        field = RULE_FLAG_KEYS[key]
        criteria[field] = criteria.get(field, ()) + tuple(v for v in value.split(",") if v)
    if not criteria:
        return None, error(f"{source}: needs at least one of tag=..., path=..., method=..., op=...")
    methods = tuple(m.upper() for m in criteria.get("methods", ()))
    unknown = [m for m in methods if m.lower() not in METHODS]
    if unknown:
        return None, error(f"{source}: unknown HTTP method {unknown[0]!r}")
    action = cast(Action, words[0])
    rule = Rule(
        action, criteria.get("tags", ()), criteria.get("paths", ()), methods, criteria.get("operations", ()), source
    )
    return rule, None
