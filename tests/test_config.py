"""Settings: found in mcp-codegen.toml next to the spec or [tool.mcp-codegen] in a pyproject.toml, overridden
by flags, merged once into one frozen Config; include/exclude rules, deprecated, per-operation overrides from
the config and from the spec's x-mcp-* extensions; unknown keys are errors that name the key and its place."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from codegen.config import Config
from codegen.configfile import build_config
from codegen.emit.files import as_text
from codegen.pipeline import analyze, generate
from codegen.problems import Level
from conftest import mini_spec, write_spec
from test_cli import run


def op(operation_id: str, *tags: str, **extra: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "tags": list(tags), "responses": {"200": {"description": "ok"}}, **extra}


ZOO: dict[str, Any] = mini_spec(
    {
        "/pets": {
            "get": op(
                "listPets",
                "pets",
                description="Every animal in the zoo, newest first.\n\nAnd what --compact leaves out.",
            ),
            "post": op("createPet", "pets"),
        },
        "/pets/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": op(
                "getPet",
                "pets",
                **{
                    "x-mcp-name": "fetch_pet",
                    "x-mcp-title": "Fetch one pet",
                    "x-mcp-description": "One pet by id.",
                    "x-mcp-annotations": {"openWorldHint": False},
                },
            ),
            "delete": op("deletePet", "pets", "admin"),
        },
        "/admin/users": {"get": op("listUsers", "admin", **{"x-mcp-exclude": True})},
        "/admin/stats": {"get": op("adminStats", "admin")},
        "/legacy": {"get": op("oldThing", "legacy", deprecated=True)},
    },
    servers=[{"url": "https://zoo.example.com/v1"}],
)


@pytest.fixture
def zoo(tmp_path: Path) -> Path:
    return write_spec(tmp_path, ZOO)


def config_for(spec: Path, toml: str | None = None, flags: dict[str, Any] | None = None, *rules: str) -> Config:
    if toml is not None:
        (spec.parent / "mcp-codegen.toml").write_text(toml, encoding="utf-8")
    config, problems = build_config(str(spec), flags or {}, rules, cwd=spec.parent)
    assert config is not None, [str(p) for p in problems]
    return config


def tools_of(config: Config) -> dict[str, dict[str, Any]]:
    api, tools, problems = analyze(config)
    assert not [p for p in problems if p.level is Level.ERROR], [str(p) for p in problems]
    return {tool.name: tool.to_json() for tool in tools}


def test_config_is_frozen_and_merged_once(zoo: Path) -> None:
    config = config_for(zoo, 'base-url = "https://file.example.com"\ntimeout = 5\n', {"timeout": 9.0})
    assert config.base_url == "https://file.example.com"  # from the file
    assert config.timeout == 9.0  # the flag wins over the file
    assert config.config_file == zoo.parent / "mcp-codegen.toml"
    relative = config_for(zoo, 'output = "generated/zoo"\ntemplates = "tpl"\n')
    assert (relative.output, relative.templates) == (
        zoo.parent / "generated/zoo",
        zoo.parent / "tpl",
    )  # beside the file
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.timeout = 1.0  # type: ignore[misc]


def test_size_settings_come_from_the_file_and_flags_beat_them(zoo: Path) -> None:
    """--check in CI must see the same size settings as the generation: they can live in the config file."""
    defaults = config_for(zoo)
    assert (defaults.output_depth, defaults.input_budget, defaults.compact) == (0, 64_000, False)
    toml = "output-depth = -1\ninput-budget = 0\ncompact = true\n"
    from_file = config_for(zoo, toml)
    assert (from_file.output_depth, from_file.input_budget, from_file.compact) == (-1, 0, True)
    flags = config_for(zoo, toml, {"output_depth": 2, "input_budget": 1000, "compact": False})
    assert (flags.output_depth, flags.input_budget, flags.compact) == (2, 1000, False)
    out = zoo.parent / "out"
    assert run(zoo, "-o", out).returncode == 0  # compact, from the file
    assert "outputSchema" not in (out / "src/out/tools.json").read_text()
    assert run(zoo, "-o", out, "--check").returncode == 0
    assert run(zoo, "-o", out, "--check", "--no-compact").returncode == 1  # a flag still wins


def test_spec_extensions_rename_retitle_describe_annotate_and_exclude(zoo: Path) -> None:
    tools = tools_of(config_for(zoo))
    assert "list_users" not in tools  # x-mcp-exclude: true
    assert "get_pet" not in tools
    pet = tools["fetch_pet"]
    assert pet["annotations"]["title"] == "Fetch one pet" and "title" not in pet  # listed once
    assert pet["description"] == "One pet by id."
    assert pet["annotations"]["openWorldHint"] is False
    assert pet["annotations"]["readOnlyHint"] is True  # the derived hints stay


def test_config_overrides_beat_spec_extensions(zoo: Path) -> None:
    toml = """
[overrides.getPet]
name = "pet_by_id"
annotations = { openWorldHint = true, idempotentHint = false }

[overrides."POST /pets"]
title = "Adopt a pet"
description = "Adds a pet."

[overrides.listUsers]
exclude = false
"""
    tools = tools_of(config_for(zoo, toml))
    assert "fetch_pet" not in tools and "pet_by_id" in tools
    pet = tools["pet_by_id"]
    assert pet["annotations"]["title"] == "Fetch one pet"  # the spec's x-mcp-title applies where the config is silent
    assert "openWorldHint" not in pet["annotations"]  # the default
    # a read-only tool's unlisted idempotentHint reads as true (annotations.implied): false has to be listed
    assert pet["annotations"]["idempotentHint"] is False
    adopt = tools["create_pet"]
    assert (adopt["annotations"]["title"], adopt["description"]) == ("Adopt a pet", "Adds a pet.")
    assert "list_users" in tools  # the config un-excludes what the spec excluded


def test_rules_are_tried_in_order_first_match_wins(zoo: Path) -> None:
    toml = """
unmatched = "exclude"

[[rules]]
action = "include"
operations = "adminStats"

[[rules]]
action = "exclude"
tags = ["admin"]

[[rules]]
action = "include"
paths = "/pets*"
methods = ["GET", "delete"]
"""
    names = sorted(tools_of(config_for(zoo, toml)))
    # adminStats: first rule; deletePet: admin tag (2nd rule) before the path rule; createPet: POST not listed;
    # oldThing: matches nothing, and unmatched = exclude
    assert names == ["admin_stats", "fetch_pet", "list_pets"]


def test_rule_flags_come_before_the_files_rules(zoo: Path) -> None:
    toml = '[[rules]]\naction = "exclude"\ntags = "pets"\n'
    assert sorted(tools_of(config_for(zoo, toml))) == ["admin_stats", "old_thing"]
    config = config_for(zoo, toml, {}, "include op=*Pet method=POST,DELETE")
    assert sorted(tools_of(config)) == ["admin_stats", "create_pet", "delete_pet", "old_thing"]


def test_deprecated_operations_in_and_out(zoo: Path) -> None:
    assert "old_thing" in tools_of(config_for(zoo))
    assert "old_thing" not in tools_of(config_for(zoo, "deprecated = false\n"))
    assert "old_thing" in tools_of(config_for(zoo, "deprecated = false\n", {"deprecated": True}))


def test_pyproject_table_and_generated_defaults(zoo: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\n\n[tool.mcp-codegen]\nbase-url = "https://staging.zoo.example.com"\n'
        'timeout = 12.5\nname = "zoo-mcp"\n',
        encoding="utf-8",
    )
    config, problems = build_config(str(zoo), {"output": tmp_path / "out"}, cwd=project)
    assert config is not None and problems == []
    result = generate(config)
    settings = result.files["src/zoo_mcp/settings.py"]
    assert 'DEFAULT_BASE_URL: str | None = "https://staging.zoo.example.com"' in settings
    assert "DEFAULT_TIMEOUT = 12.5" in settings
    assert "ZOO_MCP_BASE_URL" in result.files["README.md"]


def test_mcp_codegen_toml_next_to_the_spec_wins_over_pyproject(zoo: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.mcp-codegen]\ntimeout = 1\n", encoding="utf-8")
    config = config_for(zoo, "timeout = 2\n")
    assert config.timeout == 2.0
    explicit, _ = build_config(str(zoo), {}, explicit=project / "pyproject.toml", cwd=project)
    assert explicit is not None and explicit.timeout == 1.0


@pytest.mark.parametrize(
    ("toml", "where", "key"),
    [
        ("timeuot = 3\n", "mcp-codegen.toml#/timeuot", "'timeuot'"),
        ('[[rules]]\naction = "exclude"\ntag = "admin"\n', "mcp-codegen.toml#/rules/0/tag", "'tag'"),
        ('[overrides.getPet]\nnmae = "x"\n', "mcp-codegen.toml#/overrides/getPet/nmae", "'nmae'"),
        (
            "[overrides.getPet.annotations]\nreadOnly = true\n",
            "mcp-codegen.toml#/overrides/getPet/annotations/readOnly",
            "'readOnly'",
        ),
    ],
)
def test_unknown_keys_are_errors_naming_key_and_location(zoo: Path, toml: str, where: str, key: str) -> None:
    (zoo.parent / "mcp-codegen.toml").write_text(toml, encoding="utf-8")
    result = run(zoo, "-o", zoo.parent / "out")
    assert result.returncode == 2
    line = next(line for line in result.stderr.splitlines() if line.startswith("error:") and key in line)
    assert where in line and "unknown key" in line
    assert not (zoo.parent / "out").exists()


def test_unknown_key_in_pyproject_names_the_tool_table(zoo: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.mcp-codegen]\nbase_url = 'x'\n", encoding="utf-8")
    result = run(zoo, "-o", tmp_path / "out", cwd=project)
    assert result.returncode == 2
    assert "pyproject.toml#/tool/mcp-codegen/base_url: unknown key 'base_url'" in result.stderr


def test_bad_values_and_bad_rule_flags(zoo: Path) -> None:
    (zoo.parent / "mcp-codegen.toml").write_text(
        'timeout = "soon"\noutput-depth = -2\ninput-budget = 1.5\n[[rules]]\naction = "drop"\ntags = "x"\n'
    )
    result = run(zoo, "-o", zoo.parent / "out")
    assert result.returncode == 2
    assert "mcp-codegen.toml#/timeout: 'timeout' must be a number of seconds" in result.stderr
    assert (
        "mcp-codegen.toml#/output-depth: 'output-depth' must be an integer >= -1 (-1 keeps all), got -2"
        in result.stderr
    )
    assert "mcp-codegen.toml#/input-budget: 'input-budget' must be an integer, got float 1.5" in result.stderr
    assert "mcp-codegen.toml#/rules/0/action: 'action' must be 'include' or 'exclude'" in result.stderr
    (zoo.parent / "mcp-codegen.toml").unlink()
    flag = run(zoo, "-o", zoo.parent / "out", "--rule", "exclude colour=red")
    assert flag.returncode == 2 and "'colour=red' is not one of tag=..., path=..., method=..., op=..." in flag.stderr


def test_spec_extension_problems_are_warnings_with_pointers(zoo: Path) -> None:
    spec = json.loads(json.dumps(ZOO))
    spec["paths"]["/pets"]["get"]["x-mcp-annotations"] = {"readOnlyHint": "yes"}
    spec["paths"]["/pets"]["post"]["x-mcp-nmae"] = "x"
    spec["paths"]["/pets"]["post"]["x-mcp-name"] = "list_pets"  # clashes with the other tool
    path = write_spec(zoo.parent, spec, "bad.yaml")
    api, tools, problems = analyze(Config(spec=str(path)))
    found = {(p.level, p.pointer, p.message.split(":")[0]) for p in problems}
    assert (
        Level.WARNING,
        "/paths/~1pets/get/x-mcp-annotations/readOnlyHint",
        "annotation 'readOnlyHint' is unknown or has the wrong type; ignored",
    ) in found
    assert any(p.pointer == "/paths/~1pets/post/x-mcp-nmae" and "unknown extension" in p.message for p in problems)
    clash = [p for p in problems if p.pointer == "/paths/~1pets/post/x-mcp-name"]
    assert clash and clash[0].level is Level.ERROR and "another tool has that name" in clash[0].message
    assert sorted(t.name for t in tools if t.plan.path == "/pets") == ["create_pet", "list_pets"]


def test_templates_that_name_the_data_files_variables_see_them_whole(zoo: Path, tmp_path: Path) -> None:
    """tools.json, routes.json (and the discovery data) are written as their variables' text without Jinja; a user's
    template that names those variables still gets them whole, and a user's tools.json template is rendered."""
    default = generate(Config(spec=str(zoo), output=tmp_path / "a", name="zoo"))
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "README.md.jinja").write_text("{{ tools_json }}|{{ routes_json | length }}\n", encoding="utf-8")
    (templates / "tools.json.jinja").write_text("{{ tools_json }}", encoding="utf-8")  # no newline: not the data
    custom = generate(Config(spec=str(zoo), output=tmp_path / "b", name="zoo", templates=templates))
    listing, routes = as_text(default.files["src/zoo/tools.json"]), default.files["src/zoo/routes.json"]
    assert listing.endswith("]\n") and routes.endswith("}\n")
    assert custom.files["README.md"] == f"{listing[:-1]}|{len(routes) - 1}\n"
    assert custom.files["src/zoo/tools.json"] == listing[:-1]
    assert custom.files["src/zoo/routes.json"] == routes


def test_override_that_matches_nothing_is_a_warning(zoo: Path) -> None:
    config = config_for(zoo, '[overrides.noSuchOperation]\ntitle = "x"\n')
    _, _, problems = analyze(config)
    assert any(
        p.level is Level.WARNING and "matches no operation" in p.message and p.pointer == "/overrides/noSuchOperation"
        for p in problems
    )


def test_templates_folder_overrides_a_builtin_template_by_file_name(zoo: Path, tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "README.md.jinja").write_text(
        "# {{ project.dist }}\n\n{% for tool in tools %}- {{ tool.name }}: {{ tool.title }}\n{% endfor %}",
        encoding="utf-8",
    )
    out = tmp_path / "custom"
    result = run(zoo, "-o", out, "--templates", templates, "-q")
    assert result.returncode == 0, result.stderr
    readme = (out / "README.md").read_text()
    assert readme.startswith("# custom\n\n- admin_stats: List admin stats\n")
    assert "- fetch_pet: Fetch one pet\n" in readme
    assert "def build_server" in (out / "src" / "custom" / "server.py").read_text()  # the rest is built in
    # a template that uses an unknown variable is an error naming the template, and nothing is written
    (templates / "README.md.jinja").write_text("{{ no_such_variable }}\n", encoding="utf-8")
    broken = run(zoo, "-o", tmp_path / "broken", "--templates", templates)
    assert broken.returncode == 1
    assert "template README.md.jinja" in broken.stderr and "no_such_variable" in broken.stderr
    assert not (tmp_path / "broken").exists()


def test_a_template_under_a_name_it_no_longer_has_is_named_in_a_warning(zoo: Path, tmp_path: Path) -> None:
    """server/http.py.jinja was a part of server.py; its override would now be ignored without a word."""
    templates = tmp_path / "templates"
    (templates / "server").mkdir(parents=True)
    (templates / "server" / "http.py.jinja").write_text("# my transport\n", encoding="utf-8")
    result = run(zoo, "-o", tmp_path / "out", "--templates", templates)
    assert result.returncode == 0, result.stderr
    assert "server/http.py.jinja is no longer a template (now web.py.jinja)" in result.stderr
