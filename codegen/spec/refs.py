"""`$ref` resolution over the loaded documents, with no I/O.

A location in the spec is a `Ref(uri, pointer)`: the absolute URI of a document and a JSON pointer in
it. Problems point at these locations, and schema definitions are keyed by them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from .load import Documents
from ..problems import Level, Problem, join, unescape

MAX_CHAIN = 64  # a $ref to a $ref to ... longer than this is treated as a cycle


@dataclass(frozen=True, slots=True, order=True)
class Ref:
    uri: str
    pointer: str

    def child(self, *tokens: str | int) -> Ref:
        return Ref(self.uri, join(self.pointer, *tokens))


class RefError(Exception):
    def __init__(self, message: str, at: Ref) -> None:
        super().__init__(message)
        self.at = at


class Resolver:
    def __init__(self, documents: Documents) -> None:
        self.documents = documents
        self._targets: dict[tuple[str, str], Ref] = {}  # (ref, base uri) -> target: the same $refs recur

    @property
    def root(self) -> Ref:
        return Ref(self.documents.root_uri, "")

    def problem(self, level: Level, message: str, at: Ref) -> Problem:
        """A problem located at `at`; the source is named only for documents other than the root."""
        source = "" if at.uri == self.documents.root_uri else at.uri
        return Problem(level, message, at.pointer, source)

    def get(self, at: Ref) -> Any:
        """The node at a location; raises RefError when the pointer leads nowhere."""
        document = self.documents.by_uri.get(at.uri)
        if document is None:
            raise RefError(self.documents.reason(at.uri), at)
        node = document
        if not at.pointer:
            return node
        if not at.pointer.startswith("/"):
            raise RefError(f"invalid JSON pointer {at.pointer!r}", at)
        for raw in at.pointer[1:].split("/"):
            token = unescape(raw)
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise RefError(f"$ref target {at.uri}#{at.pointer} does not exist", at)
        return node

    def target(self, ref: str, base: Ref) -> Ref:
        """Where a `$ref` string found in the document at `base` points."""
        found = self._targets.get((ref, base.uri))
        if found is None:
            uri, fragment = urldefrag(urljoin(base.uri, ref))
            found = self._targets[ref, base.uri] = Ref(uri or base.uri, unquote(fragment))
        return found

    def resolve(self, node: Any, at: Ref) -> tuple[Any, Ref]:
        """Follow `$ref`s from `node` (found at `at`) to a node that is not a reference."""
        seen: set[Ref] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            target = self.target(node["$ref"], at)
            if target in seen or len(seen) >= MAX_CHAIN:
                raise RefError(f"$ref cycle through {target.uri}#{target.pointer}", at)
            seen.add(target)
            try:
                node = self.get(target)
            except RefError as exc:  # report where the broken $ref is written, not where it points
                raise RefError(str(exc), at) from None
            at = target
        return node, at
