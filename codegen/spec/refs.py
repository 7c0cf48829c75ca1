"""`$ref` resolution over the loaded documents, with no I/O.

A location in the spec is a `Ref(uri, pointer)`: the absolute URI of a document and a JSON pointer in
it. Problems point at these locations, and schema definitions are keyed by them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from .load import Documents
from ..problems import Level, Problem, join, unescape

MAX_CHAIN = 64  # a $ref to a $ref to ... longer than this is treated as a cycle
_MISSING = object()
_DROPPED = frozenset("\t\n\r")  # characters urljoin removes from a reference wherever they are


class Ref:
    """A location: a document's URI and a JSON pointer in it. A child's pointer is joined only when it is asked
    for (a problem reported there, a definition keyed by it): most locations a large spec's walk passes are not.
    Compared, hashed and ordered as (uri, pointer); never changed once made."""

    __slots__ = ("uri", "_pointer", "_parent", "_tokens")
    uri: str
    _pointer: str | None
    _parent: Ref | None
    _tokens: tuple[str | int, ...]

    def __init__(self, uri: str, pointer: str) -> None:
        self.uri = uri
        self._pointer = pointer
        self._parent = None
        self._tokens = ()

    @property
    def pointer(self) -> str:
        pointer = self._pointer
        if pointer is None:
            pending: list[Ref] = []  # up to the nearest location whose pointer is known (no recursion)
            ref: Ref = self
            while ref._pointer is None:
                pending.append(ref)
                assert ref._parent is not None
                ref = ref._parent
            pointer = ref._pointer
            for ref in reversed(pending):
                pointer = ref._pointer = join(pointer, *ref._tokens)
                ref._parent, ref._tokens = None, ()
        return pointer

    def child(self, *tokens: str | int) -> Ref:
        ref = Ref.__new__(Ref)
        ref.uri, ref._pointer, ref._parent, ref._tokens = self.uri, None, self, tokens
        return ref

    def _key(self) -> tuple[str, str]:
        return self.uri, self.pointer

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Ref) and self._key() == other._key())

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: Ref) -> bool:
        return self._key() < other._key()

    def __le__(self, other: Ref) -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: Ref) -> bool:
        return self._key() > other._key()

    def __ge__(self, other: Ref) -> bool:
        return self._key() >= other._key()

    def __repr__(self) -> str:
        return f"Ref(uri={self.uri!r}, pointer={self.pointer!r})"

    def __getstate__(self) -> tuple[str, str]:
        return self._key()

    def __setstate__(self, state: tuple[str, str]) -> None:
        self.__init__(*state)  # type: ignore[misc]


class RefError(Exception):
    def __init__(self, message: str, at: Ref) -> None:
        super().__init__(message)
        self.at = at


class Resolver:
    def __init__(self, documents: Documents) -> None:
        self.documents = documents
        self._targets: dict[tuple[str, str], Ref] = {}  # (ref, base uri) -> target: the same $refs recur
        self._nodes: dict[Ref, Any] = {}  # location -> the node there (see get)
        self._documents: dict[str, str] = {}  # see _document

    @property
    def root(self) -> Ref:
        return Ref(self.documents.root_uri, "")

    def problem(self, level: Level, message: str, at: Ref) -> Problem:
        """A problem located at `at`; the source is named only for documents other than the root."""
        source = "" if at.uri == self.documents.root_uri else at.uri
        return Problem(level, message, at.pointer, source)

    def get(self, at: Ref) -> Any:
        """The node at a location; raises RefError when the pointer leads nowhere. Remembered per location: a large
        API's operations and schemas look the same few thousand targets up again and again."""
        found = self._nodes.get(at, _MISSING)
        if found is _MISSING:
            found = self._nodes[at] = self._lookup(at)
        return found

    def _lookup(self, at: Ref) -> Any:
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
            if ref[:1] == "#" and len(ref) > 1 and not _DROPPED.intersection(ref):
                uri, fragment = self._document(base.uri), ref[1:]  # as urljoin and urldefrag split it
            else:
                uri, fragment = urldefrag(urljoin(base.uri, ref))
            found = self._targets[ref, base.uri] = Ref(uri or base.uri, unquote(fragment))
        return found

    def _document(self, uri: str) -> str:
        """The document a `$ref` that is a fragment alone (`#/components/...`, the most common) points into from the
        document at `uri`: urljoin and urldefrag rebuild `uri` from its parts, the same whatever the (non-empty)
        fragment, which is what follows the first `#`."""
        found = self._documents.get(uri)
        if found is None:
            found = self._documents[uri] = urldefrag(urljoin(uri, "#x"))[0]
        return found

    def resolve(self, node: Any, at: Ref) -> tuple[Any, Ref]:
        """Follow `$ref`s from `node` (found at `at`) to a node that is not a reference."""
        if not (isinstance(node, dict) and "$ref" in node):
            return node, at
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
