"""The discovery surface as a surface: which one `auto` picks (tool count, a client's cap), pins, the settings in
the config file, the meta-tools' contract, and the package it generates (its files, byte-identical whatever the
hash seed). The search itself and its benchmark: test_discovery.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from codegen.config import Config
from codegen.configfile import build_config
from codegen.pipeline import analyze, generate
from codegen.surface.discovery import MAX_TOOLS, META_NAMES, choose, meta_tools

from conftest import PETSTORE, ROOT, mini_spec, write_spec


def test_auto_keeps_small_apis_on_the_tools_surface() -> None:
    _, tools, _ = analyze(Config(spec=str(PETSTORE)))
    surface, _ = choose(tools, "auto", (), "Petstore")
    assert surface.name == "tools" and surface.listed == 20 and 0 < surface.tokens <= 20_000
    assert choose(tools, "discovery", (), "Petstore")[0].name == "discovery"


def many_operations(count: int, pin: int | None = None) -> dict[str, Any]:
    paths = {}
    for i in range(count):
        operation: dict[str, Any] = {
            "operationId": f"getThing{i}",
            "summary": f"Get thing {i}",
            "responses": {"200": {"description": "ok"}},
        }
        if i == pin:
            operation["x-mcp-pin"] = True
        paths[f"/things{i}"] = {"get": operation}
    return mini_spec(paths)


def test_auto_switches_to_discovery_above_the_tool_count_and_pins_list_tools_directly(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, many_operations(MAX_TOOLS + 1, pin=3))
    _, tools, _ = analyze(Config(spec=str(spec)))
    surface, problems = choose(tools, "auto", ("get_thing1?", "GET /things7", "nothing*"), "Mini")
    assert surface.name == "discovery"
    expected = {"get_thing3", "get_thing7", *(f"get_thing{i}" for i in range(10, 20))}  # x-mcp-pin, the globs
    assert set(surface.pinned) == expected and len(surface.pinned) == len(expected)
    assert surface.listed == 4 + len(surface.pinned)
    assert [p.message for p in problems] == ["pin 'nothing*' matches no tool"]
    small = write_spec(tmp_path, many_operations(MAX_TOOLS), "small.yaml")
    assert choose(analyze(Config(spec=str(small)))[1], "auto", (), "Mini")[0].name == "tools"


def test_surface_and_pin_come_from_the_config_file(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, many_operations(2))
    (tmp_path / "mcp-codegen.toml").write_text('surface = "discovery"\npin = ["get_thing0"]\n', encoding="utf-8")
    config, problems = build_config(str(spec), {})
    assert problems == [] and config is not None
    assert config.surface == "discovery" and config.pin == ("get_thing0",)
    config, _ = build_config(str(spec), {"surface": "tools"})
    assert config is not None and config.surface == "tools"
    (tmp_path / "mcp-codegen.toml").write_text('surface = "everything"\n', encoding="utf-8")
    config, problems = build_config(str(spec), {})
    assert config is None and "#/surface" in str(problems[0]) and "'tools', 'discovery' or 'auto'" in str(problems[0])


def test_meta_tools_are_the_contract() -> None:
    tools = meta_tools([], "Empty")
    assert [t["name"] for t in tools] == list(META_NAMES)
    search = tools[0]["inputSchema"]
    assert search["required"] == ["query"] and search["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 8,
        "description": "How many tools to return.",
    }
    hints = {t["name"]: t["annotations"] for t in tools}
    assert hints["call_tool"]["destructiveHint"] and not hints["call_tool"]["readOnlyHint"]
    assert hints["call_read_only_tool"]["readOnlyHint"] and hints["call_read_only_tool"]["openWorldHint"]


def test_discovery_package_files() -> None:
    result = generate(Config(spec=str(PETSTORE), output=Path("petd"), surface="discovery", pin=("get_pet_by_id",)))
    files = dict(result.files)
    meta = json.loads(files["src/petd/discovery.json"])
    assert meta["surface"] == "discovery" and meta["pinned"] == ["get_pet_by_id"]
    assert "snowballstemmer" in files["pyproject.toml"]
    assert "PETD_SURFACE" in files["README.md"]


def test_discovery_output_is_byte_identical_across_hash_seeds(tmp_path: Path) -> None:
    trees = []
    for seed in ("1", "4242"):
        out = tmp_path / f"out{seed}"
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "codegen",
                str(PETSTORE),
                "-o",
                str(out),
                "--name",
                "api",
                "-q",
                "--surface",
                "discovery",
                "--pin",
                "*order*",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        trees.append({str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert trees[0] == trees[1]
    assert "src/api/search.json" in trees[0]


def test_a_named_clients_tool_cap_is_met_by_the_discovery_surface(tmp_path: Path) -> None:
    """Cursor takes at most 40 tools: `auto` serves 41 operations through the discovery surface, with no cap
    violation; `--surface tools` keeps every tool and reports the cap, naming the discovery surface."""
    spec = write_spec(tmp_path, many_operations(41))
    auto = generate(Config(spec=str(spec), output=tmp_path / "auto", clients=("cursor",)))
    assert auto.surface is not None and auto.surface.name == "discovery" and auto.surface.listed <= 40
    assert not [p for p in auto.problems if "more than 40 tools" in p.message]
    forced = generate(Config(spec=str(spec), output=tmp_path / "tools", clients=("cursor",), surface="tools"))
    assert forced.surface is not None and forced.surface.listed == 41
    capped = [p for p in forced.problems if "more than 40 tools" in p.message]
    assert len(capped) == 1 and "discovery surface" in capped[0].message
    fewer = auto.tools[:35]  # under the 40 tools auto keeps listed: only a cap below that switches
    assert choose(fewer, "auto", (), "Mini")[0].name == "tools"
    assert choose(fewer, "auto", (), "Mini", cap=30)[0].name == "discovery"
