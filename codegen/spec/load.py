"""Read the spec (file or URL, YAML or JSON) and, on demand, every document it references.

This is the only stage that reads from disk or the network, and every read follows spec/policy.py: refs
stay inside the spec's folder (or `--ref-root`), remote refs need `--allow-remote-refs` (except same-origin
refs of a spec loaded from a URL), and each read and parse is bounded. It returns a `Documents` bundle: the
root document and, by absolute URI, each external document a `$ref` points at. External documents are
read when a `$ref` to them is first resolved, so refs no operation reaches are never read.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlparse

from ..problems import Problem, error, join
from .fetch import read
from .parse import parse
from .policy import LoadError, ReadPolicy, refusal, relative_name

__all__ = ["Documents", "LoadError", "ReadPolicy", "external_refs", "iter_refs", "load", "open_documents", "to_uri"]

Transform = Callable[[str, Any], Any]


class Store(Mapping[str, Any]):
    """The root document and each document a `$ref` names, read on first lookup (None: it could not be read).
    Iterating reads every document reachable from the root."""

    def __init__(self, root_uri: str, root: Any, policy: ReadPolicy) -> None:
        self.root_uri, self.policy = root_uri, policy
        self.docs: dict[str, Any] = {root_uri: root}
        self.failures: dict[str, str] = {}  # uri -> why it could not be read
        self.reads = 0  # documents read besides the root

    def __getitem__(self, uri: str) -> Any:
        if uri not in self.docs:
            self._read(uri)
        return self.docs[uri]

    def __iter__(self) -> Iterator[str]:
        self.load_all()
        return iter(sorted(self.docs))

    def __len__(self) -> int:
        self.load_all()
        return len(self.docs)

    def _read(self, uri: str) -> None:
        self.docs[uri] = None
        reason = refusal(uri, self.root_uri, self.policy)
        if reason is None and self.reads >= self.policy.max_documents:
            reason = f"more than {self.policy.max_documents} documents are referenced, the limit"
        if reason is not None:
            self.failures[uri] = f"not read: {reason}"
            return
        self.reads += 1
        try:
            self.docs[uri] = parse(read(uri, self.policy), uri, self.policy)
        except LoadError as exc:
            self.failures[uri] = f"cannot be loaded: {exc}" + (f" (at #{exc.pointer} in it)" if exc.pointer else "")

    def load_all(self) -> None:
        pending, seen = [self.root_uri], set()
        while pending:
            uri = pending.pop()
            if uri in seen:
                continue
            seen.add(uri)
            document = self[uri]
            if document is not None:
                pending.extend(sorted(set(external_refs(document, uri)) - seen, reverse=True))

    def problems(self) -> list[Problem]:
        """One error per document that could not be read, at the first `$ref` found naming it."""
        if not self.failures:
            return []
        sites = _ref_sites({uri: doc for uri, doc in self.docs.items() if doc is not None}, set(self.failures))
        found = []
        for uri, reason in sorted(self.failures.items()):
            written, source, pointer = sites.get(uri, (relative_name(uri, self.root_uri), uri, ""))
            found.append(error(f"$ref {written!r} {reason}", pointer, "" if source == self.root_uri else source))
        return found


def _ref_sites(docs: Mapping[str, Any], wanted: set[str]) -> dict[str, tuple[str, str, str]]:
    """For each wanted document: the first `$ref` naming it (as written), the document and pointer it is in."""
    sites: dict[str, tuple[str, str, str]] = {}
    for base in sorted(docs):
        stack: list[tuple[Any, str]] = [(docs[base], "")]
        while stack and len(sites) < len(wanted):
            node, pointer = stack.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and not ref.startswith("#"):
                    target = urldefrag(urljoin(base, ref))[0]
                    if target in wanted and target not in sites:
                        sites[target] = (ref, base, join(pointer, "$ref"))
                stack.extend((value, join(pointer, key)) for key, value in reversed(node.items()))
            elif isinstance(node, list):
                stack.extend((value, join(pointer, index)) for index, value in reversed(list(enumerate(node))))
    return sites


class _Derived(Mapping[str, Any]):
    """The documents of `base` with the root replaced and `transform` applied to the others when first read."""

    def __init__(self, base: Mapping[str, Any], root_uri: str, root: Any, transform: Transform) -> None:
        self.base, self.root_uri, self.transform = base, root_uri, transform
        self.cache: dict[str, Any] = {root_uri: root}

    def __getitem__(self, uri: str) -> Any:
        if uri not in self.cache:
            document = self.base[uri]
            self.cache[uri] = None if document is None else self.transform(uri, document)
        return self.cache[uri]

    def __iter__(self) -> Iterator[str]:
        return iter(self.base)

    def __len__(self) -> int:
        return len(self.base)


@dataclass(frozen=True, slots=True)
class Documents:
    root_uri: str
    by_uri: Mapping[str, Any]  # absolute URI (no fragment) -> parsed document (None: could not be read)
    store: Store | None = None  # the reader behind by_uri when documents are read on demand
    root_sha256: str = ""  # SHA-256 of the root document's bytes, when it was fetched from a URL

    @property
    def root(self) -> Any:
        return self.by_uri[self.root_uri]

    def problems(self) -> list[Problem]:
        """The documents that could not be read so far, each at the `$ref` naming it."""
        return self.store.problems() if self.store is not None else []

    def reason(self, uri: str) -> str:
        """Why the document at `uri` is missing, naming the rule that refused it."""
        failure = self.store.failures.get(uri) if self.store is not None else None
        return f"$ref {self.relative(uri)!r} {failure}" if failure else f"document {uri} could not be loaded"

    def relative(self, uri: str) -> str:
        """The document's name relative to the root spec: the same wherever the spec is."""
        return relative_name(uri, self.root_uri)

    def replace_root(self, root: Any, transform: Transform) -> Documents:
        derived = _Derived(self.by_uri, self.root_uri, root, transform)
        return Documents(self.root_uri, derived, self.store, self.root_sha256)

    def loaded(self, uri: str) -> Any:
        """An original document already read (for the validator); it reads nothing more."""
        document = self.store.docs.get(uri) if self.store is not None else self.by_uri.get(uri)
        if document is None:
            raise LoadError(f"{self.relative(uri)} is not read: no operation uses it, or it could not be loaded")
        return document


def to_uri(source: str) -> str:
    """Turn a CLI argument (path or URL) into an absolute URI."""
    if urlparse(source).scheme in ("http", "https", "file"):
        return source
    return Path(os.path.abspath(source)).as_uri()


def open_documents(source: str, policy: ReadPolicy | None = None) -> tuple[Documents | None, list[Problem]]:
    """Read the root spec; the documents its `$ref`s name are read when first looked up."""
    policy = policy or ReadPolicy()
    root_uri = to_uri(source)
    try:
        data = read(root_uri, policy)
        document = parse(data, root_uri, policy)
    except LoadError as exc:
        return None, [error(str(exc), exc.pointer)]
    if not isinstance(document, dict):
        return None, [error("the spec is not a JSON/YAML object (an OpenAPI document is a mapping)")]
    store = Store(root_uri, document, policy)
    remote = urlparse(root_uri).scheme in ("http", "https")
    return Documents(root_uri, store, store, hashlib.sha256(data).hexdigest() if remote else ""), []


def load(source: str, policy: ReadPolicy | None = None) -> tuple[Documents | None, list[Problem]]:
    """Read the root spec and every document reachable from it through `$ref`s."""
    documents, problems = open_documents(source, policy)
    if documents is None or documents.store is None:
        return documents, problems
    documents.store.load_all()
    return documents, documents.problems()


def external_refs(document: Any, base_uri: str) -> Iterator[str]:
    """Absolute URIs (without fragment) of the other documents `document` references."""
    for ref in iter_refs(document):
        target, _ = urldefrag(urljoin(base_uri, ref))
        if target and target != base_uri:
            yield target


def iter_refs(node: Any) -> Iterator[str]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                yield ref
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
