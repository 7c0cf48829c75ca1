"""Size budgets for schemas: which `$defs` a schema reaches, and cutting them to fit.

Cutting only ever loosens: a reference to a definition that is cut becomes its `type` alone (or `{}`), which
accepts every value the full definition accepted. Output schemas are cut at a $ref depth (`loosen`), input
schemas at a size budget in characters of compact JSON (`fit_budget`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Set
from itertools import islice
from typing import Any

from .schemas import Definitions, refs_in

OUTPUT_DEPTH = 0  # default: definitions more than this many $ref hops below an output schema become loose
INPUT_BUDGET = 64_000  # default: characters of an input schema's definitions before deeper ones become loose
# Output-schema keywords that never change which responses validate (annotations), dropped to keep
# tools/list small; `discriminator` is an annotation in 2020-12 and its mapping would name dropped defs.
OUTPUT_ANNOTATIONS = frozenset(
    {"examples", "default", "title", "deprecated", "readOnly", "writeOnly", "discriminator", "$comment"}
)
# Keywords whose subschemas constrain in reverse (or conditionally): loosening inside them could reject
# valid responses, so a loosened output schema drops them, which only accepts more.
OUTPUT_CONTRAVARIANT = frozenset({"not", "if", "then", "else"})
_REFS_IN_KEYS = frozenset({"$defs", "$ref", "mapping"})  # the keys refs_in reads at any level


def loosen(schema: dict[str, Any], defs: Definitions, depth: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """`schema` and its `defs` cut `depth` $ref hops below the root, without annotations (see outputs.build_output).

    A definition's distance is the fewest $ref hops from the root (breadth first); references to
    definitions farther than `depth` become `{"type": <its type>}` (or `{}`), which accepts a superset."""
    kept = frozenset(reach(schema, defs, depth))
    memo = getattr(defs, "memo", None)  # the loosened definitions and root properties depend only on which are kept

    def cut(node: Any, level: int) -> Any:  # level: 0 = the root, 1 = its properties; descriptions below go
        if isinstance(node, list):
            return [cut(v, level) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and _names_cut(ref, kept):
            return _loose(defs.get(ref[len("#/$defs/") :]))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in OUTPUT_ANNOTATIONS or key in OUTPUT_CONTRAVARIANT or (key == "description" and level > 1):
                continue
            if key == "properties" and level == 0 and isinstance(value, dict) and memo is not None:
                out[key] = {k: shared(v) for k, v in value.items()}
            elif key in ("properties", "patternProperties", "dependentSchemas") and isinstance(value, dict):
                out[key] = {k: cut(v, level + 1) for k, v in value.items()}
            elif key in ("enum", "const", "required", "dependentRequired"):
                out[key] = value
            else:
                out[key] = cut(value, level + 2)
        return out

    def shared(member: Any) -> Any:  # a root property (the definitions' own, shared): cut once per kept set
        assert memo is not None
        found = memo.get(("loose member", id(member), kept))
        if found is None:  # found[0] keeps `member` alive: its id is not reused
            found = memo["loose member", id(member), kept] = (member, cut(member, 1))
        return found[1]

    key = ("loose", kept)
    loose_defs = memo.get(key) if memo is not None else None
    if loose_defs is None:
        loose_defs = {name: cut(defs[name], 2) for name in sorted(kept)}
        if memo is not None:
            memo[key] = loose_defs
    result = cut(schema, 0), dict(loose_defs)
    del cut, shared  # the recursive closures are a reference cycle (holding `kept`): freed now, without the collector
    return result


def fit_budget(
    schema: dict[str, Any], defs: Definitions, budget: int | None
) -> tuple[dict[str, Any], dict[str, Any], int | None]:
    """An input schema, the definitions it uses, and the $ref depth they were cut at (None: not cut).

    When the definitions, as compact JSON, exceed `budget` characters, only those at most N $ref hops from
    the root are kept, N the largest that fits (at least 1); a reference to a farther one becomes its type
    and description alone. The server then accepts more there and the upstream API judges the rest: a tool
    whose schema runs to megabytes (a large API's entity graph) is no use to a model either."""
    roots = _roots(schema, defs)
    levels, total = _levels(roots, defs, budget)
    if budget is None or total <= budget:
        memo = getattr(defs, "memo", None)
        used = memo.get(("used", roots)) if memo is not None else None
        if used is None:
            used = {name: defs[name] for name in sorted(name for names, _ in levels for name in names)}
            if memo is not None:
                memo["used", roots] = used
        return schema, used, None  # shared by the tools that reach the same definitions: never modified
    depth, kept = _cut_depth(levels, budget)

    def cut(node: Any) -> Any:
        if isinstance(node, list):
            return [cut(v) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and _names_cut(ref, kept):
            target = defs.get(ref[len("#/$defs/") :])
            out = {**_loose(target), **{k: cut(v) for k, v in node.items() if k != "$ref"}}
            if isinstance(target, dict) and isinstance(target.get("description"), str):
                out.setdefault("description", target["description"])
            return out
        out = {}
        for key, value in node.items():
            if key in ("enum", "const", "default", "examples"):
                out[key] = value
            elif key == "discriminator" and isinstance(value, dict) and isinstance(value.get("mapping"), dict):
                mapping = {k: v for k, v in value["mapping"].items() if not _names_cut(v, kept)}
                out[key] = (
                    {**value, "mapping": mapping} if mapping else {k: v for k, v in value.items() if k != "mapping"}
                )
            else:
                out[key] = cut(value)
        return out

    def cut_definition(name: str) -> Any:  # depends only on which of the names it refers to are cut: shared by
        assert memo is not None  # the kept sets that cut the same ones (and then cleaned once, tools._clean)
        key = ("cut definition", name, defs.refs(name) - kept)
        found = memo.get(key)
        if found is None:
            found = memo[key] = cut(defs[name])
        return found

    # the cut definitions depend only on which are kept: tools that reach the same ones share them
    memo = getattr(defs, "memo", None)
    key = ("cut", kept)
    kept_defs = memo.get(key) if memo is not None else None
    if kept_defs is None:
        kept_defs = {name: cut(defs[name]) if memo is None else cut_definition(name) for name in sorted(kept)}
        if memo is not None:
            memo[key] = kept_defs
    result = cut(schema), dict(kept_defs), depth
    del cut, cut_definition  # as in loosen: no reference cycle left for the collector
    return result


def _roots(schema: dict[str, Any], defs: Definitions) -> frozenset[str]:
    """The `$defs` names `schema` refers to (refs_in), each property's remembered by its id: argument schemas are
    shared by the tools that have the same argument (inputs._param_schema), and some hold long enums."""
    props = schema.get("properties")
    memo = getattr(defs, "memo", None)
    if memo is None or not isinstance(props, dict) or not _REFS_IN_KEYS.isdisjoint(props):
        return frozenset(refs_in(schema))  # a property named like a keyword refs_in reads: walked as refs_in does
    names = set(refs_in({key: value for key, value in schema.items() if key != "properties"}))
    known = memo.get("refs")  # id of a property's schema -> (it, kept alive: its id is not reused; its names)
    if known is None:
        known = memo["refs"] = {}
    for value in props.values():
        found = known.get(id(value))
        if found is None:
            found = known[id(value)] = (value, frozenset(refs_in(value)))
        if found[1]:
            names |= found[1]
    return frozenset(names)


def _cut_depth(levels: list[tuple[list[str], int]], budget: int) -> tuple[int, frozenset[str]]:
    """The deepest $ref level whose definitions fit `budget` (at least 1) and the definitions kept at it."""
    depth, total = 1, levels[0][1] if levels else 0
    while depth < len(levels) and total + levels[depth][1] <= budget:
        total += levels[depth][1]
        depth += 1
    return depth, frozenset(name for names, _ in levels[:depth] for name in names)


def _levels(roots: frozenset[str], defs: Definitions, budget: int | None) -> tuple[list[tuple[list[str], int]], int]:
    """The definitions `roots` reach, level by level ($ref hops 1, 2, ...: names and their characters together),
    and their characters in all: breadth first, stopping at the first level that takes the total over `budget`
    (the levels below it are cut whatever they hold, so they are neither walked nor converted). Remembered per
    set of roots: the tools of one resource share one walk."""
    memo = getattr(defs, "memo", None)
    found = memo.get(("levels", roots, budget)) if memo is not None else None
    if found is None:
        levels: list[tuple[list[str], int]] = []
        total = 0
        for level in _breadth_first(roots, defs):
            size = defs.total_size(level)
            levels.append((level, size))
            total += size
            if budget is not None and total > budget:
                break
        found = levels, total
        if memo is not None:
            memo["levels", roots, budget] = found
    return found


def _names_cut(ref: Any, kept: Set[str]) -> bool:
    return isinstance(ref, str) and ref.startswith("#/$defs/") and ref[len("#/$defs/") :] not in kept


def _loose(target: Any) -> dict[str, Any]:
    """What stands for a cut definition: its own `type`, which holds for every value it accepts, or {}."""
    return {"type": target["type"]} if isinstance(target, dict) and "type" in target else {}


def reach(schema: Mapping[str, Any], defs: Definitions, depth: int | None = None) -> dict[str, int]:
    """The definitions `schema` reaches (within `depth` $ref hops, if given): name -> fewest hops.

    The walk depends only on the names `schema` refers to, so it is remembered per definition set: the
    tools of one resource share their roots (a large API's tools walk the same graph many times)."""
    roots = _roots(schema, defs) if isinstance(schema, dict) else frozenset(refs_in(schema))
    memo = getattr(defs, "memo", None)
    if memo is None:
        return _reach(roots, defs, depth)
    found = memo.get((roots, depth))
    if found is None:
        found = memo[roots, depth] = _reach(roots, defs, depth)
    return dict(found)


def _reach(roots: frozenset[str], defs: Definitions, depth: int | None) -> dict[str, int]:
    """Breadth first from `roots`: name -> its level."""
    distance: dict[str, int] = {}
    for hops, level in enumerate(islice(_breadth_first(roots, defs), depth), start=1):
        distance.update(dict.fromkeys(level, hops))
    return distance


def _breadth_first(roots: frozenset[str], defs: Definitions) -> Iterator[list[str]]:
    """The definitions `roots` reach, a $ref level at a time (hops 1, 2, ...), each name once. A level's own
    references are read (which converts its definitions) before it is handed out."""
    seen: set[str] = set()
    frontier = set(roots)
    known, refs = defs.__contains__, defs.refs
    while frontier:
        level = [name for name in frontier if known(name)]
        if not level:
            return
        seen.update(level)
        below: set[str] = set()
        for name in level:
            below |= refs(name)
        yield level
        frontier = below - seen


def prune_defs(schema: Mapping[str, Any], defs: Definitions) -> dict[str, Any]:
    """Only the definitions reachable from `schema` (its own `$defs` excluded), sorted by name."""
    return {name: defs[name] for name in sorted(reach(schema, defs))}
