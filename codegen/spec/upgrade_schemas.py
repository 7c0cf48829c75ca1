"""Swagger 2.0 schemas and references in the 3.0 shape: `type: file`, `x-nullable`, `discriminator`, and
`$ref`s rewritten from 2.0 locations (#/definitions/...) to 3.0 components, across documents too."""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import urldefrag, urljoin

REF_PREFIXES = (
    ("#/definitions/", "#/components/schemas/"),
    ("#/parameters/", "#/components/parameters/"),
    ("#/responses/", "#/components/responses/"),
)


def upgrade_schema(node: Any) -> Any:
    """A 2.0 schema (body, definition, response) -> 3.0: refs rewritten, 2.0-only keywords translated."""
    return _fixschema(rewrite_refs(copy.deepcopy(node)))


def _fixschema(node: Any) -> Any:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            stack.extend(current)
            continue
        if not isinstance(current, dict):
            continue
        if current.get("type") == "file":
            current["type"] = "string"
            current["format"] = "binary"
        if "x-nullable" in current and "nullable" not in current:
            current["nullable"] = current["x-nullable"] is True
        if isinstance(current.get("discriminator"), str):
            current["discriminator"] = {"propertyName": current["discriminator"]}
        for key, value in current.items():
            if key in ("properties", "patternProperties", "definitions") and isinstance(value, dict):
                stack.extend(value.values())
            elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
                stack.append(value)
    return node


def rewrite_refs(node: Any) -> Any:
    """`#/definitions/X` -> `#/components/schemas/X` (and parameters, responses), in place."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str):
                for old, new in REF_PREFIXES:
                    if ref.startswith(old):
                        current["$ref"] = new + ref[len(old) :]
                        break
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return node


def refs_into_root(document: Any, uri: str, root_uri: str) -> Any:
    """Another document of the bundle, with its `$ref`s to the 2.0 root's definitions, parameters and responses
    pointed at where the upgrade moved them (`root.yaml#/definitions/X` -> `root.yaml#/components/schemas/X`).
    Documents without such references are returned as they are; the others are copied first."""
    if uri == root_uri:
        return document

    def moved(ref: str) -> str | None:
        target, fragment = urldefrag(urljoin(uri, ref))
        if target != root_uri:
            return None
        for old, new in REF_PREFIXES:
            if ("#" + fragment).startswith(old):
                return root_uri + new + fragment[len(old) - 1 :]
        return None

    copied: Any = None
    stack = [document]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if isinstance(current.get("$ref"), str) and moved(current["$ref"]) is not None:
                copied = copy.deepcopy(document)
                break
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    if copied is None:
        return document
    stack = [copied]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if isinstance(current.get("$ref"), str):
                current["$ref"] = moved(current["$ref"]) or current["$ref"]
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return copied


def absolute_refs(node: Any, base_uri: str) -> Any:
    """Refs inside a node copied out of another document, made absolute so they still resolve."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if isinstance(current.get("$ref"), str):
                current["$ref"] = urljoin(base_uri, current["$ref"])
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return node
