"""A config file picked up without --config is announced on stderr, with a warning when it sets templates
(code that writes the generated package); a config file cannot widen the $ref sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from codegen.configfile import build_config, found_notice
from conftest import mini_spec, write_spec

SPEC = mini_spec({"/a": {"get": {"operationId": "getA", "responses": {"200": {"description": "ok"}}}}})


def test_notice_names_the_file_and_templates(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, SPEC)
    toml = tmp_path / "mcp-codegen.toml"
    toml.write_text('name = "zoo"\n')
    config, _ = build_config(str(spec), {}, cwd=tmp_path)
    assert config is not None
    assert found_notice(config, None) == f"note: using settings from {toml} (found without --config)"
    assert found_notice(config, toml) is None  # named on the command line: nothing to tell
    toml.write_text('templates = "tpl"\n')
    config, _ = build_config(str(spec), {}, cwd=tmp_path)
    assert config is not None
    notice = found_notice(config, None) or ""
    assert str(toml) in notice and f"templates = {tmp_path / 'tpl'}" in notice and "code" in notice


def test_no_config_file_no_notice(tmp_path: Path) -> None:
    config, _ = build_config(str(write_spec(tmp_path, SPEC)), {}, cwd=tmp_path)
    assert config is not None and found_notice(config, None) is None


def test_config_file_cannot_widen_the_sandbox(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, SPEC)
    (tmp_path / "mcp-codegen.toml").write_text('ref-root = "/"\nallow-remote-refs = true\n')
    config, problems = build_config(str(spec), {}, cwd=tmp_path)
    assert config is None and {p.pointer for p in problems} == {"/ref-root", "/allow-remote-refs"}


def test_cli_says_so_on_stderr(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, SPEC)
    (tmp_path / "mcp-codegen.toml").write_text('templates = "tpl"\n')
    done = subprocess.run(
        [sys.executable, "-m", "codegen", "diff", str(spec), str(spec)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"note: using settings from {tmp_path / 'mcp-codegen.toml'}" in done.stderr and "templates" in done.stderr
