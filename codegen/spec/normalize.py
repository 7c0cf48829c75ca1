"""Spec (an OpenAPI 3.x document) -> the intermediate representation in model.py.

Walks paths and methods in a fixed, sorted order so that the result never depends on the key order of
the input. A part that cannot be understood is reported; an operation that cannot be used is skipped
with an error, and everything else goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..problems import Level, Problem
from .bodies import BodiesAndResponses
from .model import METHODS, Api, Dialect, Operation
from .parameters import Parameters
from .paths import dot_segment
from .refs import Ref, Resolver
from .security import ServersAndSecurity
from .walker import Skip, text


def normalize(document: dict[str, Any], resolver: Resolver) -> tuple[Api | None, list[Problem]]:
    return _Normalizer(document, resolver).run()


class _Normalizer(ServersAndSecurity, Parameters, BodiesAndResponses):
    """The document and its paths; each part of an operation is read by the mixin of its module."""

    def run(self) -> tuple[Api | None, list[Problem]]:
        version = self.doc.get("openapi")
        if not isinstance(version, str) or not version.startswith("3."):
            found = f"openapi: {version!r}" if "openapi" in self.doc else "no 'openapi' field"
            self.problems.append(
                self.resolver.problem(Level.ERROR, f"not an OpenAPI 3.x document ({found})", self.root)
            )
            return None, self.problems
        dialect: Dialect = "3.1" if version.startswith("3.1") else "3.0"
        info = self.doc.get("info") if isinstance(self.doc.get("info"), dict) else {}
        assert isinstance(info, dict)
        operations = tuple(self.operations())
        api = Api(
            title=text(info.get("title")) or "API",
            version=text(info.get("version")) or "0",
            description=text(info.get("description")),
            dialect=dialect,
            servers=self.servers(self.doc.get("servers"), self.root.child("servers")),
            operations=operations,
            security_schemes=tuple(self.security_schemes()),
        )
        return api, self.problems

    def operations(self) -> Iterator[Operation]:
        paths = self.doc.get("paths")
        paths_at = self.root.child("paths")
        if paths is None:
            return
        if not isinstance(paths, dict):
            self.problems.append(self.resolver.problem(Level.ERROR, "'paths' is not an object", paths_at))
            return
        for path in sorted(paths):
            item_at = paths_at.child(path)
            try:
                item, item_at = self.deref(paths[path], item_at, f"path item {path}")
            except Skip as skip:
                self.problems.append(skip.problem)
                continue
            if not isinstance(item, dict):
                self.problems.append(self.resolver.problem(Level.ERROR, "path item is not an object", item_at))
                continue
            if not path.startswith("/"):
                self.warn(f"path {path!r} does not start with '/'", paths_at.child(path))
            segment = dot_segment(path)
            for method in METHODS:
                if method not in item:
                    continue
                op_at = item_at.child(method)
                if segment is not None:
                    self.warn(
                        f"{method.upper()} {path}: the path has a {segment!r} segment"
                        " (URL normalization would send the call to another path); skipped",
                        op_at,
                    )
                    continue
                try:
                    yield self.operation(path, method, item, item[method], op_at, item_at)
                except Skip as skip:
                    self.problems.append(skip.problem)

    def operation(self, path: str, method: str, item: dict[str, Any], op: Any, at: Ref, item_at: Ref) -> Operation:
        if not isinstance(op, dict):
            raise self.skip(f"{method.upper()} {path}: the operation is not an object; skipped", at)
        params, fixed = self.fixed_values(path, self.parameters(path, item, op, at, item_at), at)
        responses = tuple(self.responses(op.get("responses"), at.child("responses")))
        operation_id = op.get("operationId")
        if operation_id is not None and not isinstance(operation_id, str):
            self.warn("operationId is not a string; ignored", at.child("operationId"))
            operation_id = None
        return Operation(
            method=method.upper(),
            path=path,
            operation_id=operation_id or None,
            summary=text(op.get("summary")).strip(),
            description=text(op.get("description")).strip(),
            tags=(
                tuple(str(t) for t in op.get("tags", ()) if isinstance(t, (str, int)))
                if isinstance(op.get("tags"), list)
                else ()
            ),
            deprecated=op.get("deprecated") is True,
            parameters=params,
            body=self.body(op.get("requestBody"), at.child("requestBody")) if "requestBody" in op else None,
            responses=responses,
            security=self.security(
                op.get("security", self.doc.get("security")),
                at.child("security") if "security" in op else self.root.child("security"),
            ),
            extensions=tuple(sorted((k, v) for k, v in op.items() if k.startswith("x-mcp-"))),
            at=at,
            fixed=fixed,
        )
