"""Which servers a CI run (or a pre-commit hook) covers, as one Config each.

With a spec given (flag or the Action's `spec` input), that one spec and the usual config lookup. Without, the
project's config file lists them, so hooks need no arguments:

    spec = "api/openapi.yaml"          # one server: the top-level keys are its settings
    output = "mcp-server"

    compact = true                     # or several: top-level keys are shared defaults ...
    [[servers]]                        # ... and each table adds or overrides keys for one spec
    spec = "apis/billing.yaml"
    output = "servers/billing"

The file is `--config FILE`, else `mcp-codegen.toml` in the current folder, else `pyproject.toml`'s
`[tool.mcp-codegen]` (`[[tool.mcp-codegen.servers]]` there). Paths in it are relative to the file.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..config import Config
from ..configfile import CONFIG_NAME, _Reader, build_config, parse_rule
from ..problems import Problem, error, join


def servers(
    spec: str | None, flags: Mapping[str, Any], rule_flags: tuple[str, ...], explicit: Path | None, cwd: Path
) -> tuple[list[Config], list[Problem]]:
    """One Config per server; flags (`None`: not given) override every server's settings."""
    if spec is not None:
        config, problems = build_config(spec, flags, rule_flags, explicit, cwd)
        return ([config] if config is not None else []), problems
    path = explicit or _project_config(cwd)
    if path is None:
        return [], [error(f"no spec given, and no {CONFIG_NAME} or [tool.mcp-codegen] in {cwd} to list one")]
    return _from_file(path, flags, rule_flags)


def _project_config(cwd: Path) -> Path | None:
    if (cwd / CONFIG_NAME).is_file():
        return cwd / CONFIG_NAME
    pyproject = cwd / "pyproject.toml"
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return pyproject  # reading it again reports the problem
    tool = data.get("tool")
    return pyproject if isinstance(tool, dict) and "mcp-codegen" in tool else None


def _from_file(path: Path, flags: Mapping[str, Any], rule_flags: tuple[str, ...]) -> tuple[list[Config], list[Problem]]:
    source = str(path)
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return [], [error(f"cannot read config file: {exc}", source=source)]
    base = ""
    if path.name == "pyproject.toml":
        data, base = (data.get("tool") or {}).get("mcp-codegen"), "/tool/mcp-codegen"
    if not isinstance(data, dict):
        return [], [error("the mcp-codegen settings must be a table", base, source)]
    shared = {key: value for key, value in data.items() if key not in ("spec", "servers")}
    tables: list[tuple[str, Any]] = []
    if "servers" in data:
        listed = data["servers"]
        if not isinstance(listed, list) or not listed:
            return [], [error("'servers' must be a non-empty array of tables", join(base, "servers"), source)]
        tables = [(join(base, "servers", i), table) for i, table in enumerate(listed)]
    elif "spec" in data:
        tables = [(base, {"spec": data["spec"]})]
    else:
        return [], [error("no 'spec' key and no [[servers]] tables: nothing to generate", base, source)]
    configs: list[Config] = []
    problems: list[Problem] = []
    for pointer, table in tables:
        if not isinstance(table, dict) or not isinstance(table.get("spec"), str) or "servers" in table:
            problems.append(error("a server needs a 'spec' string (and no nested 'servers')", pointer, source))
            continue
        reader = _Reader(source, path.parent)
        values = reader.top({**shared, **{k: v for k, v in table.items() if k != "spec"}}, pointer)
        problems += reader.problems
        spec = table["spec"] if "://" in table["spec"] else str(path.parent / table["spec"])
        configs.append(Config(spec=spec, config_file=path, **values))
    cli_rules = []
    for text in rule_flags:
        rule, problem = parse_rule(text)
        problems += [problem] if problem is not None else []
        cli_rules += [rule] if rule is not None else []
    if problems:
        return [], problems
    given = {key: value for key, value in flags.items() if value is not None and key != "overlays"}
    return [
        replace(
            config,
            **given,
            rules=(*cli_rules, *config.rules),
            overlays=(*config.overlays, *(flags.get("overlays") or ())),
        )
        for config in configs
    ], []
