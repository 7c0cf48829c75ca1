"""map_tools on a large API in two processes: the same tools and problems, in the same order, sooner.

The operations (sorted by path and method) are cut in two runs: this process maps the first, a forked helper the
last (each with its own SchemaConverter), and the helper sends its tools and problems back through a pipe. The
helper starts before the operations are read (`share_early`): it reads those of the last paths itself (normalize,
given the document with only those paths) while this process reads them all, then maps them.

The helper's run is used only when it is the one this process would have made after its own:
- its tools are named as if its operations were the API's: each must have the name this process gives that
  operation (two operations can want one name, and the first keeps it);
- a definition converts the same whichever process meets it first, with three exceptions that make mapping
  depend on the order, watched here: an allOf that reaches back into a definition being converted, two
  definitions given one `$defs` name (the first met keeps it) and met first in another order, and a document
  read while reading or mapping the operations.
Otherwise, as when the helper fails, cannot start or takes too long, its run is mapped here, after this
process's, as one process would have.

A helper is started only when it pays: enough operations, and a helper may start (codegen/forked.py: a safe fork,
a CPU idle now, helpers not switched off).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from .. import forked
from ..problems import Problem
from ..spec.model import METHODS, Dialect, Operation
from ..spec.refs import Ref, Resolver
from .plans import ToolSpec
from .schema_nodes import Direction
from .schemas import SchemaConverter

SHARE_OPERATIONS = 1000  # below this, mapped here only: a helper's start, and the definitions both convert, cost more
HELPER_SHARE = 0.55  # of the operations, the helper's (the last ones): it reads only those, but pickles its tools
HELPER_TIMEOUT = forked.TIMEOUT  # seconds the helper may take beyond this process's run before its run is mapped here

Mapper = Callable[[Sequence[Operation], SchemaConverter, list[Problem]], list[ToolSpec]]  # each operation's tool
Shaper = Callable[[list[ToolSpec], list[Problem]], list[ToolSpec]]  # each tool with its results (with_results)
_FIELDS = tuple(f.name for f in fields(ToolSpec) if f.name != "operation")  # what the helper sends of a tool
Names = Mapping[tuple[str, str], str]  # (path, method) -> the operation's tool name


@dataclass(frozen=True)
class Early:
    """A helper started before the operations were read: it reads and maps those of the paths from `first` on
    (sorted), and sends a Part."""

    helper: forked.Helper[Any]
    first: str


def share_early(paths: Any, resolver: Resolver, work: Callable[[list[str]], Part | None]) -> Early | None:
    """A helper doing `work` on the last paths of the document's `paths` (about HELPER_SHARE of its operations),
    when a helper pays (see _cut); None otherwise. `work` reads those paths' operations and maps them (map_part)."""
    if not isinstance(paths, dict) or not _single_document(resolver):
        return None
    keys = sorted(paths)
    counts = [sum(key in item for key in METHODS) if isinstance(item, dict) else 0 for item in map(paths.get, keys)]
    total = sum(counts)
    start = _cut(total, resolver)
    if start is None:
        return None
    first, seen = len(keys), 0
    while first > 1 and seen < total - start:  # the last paths, until they hold the helper's share
        first -= 1
        seen += counts[first]
    theirs = keys[first:]
    if not theirs:
        return None

    def run() -> Part | None:
        part = work(theirs)
        return part if _single_document(resolver) else None  # reading them read a document: mapped here

    helper: forked.Helper[Any] = forked.Helper(run)
    if not helper.started:
        return None
    return Early(helper, theirs[0])


def map_part(
    operations: Sequence[Operation], resolver: Resolver, dialect: Dialect, mapped: Mapper, shaped: Shaper
) -> Part | None:
    """The early helper's run of its operations (Early)."""
    return _run(operations, _Watched(resolver, dialect), mapped, shaped)


def map_operations(
    operations: Sequence[Operation],
    resolver: Resolver,
    dialect: Dialect,
    mapped: Mapper,
    shaped: Shaper,
    early: Early | None = None,
    names: Names | None = None,
    waiting: Callable[[], None] | None = None,
) -> tuple[list[ToolSpec], list[Problem]]:
    """The operations' tools, and the problems found mapping them, then shaping their results, then converting
    schemas, as one process finds them (`mapped` and `shaped` append to the list they are given). `early`: a
    helper already reading and mapping the last paths' operations (share_early; without one, all are mapped
    here); its tools must have the `names` given here. `waiting`: work for this process once its run is mapped,
    while the helper sends its own."""
    cut = _early_cut(operations, early.first, resolver) if early is not None else None
    if early is None or cut is None:
        if early is not None:
            early.helper.end()
        converter = SchemaConverter(resolver, dialect)
        found: list[Problem] = []
        tools = mapped(operations, converter, found)
        shaping: list[Problem] = []
        return shaped(tools, shaping), found + shaping + converter.problems
    mine, theirs = operations[:cut], operations[cut:]
    here = _Watched(resolver, dialect)
    with early.helper as helper:
        found = []
        tools = mapped(mine, here, found)
        shaping = []
        tools = shaped(tools, shaping)
        if waiting is not None:
            waiting()
        part = None if here.order_dependent() else helper.result(HELPER_TIMEOUT)  # else theirs is mapped here, after
        part = part if isinstance(part, Part) else None
    if part is None or not _consistent(here, part) or not _same_tools(theirs, part, names):
        more: list[Problem] = []
        also = mapped(theirs, here, more)
        more_shaping: list[Problem] = []
        also = shaped(also, more_shaping)
        return tools + also, found + more + shaping + more_shaping + here.problems
    for key, problem in part.converter_problems.items():
        here._problems.setdefault(key, problem)  # this process's first, as when one process reports both
    also = [ToolSpec(**dict(zip(_FIELDS, values)), operation=op) for values, op in zip(part.tools, theirs)]
    return tools + also, found + part.found + shaping + part.shaping + here.problems


# -- when a helper pays --------------------------------------------------------------------------------------------
def _cut(count: int, resolver: Resolver) -> int | None:
    """Where the helper's operations would begin among `count`; None when a helper does not pay or is not safe."""
    if count < max(SHARE_OPERATIONS, 2) or not _single_document(resolver) or not forked.available():
        return None
    return max(1, min(count - 1, count - int(count * HELPER_SHARE)))


def _early_cut(operations: Sequence[Operation], first: str, resolver: Resolver) -> int | None:
    """Where the early helper's operations begin (those of the paths from `first` on); None when it has none, or
    they are all, or reading the operations read another document."""
    if not _single_document(resolver):
        return None
    cut = next((i for i, op in enumerate(operations) if op.path >= first), len(operations))
    return cut if 0 < cut < len(operations) else None


def _single_document(resolver: Resolver) -> bool:
    """Whether no document besides the root was read (or failed to be): a spec in several documents is mapped
    here, so that the documents are read in one order (the limit on their number counts them as they come)."""
    store = resolver.documents.store
    return store is not None and store.reads == 0 and not store.failures and len(store.docs) == 1


# -- what makes mapping depend on the order ------------------------------------------------------------------------
class _Guard(set[tuple[Ref, Direction]]):
    """The converter's definitions being converted, counting the times one was found among them: an allOf that
    reaches back into a definition being converted keeps its reference, so that definition's conversion depends
    on where the converter met it first (schemas.SchemaConverter._merge_referenced)."""

    hits = 0

    def __contains__(self, key: object) -> bool:
        found = set.__contains__(self, key)
        if found:
            self.hits += 1
        return found


class _Watched(SchemaConverter):
    """A SchemaConverter that tells whether what it converted could depend on the order it converted it in."""

    def __init__(self, resolver: Resolver, dialect: Dialect) -> None:
        super().__init__(resolver, dialect)
        self._converting = _Guard()

    def order_dependent(self) -> bool:
        """Whether an allOf met a definition being converted. (Otherwise each definition converts the same
        wherever it is met first, and the definitions a process meets first are met in the same order as one
        process meets them -- what the other process met first aside: see _consistent.)"""
        assert isinstance(self._converting, _Guard)
        return self._converting.hits > 0


@dataclass(frozen=True)
class Part:
    """What the helper sends back: its tools (without their operation, which this process has), the problems it
    found mapping, then shaping, its converter's problems by key, and the `$defs` names it gave."""

    tools: list[tuple[Any, ...]]
    keys: list[tuple[str, str]]  # each tool's operation: (path, method)
    found: list[Problem]
    shaping: list[Problem]
    converter_problems: dict[tuple[str, str, str], Problem]
    named: dict[str, Ref]


def _run(operations: Sequence[Operation], converter: _Watched, mapped: Mapper, shaped: Shaper) -> Part | None:
    """The helper's mapping; None when its tools could depend on the order (see the module's docstring). (A
    document read meanwhile is seen by share_early.)"""
    found: list[Problem] = []
    tools = mapped(operations, converter, found)
    shaping: list[Problem] = []
    tools = shaped(tools, shaping)
    if converter.order_dependent() or len(tools) != len(operations):
        return None
    sent = [tuple(getattr(tool, name) for name in _FIELDS) for tool in tools]
    keys = [(op.path, op.method) for op in operations]
    return Part(sent, keys, found, shaping, dict(converter._problems), dict(converter._named))


def _same_tools(operations: Sequence[Operation], part: Part, names: Names | None) -> bool:
    """Whether the helper's tools are those of these operations, each with the name given here (when known)."""
    if part.keys != [(op.path, op.method) for op in operations]:
        return False
    return names is None or all(values[0] == names[key] for values, key in zip(part.tools, part.keys))


def _consistent(here: _Watched, part: Part) -> bool:
    """Whether the helper's run is the one this process would have made after its own: each `$defs` name this
    process gave is given to the same definition there. (Two definitions can share a name, cut at 60 characters;
    the first one met keeps it, SchemaConverter.name: when the helper met first one this process did not.)"""
    named = here._named
    return all(named.get(name, ref) == ref for name, ref in part.named.items())
