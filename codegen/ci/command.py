"""Wire `mcp-codegen ci` together: inputs and context from flags and the environment, servers, then the run."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..problems import Problem
from .inputs import read_context, read_inputs
from .runner import flags_from_args, run
from .servers import servers


def main(flags: Mapping[str, Any], env: Mapping[str, str], cwd: Path) -> int:
    def log(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def fail(problems: list[Problem]) -> int:
        for problem in problems:
            log(str(problem))
        log("error: fix the inputs or the configuration (exit code 2)")
        return 2

    inputs, problems = read_inputs(flags, env)
    if inputs is None:
        return fail(problems)
    context, problems = read_context(env)
    for problem in problems:
        log(str(problem).replace("error:", "warning:", 1))
    workdir = context.workspace if context.workspace is not None and context.workspace.is_dir() else cwd
    extra, rules, problems = flags_from_args(inputs.args)
    if problems:
        return fail(problems)
    given = {**extra, "output": Path(workdir, inputs.output) if inputs.output else None}
    if inputs.overlays:
        given["overlays"] = (*extra.get("overlays", ()), *(str(Path(workdir, o)) for o in inputs.overlays))
    spec = inputs.spec
    if spec is not None and "://" not in spec:
        spec = str(Path(workdir, spec))
    explicit = Path(workdir, inputs.config) if inputs.config else None
    configs, problems = servers(spec, given, rules, explicit, workdir)
    if problems or not configs:
        return fail(problems)
    return run(inputs, context, configs, workdir, log)
