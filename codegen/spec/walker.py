"""The base of the normalizer: the document, the resolver, and how problems are reported.

Each part of the spec (servers and security, parameters, bodies, responses) is read by a mixin of its own
module on top of `Walker`; `normalize._Normalizer` combines them and walks the paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..problems import Level, Problem
from .content import content_key
from .refs import Ref, RefError, Resolver

T = TypeVar("T")


class Skip(Exception):
    """The operation cannot be used; the problem says why."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class Walker:
    """Shared state of one normalization: the document, its resolver and the problems found so far."""

    def __init__(self, document: dict[str, Any], resolver: Resolver) -> None:
        self.doc = document
        self.resolver = resolver
        self.root = resolver.root
        self.problems: list[Problem] = []
        self._warned_security: set[str] = set()  # pointers of requirements already reported
        self._by_ref: dict[tuple[str, ...], Any] = {}  # see shared
        self._by_content: dict[bytes, Any] = {}  # see canonical
        self._path_parameters: dict[tuple[int, int, int], tuple[Any, Ref, Any]] = {}  # see Parameters._declared

    def warn(self, message: str, at: Ref) -> None:
        self.problems.append(self.resolver.problem(Level.WARNING, message, at))

    def skip(self, message: str, at: Ref) -> Skip:
        return Skip(self.resolver.problem(Level.ERROR, message, at))

    def shared(self, kind: str, node: Any, at: Ref, make: Callable[[], T]) -> T:
        """`make()` for `node` found at `at`; when `node` is a `$ref`, made once for every place that has the same
        reference (a large API's operations share their parameters and error responses through components).
        What is made depends only on the reference's target, except for where its problems are reported: made
        again wherever it reported any."""
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not isinstance(ref, str):
            return make()
        key = (kind, ref, at.uri)
        if key in self._by_ref:
            found: T = self._by_ref[key]
            return found
        reported = len(self.problems)
        made = make()
        if len(self.problems) == reported:
            self._by_ref[key] = made
        return made

    def canonical(self, node: Any) -> Any:
        """The first node read with the same content as `node` (or `node`): the operations that declare the same
        inline schema then hold one object, and the document's copies are freed with it."""
        key = content_key(node)
        if key is None:
            return node
        return self._by_content.setdefault(key, node)

    def deref(self, node: Any, at: Ref, what: str) -> tuple[Any, Ref]:
        try:
            return self.resolver.resolve(node, at)
        except RefError as exc:
            raise self.skip(f"{what}: {exc}", exc.at) from None


def text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
