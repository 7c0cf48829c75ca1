"""openapi-spec-validator -> problems (never raises).

Findings are warnings: real-world specs are often slightly invalid and still usable, and the later
stages report (and skip) what they really cannot use. Each finding carries the JSON pointer of the
offending node.

The validator's findings (each message's first line and the path of its node) are kept in the disk cache
(emit/cache.py, `MCP_CODEGEN_CACHE`) under a hash of everything they depend on: the documents it is given (the
root document as validated, after overlays, and every other document read so far, as pickled), the root URI, the
packages installed beside the validator (their dist-info names carry the versions), its settings from the
environment and this module's own text. An unchanged spec (a CI re-run, `--check`) then skips the validator and
its imports (on a small spec, more time than all the rest of the run); a run that ended in a validator crash is not kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sys
from collections.abc import Callable, Mapping
from importlib.util import find_spec
from itertools import islice
from typing import Any
from urllib.parse import urldefrag

from ..emit import cache
from ..problems import Level, Problem, join

MAX_FINDINGS = 200  # a broken generator of specs can produce thousands; the first ones tell the story
KIND = "validate"  # the cache's folder for validation results
VALIDATORS = {"2": "OpenAPIV2SpecValidator", "3.0": "OpenAPIV30SpecValidator", "3.1": "OpenAPIV31SpecValidator"}


Finding = tuple[str, list[str | int]]  # the first line of one of the validator's messages; where, as path tokens


def validate(
    document: dict[str, Any],
    base_uri: str,
    retrieve: Callable[[str], Any] | None = None,
    documents: Mapping[str, Any] | None = None,
) -> list[Problem]:
    """`retrieve(uri)` gives the other documents `$ref`s name; the validator itself reads nothing (without
    `retrieve`, a `$ref` to another document stops validation with a warning). `documents`: every document
    `retrieve` can give, by URI (None: one it cannot), for the cache key; without it, nothing is cached."""
    dialect = _dialect(document)
    if dialect is None:
        return []  # normalize() reports what the document is not
    key = _key(document, base_uri, documents) if documents is not None and cache.cache_root() is not None else None
    findings = _decode(cache.lookup(KIND, key)) if key is not None else None
    if findings is None:
        findings, crash = _run(VALIDATORS[dialect], document, base_uri, retrieve)
        if crash is not None:
            return [crash]  # not kept: the next run tries again
        text = _encode(findings)
        if key is not None and text is not None:
            cache.store(KIND, key, text)
    problems = [_problem(message, path) for message, path in findings[:MAX_FINDINGS]]
    if len(findings) > MAX_FINDINGS:
        problems.append(Problem(Level.WARNING, f"more than {MAX_FINDINGS} validation findings; the rest are not shown"))
    return problems


def _dialect(document: dict[str, Any]) -> str | None:
    if str(document.get("swagger", "")).startswith("2"):
        return "2"
    if str(document.get("openapi", "")).startswith("3.1"):
        return "3.1"
    if str(document.get("openapi", "")).startswith("3"):
        return "3.0"
    return None


def _run(
    name: str, document: dict[str, Any], base_uri: str, retrieve: Callable[[str], Any] | None
) -> tuple[list[Finding], Problem | None]:
    """The validator's first findings (one more than are shown), or the warning saying why it did not finish."""
    # imported here: large specs skip validation by default, and the import alone is a third of a small run
    import openapi_spec_validator

    handler = _Handler(retrieve or _no_reads)
    handlers = {"<all_urls>": handler, "http": handler, "https": handler, "file": handler}
    validator_class: Any = getattr(openapi_spec_validator, name)
    validator_class = type(validator_class.__name__, (validator_class,), {"resolver_handlers": handlers})
    try:
        validator = validator_class(document, base_uri=base_uri)
        return [_finding(finding) for finding in islice(validator.iter_errors(), MAX_FINDINGS + 1)], None
    except RecursionError:
        return [], Problem(Level.WARNING, "openapi-spec-validator gave up (schemas nested too deeply); not validated")
    except Exception as exc:  # noqa: BLE001 - a validator crash on odd input must not stop generation
        return [], Problem(Level.WARNING, f"openapi-spec-validator failed ({type(exc).__name__}: {exc}); not validated")


class _Handler:
    def __init__(self, retrieve: Callable[[str], Any]) -> None:
        self.retrieve = retrieve

    def __call__(self, uri: str) -> Any:
        return self.retrieve(urldefrag(uri)[0])


def _no_reads(uri: str) -> Any:
    raise LookupError(f"{uri} is not read by the validator")


def _finding(finding: Any) -> Finding:
    path = getattr(finding, "absolute_path", None) or getattr(finding, "path", None) or ()
    return getattr(finding, "message", str(finding)).split("\n")[0], list(path)


def _problem(message: str, path: list[str | int]) -> Problem:
    if len(message) > 300:
        message = message[:297] + "..."
    return Problem(Level.WARNING, f"invalid spec: {message}", join("", *path))


def _key(document: dict[str, Any], base_uri: str, documents: Mapping[str, Any]) -> str | None:
    """The cache key of one validation; None when it cannot be made (then the validator runs)."""
    installed = _installed()
    if installed is None:
        return None
    digest = hashlib.sha256()

    def add(part: bytes) -> None:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)

    settings = sorted((k, v) for k, v in os.environ.items() if k.upper().startswith("OPENAPI_SPEC_VALIDATOR_"))
    for text in (KIND, sys.version, installed, repr(settings), _source(), base_uri):
        add(text.encode("utf-8", "surrogatepass"))
    try:
        add(pickle.dumps(document, protocol=5))
        for uri in sorted(documents):
            other = documents[uri]
            add(uri.encode("utf-8", "surrogatepass"))
            add(b"the root" if other is document else b"not read" if other is None else pickle.dumps(other, protocol=5))
    except Exception:  # noqa: BLE001 - a value pickle cannot write (or nesting too deep for it): no caching
        return None
    return digest.hexdigest()


def _installed() -> str | None:
    """The dist-info (and egg-info) names in the folder openapi-spec-validator is installed in: the versions of the
    validator and of the packages beside it (its dependencies, when installed together), without importing them."""
    try:
        spec = find_spec("openapi_spec_validator")
        locations = list(spec.submodule_search_locations or ()) if spec is not None else []
        if not locations:
            return None
        folder = os.path.dirname(os.path.abspath(locations[0]))
        names = sorted(name for name in os.listdir(folder) if name.endswith((".dist-info", ".egg-info")))
    except (OSError, ImportError, ValueError):
        return None
    return folder + "\n" + "\n".join(names)


def _source() -> str:
    """This module's text: which findings are kept, and how, is part of the key."""
    try:
        with open(__file__, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return ""


def _encode(findings: list[Finding]) -> str | None:
    """The findings as kept in the cache; None when a path token is neither text nor a number (not kept)."""
    if not all(type(token) in (str, int) for _, path in findings for token in path):
        return None
    return json.dumps(findings, ensure_ascii=False)


def _decode(text: str | None) -> list[Finding] | None:
    """Findings kept by `_encode`; None for no entry or one that cannot be read (a miss)."""
    if text is None:
        return None
    try:
        rows = json.loads(text)
    except ValueError:
        return None
    if not isinstance(rows, list) or not all(_is_finding(row) for row in rows):
        return None
    return [(message, path) for message, path in rows]


def _is_finding(row: Any) -> bool:
    return (
        isinstance(row, list)
        and len(row) == 2
        and type(row[0]) is str
        and isinstance(row[1], list)
        and all(type(token) in (str, int) for token in row[1])
    )
