"""Read the spec (file or URL, YAML or JSON) and every document it references.

This is the only stage that reads from disk or the network. It returns a `Documents` bundle: the root
document and, by absolute URI, each external document a `$ref` points at, so that later stages resolve
references without any I/O.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlparse
from urllib.request import url2pathname

import yaml

from .problems import Problem, error

MAX_DOCUMENTS = 500  # external documents followed at most, so a ref cycle across URLs ends
URL_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class Documents:
    root_uri: str
    by_uri: Mapping[str, Any]  # absolute URI (no fragment) -> parsed document
    root_sha256: str = ""  # SHA-256 of the root document's bytes, when it was fetched from a URL

    @property
    def root(self) -> Any:
        return self.by_uri[self.root_uri]


def to_uri(source: str) -> str:
    """Turn a CLI argument (path or URL) into an absolute URI."""
    if urlparse(source).scheme in ("http", "https", "file"):
        return source
    return Path(os.path.abspath(source)).as_uri()


def load(source: str) -> tuple[Documents | None, list[Problem]]:
    root_uri = to_uri(source)
    problems: list[Problem] = []
    by_uri: dict[str, Any] = {}
    root_sha256 = ""
    pending = [root_uri]
    while pending and len(by_uri) < MAX_DOCUMENTS:
        uri = pending.pop()
        if uri in by_uri:
            continue
        try:
            data = read(uri)
            if uri == root_uri and urlparse(uri).scheme in ("http", "https"):
                root_sha256 = hashlib.sha256(data).hexdigest()
            document = parse(data, uri)
        except LoadError as exc:
            if uri == root_uri:
                return None, [error(str(exc))]
            problems.append(error(f"cannot load referenced document: {exc}", source=uri))
            by_uri[uri] = None
            continue
        by_uri[uri] = document
        for ref_uri in sorted(external_refs(document, uri)):
            if ref_uri not in by_uri:
                pending.append(ref_uri)
    if not isinstance(by_uri[root_uri], dict):
        return None, [error("the spec is not a JSON/YAML object (an OpenAPI document is a mapping)")]
    return Documents(root_uri, by_uri, root_sha256), problems


class LoadError(Exception):
    pass


def read(uri: str) -> bytes:
    parsed = urlparse(uri)
    if parsed.scheme in ("http", "https"):
        import httpx  # only needed for URLs

        try:
            response = httpx.get(uri, follow_redirects=True, timeout=URL_TIMEOUT)
        except httpx.HTTPError as exc:
            raise LoadError(f"cannot fetch {uri}: {exc}") from None
        if response.status_code >= 400:
            raise LoadError(f"cannot fetch {uri}: HTTP {response.status_code}")
        return response.content
    if parsed.scheme == "file":
        path = Path(url2pathname(parsed.path))
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise LoadError(f"no such file: {path}") from None
        except OSError as exc:
            raise LoadError(f"cannot read {path}: {exc.strerror}") from None
    raise LoadError(f"unsupported URI scheme in {uri!r} (use a file path or an http(s) URL)")


class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """Safe YAML loader that keeps timestamps as strings (JSON has no dates)."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse(data: bytes, uri: str) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LoadError(f"{uri} is not UTF-8 text") from None
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if not uri.endswith((".yaml", ".yml")):
                raise LoadError(f"{uri}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    try:
        return _jsonable(yaml.load(text, Loader=_Loader))  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise LoadError(f"{uri}: invalid YAML{where}: {reason}") from None


def _jsonable(node: Any) -> Any:
    """YAML allows keys and scalars JSON has not (int keys like `200:`, binary); make it JSON's data model."""
    if isinstance(node, dict):
        return {_key(k): _jsonable(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_jsonable(v) for v in node]
    if isinstance(node, bytes):
        return node.decode("latin-1")
    if isinstance(node, float) and node != node:  # .nan
        return None
    return node


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


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
