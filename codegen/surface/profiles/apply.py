"""Apply the named clients' profiles to the ToolSpecs, then check the result with the separate checker.

Order: tool names (every client), argument names (Gemini), then the input schema: root `type: object`
(every client); `$ref` inlining and reshaping for the lossy dialects (Gemini, OpenAI strict). What the
server must undo is stored in the request plan (`RequestPlan.restore`, routes.json `restore`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ...problems import Problem, warning
from ..plans import ToolSpec
from .check import check_tools
from .names import describe_renames, fit_arg_names, fit_names
from .refs import inline_refs
from .rules import Rules
from .shape import Shaper


def apply_profiles(
    tools: Sequence[ToolSpec], clients: Iterable[str], server: str
) -> tuple[list[ToolSpec], list[Problem]]:
    """`server`: the server's name in client configurations (Cursor counts it in every tool name)."""
    rules = Rules.of(clients)
    named = ", ".join(rules.clients)
    problems: list[Problem] = []
    if rules.gemini and rules.strict:
        problems.append(
            warning(
                "gemini and openai together cannot both be met: OpenAI strict mode needs additionalProperties: false "
                "on every object, which Gemini's schema subset does not have; generate one package per client"
            )
        )
    result, renamed = fit_names(tools, rules, server)
    if renamed:
        problems.append(warning(f"{len(renamed)} tool names changed to fit {named}: {describe_renames(renamed)}"))
    shaper = Shaper(rules.gemini, rules.strict) if rules.gemini or rules.strict else None
    args_renamed = cut = 0
    for index, tool in enumerate(result):
        if rules.gemini:
            tool, renames = fit_arg_names(tool, rules)
            args_renamed += len(renames)
        if shaper is None and type(tool.input_schema) is dict and tool.input_schema.get("type") == "object":
            continue  # already what every client takes: no copy
        schema = dict(tool.input_schema)
        if shaper is not None:
            schema, cuts = inline_refs(schema)
            cut += cuts
            schema, restore = shaper.root(schema)
            if restore.get("properties"):
                tool = replace(tool, plan=replace(tool.plan, restore=restore["properties"]))
        schema["type"] = "object"  # every client: the root is an object (our roots always are)
        result[index] = replace(tool, input_schema=schema)
    if args_renamed:
        problems.append(warning(f"{args_renamed} argument names changed to fit {named}"))
    if cut:
        problems.append(warning(f"{cut} recursive or deep $refs in input schemas loosened to fit {named}"))
    # the tool-count cap is checked on what the chosen surface lists (pipeline.generate), not here
    found = check_tools([t.to_json() for t in result], rules.clients, server, listed=0)
    problems += [v.problem() for v in found]
    return result, problems
